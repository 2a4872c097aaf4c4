"""Device limits for the GEMM space of the BEAST paper (section IX.B, Figs. 8 and 9).

The GEMM search space prunes kernel configurations against the limits of the
target GPU.  The paper splits those limits in two groups:

* Fig. 8: values a device query (``cudaGetDeviceProperties``) returns --
  threads per block, block dimensions, shared memory and registers per block
  and per multiprocessor, warp size, compute capability;
* Fig. 9: values looked up by compute capability (``MaxBlocksPerMultiProcessor``,
  ``MaxWarpsPerMultiProcessor``, ``MaxRegistersPerThread``).

This module gives both groups, under the paper's names, for a small table of
devices: the Tesla K40c the paper used (Kepler, sm_35), plus a device for
each NVIDIA architecture from Maxwell (sm_52) to Hopper (sm_90): M40, P100,
V100, T4, A100, A10 and RTX 3090 (both sm_86), L4, H100.

Where the values come from
--------------------------
Every numeric limit depends only on the compute capability, so every value
lives in exactly one place: ``_COMMON_LIMITS`` (limits equal on all the
capabilities listed here) or ``_CC_LIMITS`` (keyed by ``(major, minor)``).
A device entry only names the part and its compute capability.

The source of each value is NVIDIA's documentation:

* [PG]   CUDA C++ Programming Guide, appendix "Compute Capabilities",
         section "Features and Technical Specifications", table "Technical
         Specifications per Compute Capability" (CUDA 12.x layout; the
         CUDA 13 guide splits the same rows over several "... per Compute
         Capability" tables, e.g. "Memory Information per Compute
         Capability").  Rows used: "Maximum number of threads per
         block", "Maximum x- or y-dimension of a block", "Warp size",
         "Maximum number of resident blocks per SM", "Maximum number of
         resident warps per SM", "Maximum number of resident threads per SM",
         "Number of 32-bit registers per SM", "Maximum number of 32-bit
         registers per thread block", "Maximum number of 32-bit registers per
         thread", "Maximum amount of shared memory per SM", "Maximum amount of
         shared memory per thread block" (footnote: more than 48 KB per block
         needs dynamic shared memory and an explicit opt-in).
* [MTG]  Maxwell Tuning Guide, sections "Occupancy" and "Shared Memory
         Capacity".
* [PTG]  Pascal Tuning Guide, sections "Occupancy" and "Shared Memory
         Capacity".
* [VTG]  Volta Tuning Guide, sections "Occupancy" and "Unified Shared
         Memory/L1/Texture Cache".
* [TTG]  Turing Tuning Guide, sections "Occupancy" and "Unified Shared
         Memory/L1/Texture Cache".
* [ATG]  NVIDIA Ampere GPU Architecture Tuning Guide, sections "Occupancy"
         and "Unified Shared Memory/L1/Texture Cache".
* [ADATG] NVIDIA Ada GPU Architecture Tuning Guide, sections "Occupancy" and
         "Unified Shared Memory/L1/Texture Cache".
* [HTG]  NVIDIA Hopper Tuning Guide, sections "Occupancy" and "Unified Shared
         Memory/L1/Texture Cache".
  (Section numbers differ between releases of these guides, so only the
  section titles are given.  Tuning-guide statements below are paraphrased.)
* [BEAST] the paper itself, Figs. 8 and 9, for the Tesla K40c (sm_35).  Its
         numbers agree with [PG]'s column 3.5; the test suite checks that the
         table reproduces them exactly.

Cross-check: NVIDIA's own CCCL library encodes the same per-SM numbers for
sm_60/70/75/80/86/89/90 in ``cudax/include/cuda/experimental/__device/
arch_traits.cuh`` (max shared memory per SM, resident blocks/threads/warps
per SM, opt-in = per-SM maximum minus 1 KB reserved from sm_80 on); every
value below agrees with it.

Conventions
-----------
* All sizes are in bytes (1 KB = 1024 bytes, as in NVIDIA's tables).
* ``max_shared_mem_per_block`` is the per-block limit *without* opt-in,
  i.e. what ``cudaDeviceProp::sharedMemPerBlock`` reports: 48 KB everywhere.
* ``max_shared_mem_per_block_optin`` is the architecture's opt-in maximum
  (``cudaDeviceProp::sharedMemPerBlockOptin``); where there is no opt-in
  (before Volta) it equals the default.
* Where shared memory per SM is configurable (carveout), the maximum
  configuration is used, as [PG]'s "Maximum amount of shared memory per SM"
  row does.
"""
from __future__ import annotations

from solverspace.core.records import Record

__all__ = ["Device", "DEVICES", "get_device"]

KB = 1024  # NVIDIA's tables use binary kilobytes.


class Device(Record):
    """Limits of one GPU, under the names of the BEAST paper (Figs. 8 and 9)."""

    __match_args__ = ("name", "description", "cudamajor", "cudaminor", "max_threads_per_block",
                      "max_threads_dim_x", "max_threads_dim_y", "max_shared_mem_per_block",
                      "max_shared_mem_per_block_optin", "warp_size", "max_regs_per_block",
                      "max_threads_per_multi_processor", "max_registers_per_multi_processor",
                      "max_shmem_per_multi_processor", "max_blocks_per_multi_processor",
                      "max_warps_per_multi_processor", "max_registers_per_thread")

    name: str                 # table key, lower case, e.g. "k40c"
    description: str          # e.g. "NVIDIA Tesla K40c (Kepler GK110B, sm_35)"
    cudamajor: int
    cudaminor: int
    max_threads_per_block: int
    max_threads_dim_x: int
    max_threads_dim_y: int
    max_shared_mem_per_block: int          # default per-block limit without opt-in (bytes), 49152 for all
    max_shared_mem_per_block_optin: int    # architecture's opt-in maximum per block (bytes); equals the default where no opt-in exists
    warp_size: int
    max_regs_per_block: int
    max_threads_per_multi_processor: int
    max_registers_per_multi_processor: int
    max_shmem_per_multi_processor: int     # bytes
    max_blocks_per_multi_processor: int
    max_warps_per_multi_processor: int
    max_registers_per_thread: int

    def __init__(self, name: str, description: str, cudamajor: int, cudaminor: int, max_threads_per_block: int,
                 max_threads_dim_x: int, max_threads_dim_y: int, max_shared_mem_per_block: int,
                 max_shared_mem_per_block_optin: int, warp_size: int, max_regs_per_block: int,
                 max_threads_per_multi_processor: int, max_registers_per_multi_processor: int,
                 max_shmem_per_multi_processor: int, max_blocks_per_multi_processor: int,
                 max_warps_per_multi_processor: int, max_registers_per_thread: int):
        given = locals()
        for name_ in self.__match_args__:
            object.__setattr__(self, name_, given[name_])

    def values(self) -> dict[str, int]:
        """The numeric limits under the paper's names (everything but name and description)."""
        return {name: getattr(self, name) for name in self.__match_args__[2:]}


# ---------------------------------------------------------------------------
# Limits that are the same on every compute capability in _CC_LIMITS
# (3.5, 5.2, 6.0, 7.0, 7.5, 8.0, 8.6, 8.9, 9.0).
# ---------------------------------------------------------------------------
_COMMON_LIMITS: dict[str, int] = {
    # [PG] "Maximum number of threads per block": 1024 for all listed CCs.
    "max_threads_per_block": 1024,
    # [PG] "Maximum x- or y-dimension of a block": 1024 for all listed CCs.
    "max_threads_dim_x": 1024,
    "max_threads_dim_y": 1024,
    # [PG] "Maximum amount of shared memory per thread block", footnote:
    # allocations above 48 KB per block need dynamic shared memory and an
    # explicit opt-in (cudaFuncSetAttribute), so the default limit -- the one
    # cudaDeviceProp::sharedMemPerBlock reports -- is 48 KB on all CCs.
    # [BEAST] Fig. 8: max_shared_mem_per_block = 49152 on the K40c.
    "max_shared_mem_per_block": 48 * KB,
    # [PG] "Warp size": 32 for all CCs.
    "warp_size": 32,
    # [PG] "Maximum number of 32-bit registers per thread": 255 for CC 3.5
    # and later (63 on 3.0/3.2, which are not listed here).  The tuning
    # guides' "Occupancy" sections ([MTG] ... [HTG]) also give 255.
    # [BEAST] Fig. 9 MaxRegistersPerThread[3][5] = 255.
    "max_registers_per_thread": 255,
}

# ---------------------------------------------------------------------------
# Limits that vary with the compute capability.  One entry per CC; each field
# names its source.  "blocks/SM", "warps/SM", "threads/SM", "regs/SM",
# "regs/block", "smem/SM" and "smem/block" are the [PG] rows listed in the
# module docstring; the tuning-guide sections confirm them.
# ---------------------------------------------------------------------------
_CC_LIMITS: dict[tuple[int, int], dict[str, int]] = {
    # Kepler GK110/GK110B.
    (3, 5): {
        # [PG] column 3.5, "Maximum number of resident blocks per SM": 16.
        # [BEAST] Fig. 9 MaxBlocksPerMultiProcessor[3][5] = 16.
        "max_blocks_per_multi_processor": 16,
        # [PG] 3.5 "Maximum number of resident warps per SM": 64.
        # [BEAST] Fig. 9 MaxWarpsPerMultiProcessor[3][5] = 64.
        "max_warps_per_multi_processor": 64,
        # [PG] 3.5 "Maximum number of resident threads per SM": 2048.
        # [BEAST] Fig. 8 max_threads_per_multi_processor = 2048.
        "max_threads_per_multi_processor": 2048,
        # [PG] 3.5 "Number of 32-bit registers per SM": 64 K.
        # [BEAST] Fig. 8 max_registers_per_multi_processor = 65536.
        "max_registers_per_multi_processor": 64 * KB,
        # [PG] 3.5 "Maximum number of 32-bit registers per thread block": 64 K.
        # [BEAST] Fig. 8 max_regs_per_block = 65536.
        "max_regs_per_block": 64 * KB,
        # [PG] 3.5 "Maximum amount of shared memory per SM": 48 KB.  (The SM
        # has 64 KB of L1/shared memory, split 16/48, 32/32 or 48/16 by
        # cudaFuncSetCacheConfig; 48 KB is the largest shared part.)
        # [BEAST] Fig. 8 max_shmem_per_multi_processor = 49152.
        "max_shmem_per_multi_processor": 48 * KB,
        # [PG] 3.5 "Maximum amount of shared memory per thread block": 48 KB.
        # There is no opt-in before Volta, so opt-in = default.
        "max_shared_mem_per_block_optin": 48 * KB,
    },
    # Maxwell GM200/GM204.
    (5, 2): {
        # [PG] 5.2 blocks/SM: 32.  [MTG] Occupancy: the limit on active thread
        # blocks per SM doubled over Kepler's SMX, to 32.
        "max_blocks_per_multi_processor": 32,
        # [PG] 5.2 warps/SM: 64.  [MTG] Occupancy: 64 concurrent warps per SM.
        "max_warps_per_multi_processor": 64,
        # [PG] 5.2 threads/SM: 2048.
        "max_threads_per_multi_processor": 2048,
        # [PG] 5.2 regs/SM: 64 K.  [MTG] Occupancy: 64K 32-bit registers per SM.
        "max_registers_per_multi_processor": 64 * KB,
        # [PG] 5.2 regs/block: 64 K (32 K only on 5.3, not listed here).
        "max_regs_per_block": 64 * KB,
        # [PG] 5.2 smem/SM: 96 KB.  [MTG] Shared Memory Capacity: GM204 has
        # 96 KB of dedicated shared memory per SM (GM107, CC 5.0: 64 KB).
        "max_shmem_per_multi_processor": 96 * KB,
        # [PG] 5.2 smem/block: 48 KB.  [MTG] Shared Memory Capacity: the
        # per-thread-block limit stays at 48 KB.  No opt-in.
        "max_shared_mem_per_block_optin": 48 * KB,
    },
    # Pascal GP100.
    (6, 0): {
        # [PG] 6.0 blocks/SM: 32.  [PTG] Occupancy: 32 thread blocks per SM,
        # as on Maxwell.
        "max_blocks_per_multi_processor": 32,
        # [PG] 6.0 warps/SM: 64.  [PTG] Occupancy: 64 concurrent warps per SM,
        # as on Maxwell.
        "max_warps_per_multi_processor": 64,
        # [PG] 6.0 threads/SM: 2048.
        "max_threads_per_multi_processor": 2048,
        # [PG] 6.0 regs/SM: 64 K.  [PTG] Occupancy: 64K 32-bit registers per SM.
        "max_registers_per_multi_processor": 64 * KB,
        # [PG] 6.0 regs/block: 64 K.
        "max_regs_per_block": 64 * KB,
        # [PG] 6.0 smem/SM: 64 KB.  [PTG] Shared Memory Capacity: GP100 has
        # 64 KB per SM (GP104, CC 6.1: 96 KB).
        "max_shmem_per_multi_processor": 64 * KB,
        # [PG] 6.0 smem/block: 48 KB.  [PTG] Shared Memory Capacity: the
        # per-thread-block limit stays at 48 KB.  No opt-in.
        "max_shared_mem_per_block_optin": 48 * KB,
    },
    # Volta GV100.
    (7, 0): {
        # [PG] 7.0 blocks/SM: 32.  [VTG] Occupancy: 32 thread blocks per SM.
        "max_blocks_per_multi_processor": 32,
        # [PG] 7.0 warps/SM: 64.  [VTG] Occupancy: 64 concurrent warps per SM,
        # as on Pascal.
        "max_warps_per_multi_processor": 64,
        # [PG] 7.0 threads/SM: 2048.
        "max_threads_per_multi_processor": 2048,
        # [PG] 7.0 regs/SM: 64 K.  [VTG] Occupancy: 64K 32-bit registers per SM.
        "max_registers_per_multi_processor": 64 * KB,
        # [PG] 7.0 regs/block: 64 K.
        "max_regs_per_block": 64 * KB,
        # [PG] 7.0 smem/SM: 96 KB -- the maximum carveout.  [VTG] Unified
        # Shared Memory/L1/Texture Cache: 128 KB unified array; the shared
        # memory capacity can be set to 0, 8, 16, 32, 64 or 96 KB per SM.
        "max_shmem_per_multi_processor": 96 * KB,
        # [PG] 7.0 smem/block: 96 KB (opt-in) = 98304 bytes.  [VTG]: one
        # thread block can address the full 96 KB (opt-in above 48 KB).
        "max_shared_mem_per_block_optin": 96 * KB,
    },
    # Turing TU10x.
    (7, 5): {
        # [PG] 7.5 blocks/SM: 16.  [TTG] Occupancy: 16 thread blocks per SM.
        "max_blocks_per_multi_processor": 16,
        # [PG] 7.5 warps/SM: 32.  [TTG] Occupancy: 32 concurrent warps per SM
        # (versus 64 on Volta).
        "max_warps_per_multi_processor": 32,
        # [PG] 7.5 threads/SM: 1024.
        "max_threads_per_multi_processor": 1024,
        # [PG] 7.5 regs/SM: 64 K.  [TTG] Occupancy: 64K 32-bit registers per SM.
        "max_registers_per_multi_processor": 64 * KB,
        # [PG] 7.5 regs/block: 64 K.
        "max_regs_per_block": 64 * KB,
        # [PG] 7.5 smem/SM: 64 KB -- the maximum carveout.  [TTG] Unified
        # Shared Memory/L1/Texture Cache: 96 KB unified array; shared memory
        # capacity 32 or 64 KB per SM.
        "max_shmem_per_multi_processor": 64 * KB,
        # [PG] 7.5 smem/block: 64 KB (opt-in) = 65536 bytes.  [TTG]: one
        # thread block can address the full 64 KB (opt-in above 48 KB).
        "max_shared_mem_per_block_optin": 64 * KB,
    },
    # Ampere GA100.
    (8, 0): {
        # [PG] 8.0 blocks/SM: 32.  [ATG] Occupancy: 32 thread blocks per SM
        # on compute capability 8.0.
        "max_blocks_per_multi_processor": 32,
        # [PG] 8.0 warps/SM: 64.  [ATG] Occupancy: 64 concurrent warps per SM
        # on compute capability 8.0.
        "max_warps_per_multi_processor": 64,
        # [PG] 8.0 threads/SM: 2048.
        "max_threads_per_multi_processor": 2048,
        # [PG] 8.0 regs/SM: 64 K.  [ATG] Occupancy: 64K 32-bit registers per SM.
        "max_registers_per_multi_processor": 64 * KB,
        # [PG] 8.0 regs/block: 64 K.
        "max_regs_per_block": 64 * KB,
        # [PG] 8.0 smem/SM: 164 KB = 167936 bytes -- the maximum carveout.
        # [ATG] Unified Shared Memory/L1/Texture Cache: "The NVIDIA A100 GPU
        # supports shared memory capacity of 0, 8, 16, 32, 64, 100, 132 or
        # 164 KB per SM."
        "max_shmem_per_multi_processor": 164 * KB,
        # [PG] 8.0 smem/block: 163 KB (opt-in) = 166912 bytes.  [ATG]: one
        # thread block can address up to 163 KB on CC 8.0; the remaining 1 KB
        # per block is reserved for system use.
        "max_shared_mem_per_block_optin": 163 * KB,
    },
    # Ampere GA10x.
    (8, 6): {
        # [PG] 8.6 blocks/SM: 16.  [ATG] Occupancy: 16 thread blocks per SM
        # on compute capability 8.6.
        "max_blocks_per_multi_processor": 16,
        # [PG] 8.6 warps/SM: 48.  [ATG] Occupancy: 48 concurrent warps per SM
        # on compute capability 8.6.
        "max_warps_per_multi_processor": 48,
        # [PG] 8.6 threads/SM: 1536.
        "max_threads_per_multi_processor": 1536,
        # [PG] 8.6 regs/SM: 64 K.  [ATG] Occupancy: 64K 32-bit registers per SM.
        "max_registers_per_multi_processor": 64 * KB,
        # [PG] 8.6 regs/block: 64 K.
        "max_regs_per_block": 64 * KB,
        # [PG] 8.6 smem/SM: 100 KB = 102400 bytes -- the maximum carveout.
        # [ATG]: "GPUs with compute capability 8.6 support shared memory
        # capacity of 0, 8, 16, 32, 64 or 100 KB per SM."
        "max_shmem_per_multi_processor": 100 * KB,
        # [PG] 8.6 smem/block: 99 KB (opt-in) = 101376 bytes.  [ATG]: up to
        # 99 KB per thread block on CC 8.6.
        "max_shared_mem_per_block_optin": 99 * KB,
    },
    # Ada Lovelace AD10x.
    (8, 9): {
        # [PG] 8.9 blocks/SM: 24.  [ADATG] Occupancy: 24 thread blocks per SM.
        # (Occupancy tables written before Ada, e.g. ones keyed "SM86+", give
        # 16; NVIDIA's [PG], [ADATG] and CCCL's sm_890 traits all give 24,
        # which is used.)
        "max_blocks_per_multi_processor": 24,
        # [PG] 8.9 warps/SM: 48.  [ADATG] Occupancy: 48 concurrent warps per
        # SM, as on compute capability 8.6.
        "max_warps_per_multi_processor": 48,
        # [PG] 8.9 threads/SM: 1536.
        "max_threads_per_multi_processor": 1536,
        # [PG] 8.9 regs/SM: 64 K.  [ADATG] Occupancy: 64K registers per SM.
        "max_registers_per_multi_processor": 64 * KB,
        # [PG] 8.9 regs/block: 64 K.
        "max_regs_per_block": 64 * KB,
        # [PG] 8.9 smem/SM: 100 KB = 102400 bytes -- the maximum carveout.
        # [ADATG] Unified Shared Memory/L1/Texture Cache: shared memory
        # capacity 0, 8, 16, 32, 64 or 100 KB per SM.
        "max_shmem_per_multi_processor": 100 * KB,
        # [PG] 8.9 smem/block: 99 KB (opt-in) = 101376 bytes.  [ADATG]: one
        # thread block can address up to 99 KB.
        "max_shared_mem_per_block_optin": 99 * KB,
    },
    # Hopper GH100.
    (9, 0): {
        # [PG] 9.0 blocks/SM: 32.  [HTG] Occupancy: 32 thread blocks per SM
        # on compute capability 9.0.
        "max_blocks_per_multi_processor": 32,
        # [PG] 9.0 warps/SM: 64.  [HTG] Occupancy: 64 concurrent warps per SM,
        # as on the Ampere A100.
        "max_warps_per_multi_processor": 64,
        # [PG] 9.0 threads/SM: 2048.
        "max_threads_per_multi_processor": 2048,
        # [PG] 9.0 regs/SM: 64 K.  [HTG] Occupancy: 64K 32-bit registers per SM.
        "max_registers_per_multi_processor": 64 * KB,
        # [PG] 9.0 regs/block: 64 K.
        "max_regs_per_block": 64 * KB,
        # [PG] 9.0 smem/SM: 228 KB = 233472 bytes -- the maximum carveout.
        # [HTG] Unified Shared Memory/L1/Texture Cache: shared memory capacity
        # selectable up to 228 KB per SM (0, 8, 16, 32, 64, 100, 132, 164,
        # 196 or 228 KB).  The 256 KB quoted for the H100 SM is the whole
        # L1/shared array, not the shared capacity; 228 KB is used.
        "max_shmem_per_multi_processor": 228 * KB,
        # [PG] 9.0 smem/block: 227 KB (opt-in) = 232448 bytes.  [HTG]: one
        # thread block can address up to 227 KB.
        "max_shared_mem_per_block_optin": 227 * KB,
    },
}

# ---------------------------------------------------------------------------
# Devices: only name, description and compute capability are device-specific.
# Insertion order: oldest architecture first.
# ---------------------------------------------------------------------------
_DEVICE_SPECS: tuple[tuple[str, str, int, int], ...] = (
    ("k40c", "NVIDIA Tesla K40c (Kepler GK110B, sm_35)", 3, 5),
    ("m40", "NVIDIA Tesla M40 (Maxwell GM200, sm_52)", 5, 2),
    ("p100", "NVIDIA Tesla P100 (Pascal GP100, sm_60)", 6, 0),
    ("v100", "NVIDIA Tesla V100 (Volta GV100, sm_70)", 7, 0),
    ("t4", "NVIDIA Tesla T4 (Turing TU104, sm_75)", 7, 5),
    ("a100", "NVIDIA A100 (Ampere GA100, sm_80)", 8, 0),
    ("a10", "NVIDIA A10 (Ampere GA102, sm_86)", 8, 6),
    ("rtx3090", "NVIDIA GeForce RTX 3090 (Ampere GA102, sm_86)", 8, 6),
    ("l4", "NVIDIA L4 (Ada Lovelace AD104, sm_89)", 8, 9),
    ("h100", "NVIDIA H100 (Hopper GH100, sm_90)", 9, 0),
)


def _make_device(name: str, description: str, major: int, minor: int) -> Device:
    """Build a Device from the per-compute-capability table, checking consistency."""
    limits = {**_COMMON_LIMITS, **_CC_LIMITS[(major, minor)]}
    dev = Device(name=name, description=description, cudamajor=major, cudaminor=minor, **limits)
    # Internal consistency of the sourced numbers (fails at import if a value
    # is mistyped).
    if dev.max_threads_per_multi_processor != dev.max_warps_per_multi_processor * dev.warp_size:
        raise AssertionError(f"{name}: threads/SM != warps/SM * warp size")
    if dev.max_shared_mem_per_block_optin < dev.max_shared_mem_per_block:
        raise AssertionError(f"{name}: opt-in shared memory below the default")
    if dev.max_shared_mem_per_block_optin > dev.max_shmem_per_multi_processor:
        raise AssertionError(f"{name}: opt-in shared memory per block above shared memory per SM")
    return dev


DEVICES: dict[str, Device] = {
    spec[0]: _make_device(*spec) for spec in _DEVICE_SPECS
}


# ---------------------------------------------------------------------------
# Scaled-down devices: NOT real GPUs. A K40c-like device shrunk so that the pure-Python
# reference enumerator lists the whole GEMM space in well under a second; used by the quick
# start (until a compiled backend is the default) and by tests that compare backends.
# ---------------------------------------------------------------------------
SCALED_DEVICES: dict[str, Device] = {
    "tiny": Device(
        name="tiny", description="scaled-down K40c for quick runs and tests (not a real GPU)",
        cudamajor=3, cudaminor=5, max_threads_per_block=64, max_threads_dim_x=32, max_threads_dim_y=32,
        max_shared_mem_per_block=4096, max_shared_mem_per_block_optin=4096, warp_size=16,
        max_regs_per_block=4096, max_threads_per_multi_processor=512,
        max_registers_per_multi_processor=8192, max_shmem_per_multi_processor=8192,
        max_blocks_per_multi_processor=8, max_warps_per_multi_processor=32, max_registers_per_thread=64),
}


def get_device(name: str) -> Device:
    """Look a device up by name (case-insensitive, surrounding blanks ignored).

    Unknown names raise ValueError; the message lists the known names and,
    where one is close (difflib), suggests it.
    """
    key = str(name).strip().lower()
    table = {**DEVICES, **SCALED_DEVICES}
    if key in table:
        return table[key]
    known = ", ".join(table)
    import difflib   # only for a name not in the table
    close = difflib.get_close_matches(key, list(table), n=3, cutoff=0.6)
    hint = f" Did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
    raise ValueError(f"unknown device {name!r}.{hint} Known devices: {known}.")


# ---------------------------------------------------------------------------
# Peak rates for roofline models (`best --engine bnb`, `tune`). Not limits of the
# space: a performance model divides a configuration's work by them. For a LOWER bound on
# run time the largest published rate is taken (boost clock, SXM part).
#
# [K40]  NVIDIA Tesla K40 GPU Accelerator, Board Specification BD-06902-001 (v05), "Product
#        specifications": peak double-precision 1.43 Tflops at base clock, 1.66 Tflops at
#        boost clock; single-precision 4.29 / 5.04 Tflops; memory bandwidth 288 GB/s (GDDR5).
# [H100] NVIDIA H100 Tensor Core GPU datasheet, "Technical Specifications", H100 SXM column:
#        FP64 34 teraFLOPS, FP32 67 teraFLOPS (no tensor cores), GPU memory bandwidth 3.35 TB/s.
# Units: floating-point operations per nanosecond (GFLOP/s) and bytes per nanosecond (GB/s),
# integers, so models stay exact fractions.
# ---------------------------------------------------------------------------
class PeakRates(Record):
    __match_args__ = ("fp64_flop_per_ns", "fp32_flop_per_ns", "bytes_per_ns", "source")

    def __init__(self, fp64_flop_per_ns: int, fp32_flop_per_ns: int, bytes_per_ns: int, source: str):
        for name, value in zip(self.__match_args__, (fp64_flop_per_ns, fp32_flop_per_ns, bytes_per_ns, source)):
            object.__setattr__(self, name, value)


PEAK_RATES: dict[str, PeakRates] = {
    "k40c": PeakRates(1660, 5040, 288, "[K40] boost clock"),
    "h100": PeakRates(34000, 67000, 3350, "[H100] SXM"),
}
