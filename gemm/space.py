# The BEAST GEMM search space (Luszczek et al., seed 004, Figs. 8-15) in solverspace's language.
#
# This is a space file, not a Python module: solverspace executes it with the language in scope
# (`solverspace count gemm`, `Space.load("gemm")`). It follows the paper figure by figure, with
# the two slips DESIGN.md notes fixed:
#   - Fig. 11's dim_vec swaps the names `arithmetic` and `precision`; we implement the intent
#     (double-real {1, 2}, double-complex {1}, single-real {1, 4}, single-complex {1, 2});
#   - the paper's code is Python 2, where `/` on integers floors: we write `//` for integer
#     division. `low_fmas` keeps exact `/`: floor(x) < n equals x < n for an integer n.
# The paper's @condition functions return True to *reject*; here they are @reject_if.
from solverspace.gemm.devices import DEVICES, SCALED_DEVICES, get_device

# --- Fig. 10: settings ------------------------------------------------------------------------
device = setting("k40c", choices=[*DEVICES, *SCALED_DEVICES], doc="GPU whose limits prune the space (gemm/devices.py)")
precision = setting("double", choices=["single", "double"])
arithmetic = setting("real", choices=["real", "complex"])
trans_a = setting(0, choices=[0, 1], doc="A is transposed")
trans_b = setting(0, choices=[0, 1], doc="B is transposed")
shared_memory = setting("default", choices=["default", "opt-in"],
                        doc="per-block shared memory limit: the 48 KiB default or the architecture's opt-in maximum")

# --- Figs. 8 and 9: device values (each one overridable: an explicit --set wins) --------------
_dev = get_device(device)
max_threads_per_block = _dev.max_threads_per_block
max_threads_dim_x = _dev.max_threads_dim_x
max_threads_dim_y = _dev.max_threads_dim_y
if shared_memory == "opt-in":
    max_shared_mem_per_block = _dev.max_shared_mem_per_block_optin
else:
    max_shared_mem_per_block = _dev.max_shared_mem_per_block
warp_size = _dev.warp_size
max_regs_per_block = _dev.max_regs_per_block
max_threads_per_multi_processor = _dev.max_threads_per_multi_processor
cudamajor = _dev.cudamajor
cudaminor = _dev.cudaminor
max_registers_per_multi_processor = _dev.max_registers_per_multi_processor
max_shmem_per_multi_processor = _dev.max_shmem_per_multi_processor
max_blocks_per_multi_processor = _dev.max_blocks_per_multi_processor
max_warps_per_multi_processor = _dev.max_warps_per_multi_processor
max_registers_per_thread = _dev.max_registers_per_thread
float_size = 4

# --- Fig. 11: the 15 iterators ----------------------------------------------------------------
dim_m = range(1, max_threads_dim_x + 1)
dim_n = range(1, max_threads_dim_y + 1)


@iterator
def blk_m(dim_m):
    return range(dim_m, max_threads_dim_x + 1, dim_m)


@iterator
def blk_n(dim_n):
    return range(dim_n, max_threads_dim_y + 1, dim_n)


blk_k = range(1, min(max_threads_dim_x, max_threads_dim_y) + 1)


@iterator
def dim_vec(arithmetic, precision):
    if precision == "double":
        if arithmetic == "real":
            return range(1, 3)
        else:
            return 1
    else:
        if arithmetic == "real":
            return range(1, 5, 3)
        else:
            return range(1, 3)


@iterator
def vec_mul(dim_vec):
    if dim_vec == 1:
        return 0
    else:
        return range(0, 2)


@iterator
def dim_m_a(blk_m, blk_k):
    if trans_a == 0:
        return range(1, blk_m // dim_vec + 1)
    else:
        return range(1, blk_k // dim_vec + 1)


@iterator
def dim_n_a(blk_m, blk_k):
    if trans_a == 0:
        return range(1, blk_k + 1)
    else:
        return range(1, blk_m + 1)


@iterator
def dim_m_b(blk_k, blk_n):
    if trans_b == 0:
        return range(1, blk_k // dim_vec + 1)
    else:
        return range(1, blk_n // dim_vec + 1)


@iterator
def dim_n_b(blk_k, blk_n):
    if trans_b == 0:
        return range(1, blk_n + 1)
    else:
        return range(1, blk_k + 1)


tex_a = range(0, 2)
tex_b = range(0, 2)
shmem_l1 = range(0, 2)
shmem_banks = range(0, 2)

# --- Fig. 12: derived values ------------------------------------------------------------------
threads_per_block = dim_m * dim_n
thr_m = blk_m // dim_m
thr_n = blk_n // dim_n
regs_per_thread = thr_m * thr_n
if precision == "double":
    regs_per_thread = regs_per_thread * 2
if arithmetic == "complex":
    regs_per_thread = regs_per_thread * 2
regs_per_block = regs_per_thread * threads_per_block
shmem_per_block = blk_k * (blk_m + blk_n) * float_size
if precision == "double":
    shmem_per_block = shmem_per_block * 2
if arithmetic == "complex":
    shmem_per_block = shmem_per_block * 2
max_blocks_by_regs = max_registers_per_multi_processor // regs_per_block
max_blocks_by_regs = min(max_blocks_by_regs, max_blocks_per_multi_processor)
max_threads_by_regs = max_blocks_by_regs * threads_per_block
max_blocks_by_shmem = max_shmem_per_multi_processor // shmem_per_block
max_blocks_by_shmem = min(max_blocks_by_shmem, max_blocks_per_multi_processor)
max_threads_by_shmem = max_blocks_by_shmem * threads_per_block
loads_per_thread = (thr_m + thr_n) * blk_k // dim_vec
loads_per_block = loads_per_thread * threads_per_block
if arithmetic == "complex":
    loads_per_block = loads_per_block * 2
fmas_per_thread = thr_m * thr_n * blk_k
fmas_per_block = fmas_per_thread * threads_per_block
if arithmetic == "complex":
    fmas_per_block = fmas_per_block * 4


# --- Fig. 13: hard constraints ----------------------------------------------------------------
@reject_if
def over_max_threads(threads_per_block):
    return threads_per_block > max_threads_per_block


@reject_if
def over_max_regs_per_thread(regs_per_thread):
    return regs_per_thread > max_registers_per_thread


@reject_if
def over_max_regs_per_block(regs_per_block):
    return regs_per_block > max_regs_per_block


@reject_if
def over_max_shmem(shmem_per_block):
    return shmem_per_block > max_shared_mem_per_block


# --- Fig. 14: soft constraints ----------------------------------------------------------------
min_threads_per_multi_processor = 256
min_fmas_per_load = 2


@reject_if
def low_occupancy_regs(max_threads_by_regs):
    return max_threads_by_regs < min_threads_per_multi_processor


@reject_if
def low_occupancy_shmem(max_threads_by_shmem):
    return max_threads_by_shmem < min_threads_per_multi_processor


@reject_if
def low_fmas(loads_per_block, fmas_per_block):
    return fmas_per_block / loads_per_block < min_fmas_per_load


@reject_if
def partial_warps(threads_per_block):
    return threads_per_block % warp_size != 0


# --- Fig. 15: correctness constraints ---------------------------------------------------------
@reject_if
def cant_reshape_a1(dim_m_a, dim_n_a, threads_per_block):
    return (dim_m_a * dim_n_a != threads_per_block)


@reject_if
def cant_reshape_b1(dim_m_b, dim_n_b, threads_per_block):
    return (dim_m_b * dim_n_b != threads_per_block)


@reject_if
def cant_reshape_a2(blk_m, blk_k, dim_m_a, dim_n_a):
    return (trans_a == 0 and
            ((blk_m % (dim_m_a * dim_vec) != 0) or (blk_k % dim_n_a != 0))) \
        or \
        (trans_a != 0 and
         ((blk_k % (dim_m_a * dim_vec) != 0) or
          (blk_m % dim_n_a != 0)))


@reject_if
def cant_reshape_b2(blk_k, blk_n, dim_m_b, dim_n_b):
    return (trans_b == 0 and
            ((blk_k % (dim_m_b * dim_vec) != 0) or (blk_n % dim_n_b != 0))) \
        or \
        (trans_b != 0 and
         ((blk_n % (dim_m_b * dim_vec) != 0) or
          (blk_k % dim_n_b != 0)))
