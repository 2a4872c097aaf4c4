"""The tiled matrix multiplication of `matmul.c`, compiled once through cffi (API mode).

`load()` returns the compiled module (`.lib`, `.ffi`): built with `-O3 -march=native` into
`$CPU_MATMUL_CACHE` (default `examples/cpu_matmul/build/`, git-ignored) under a name that is a
hash of the C source, the flags, the compiler and the Python version, so an edit of the source
rebuilds and every later call imports the cached module (about 1 s to build, milliseconds to load).
`multiply(...)` runs one configuration on NumPy arrays.
"""
from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import os
import shutil
import sys
import sysconfig
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "matmul.c"
FLAGS = ["-O3", "-march=native", "-std=gnu99", "-fno-strict-aliasing", "-DNDEBUG"]
VEC = 8                       # floats per vector (matmul.c's VEC)
# (MR, NR): the unroll factors of the i point loop (rows) and j point loop (vectors) compiled
# in matmul.c's PAIRS; keep in step with it.
UNROLLS = {(mr, nr) for mr in (1, 2, 4, 6) for nr in (1, 2, 3, 4)} | {(8, 1), (8, 2), (8, 3)}
ORDERS = ("ijk", "ikj", "jik", "jki", "kij", "kji")

CDEF = """
int matmul(int n, const float *A, const float *B, float *C, int tile_i, int tile_j, int tile_k,
           int mr, int nr, int o0, int o1, int o2);
int block_repeat(int mr, int nr, int n, const float *A, const float *B, float *C, int ti, int tj, int tk,
                 long reps);
float peak_fma(long iters);
float peak_fma_chain(long iters);
float peak_vector_loads(const float *x, long len, long reps);
float peak_broadcast_loads(const float *x, long len, long reps);
float read_bandwidth(const float *x, long len, long reps);
void triad(float *a, const float *b, const float *c, long len, long reps);
"""


def cache_dir() -> Path:
    return Path(os.environ.get("CPU_MATMUL_CACHE") or HERE / "build")


def compiler() -> str:
    return os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc"


def module_name(source: str) -> str:
    key = "\0".join([source, CDEF, compiler(), " ".join(FLAGS), sys.version])
    return "_cpu_matmul_" + hashlib.sha256(key.encode()).hexdigest()[:16]


def _import(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_LOADED = None


def load():
    """The compiled module, built on first use and cached."""
    global _LOADED
    if _LOADED is not None:
        return _LOADED
    source = SOURCE.read_text()
    name = module_name(source)
    directory = cache_dir()
    directory.mkdir(parents=True, exist_ok=True)
    target = directory / (name + importlib.machinery.EXTENSION_SUFFIXES[0])
    if not target.exists():
        import cffi
        ffi = cffi.FFI()
        ffi.cdef(CDEF)
        ffi.set_source(name, source, extra_compile_args=FLAGS)
        work = Path(tempfile.mkdtemp(prefix=".build-", dir=directory))
        try:
            built = Path(ffi.compile(tmpdir=str(work), verbose=False))
            os.replace(built, target)        # atomic: a concurrent run sees no half-written module
        finally:
            shutil.rmtree(work, ignore_errors=True)
    _LOADED = _import(target, name)
    return _LOADED


def aligned(array, offset: int = 0, align: int = 64):
    """A copy of `array` whose data starts `offset` bytes past an `align`-byte boundary (a cache
    line) and, with page-aligned allocations, `offset` bytes into a 4 KiB page. NumPy only
    promises 16 bytes, and a 32-byte vector load that straddles two lines costs two loads, so
    without this the same configuration times differently from run to run. Give the operands
    different offsets (measure.py: 0, 1088, 2176) so that rows of A, B and C at the same index
    do not fall on the same 4 KiB offset (L1 set conflicts, 4K aliasing of loads and stores)."""
    raw = np.empty(array.nbytes + 4096 + offset, np.uint8)
    start = (-raw.ctypes.data % 4096) + offset
    out = raw[start:start + array.nbytes].view(array.dtype).reshape(array.shape)
    out[...] = array
    return out


def order_indices(order: str) -> tuple[int, int, int]:
    """'ijk', 'k>i>j' or ('k', 'i', 'j') -> the loop indices outermost first (0 = i, 1 = j, 2 = k)."""
    items = tuple(order) if not isinstance(order, str) else tuple(order.replace(">", ""))
    if sorted(items) != ["i", "j", "k"]:
        raise ValueError(f"loop order {order!r}: expected an order of i, j and k such as 'ikj' or 'i>k>j'")
    return tuple("ijk".index(x) for x in items)


def check_configuration(n: int, tile_i: int, tile_j: int, tile_k: int, unroll_i: int, unroll_j: int) -> str | None:
    """Why the kernel cannot run this configuration, or None."""
    if (unroll_i, unroll_j) not in UNROLLS:
        return f"unroll_i={unroll_i}, unroll_j={unroll_j} is not compiled (pairs: {sorted(UNROLLS)})"
    if n % VEC:
        return f"N={n} is not a multiple of the vector width {VEC}"
    for name, tile in (("tile_i", tile_i), ("tile_j", tile_j), ("tile_k", tile_k)):
        if tile <= 0 or n % tile:
            return f"{name}={tile} does not divide N={n}"
    if tile_i % unroll_i:
        return f"tile_i={tile_i} is not a multiple of unroll_i={unroll_i}"
    if tile_j % (unroll_j * VEC):
        return f"tile_j={tile_j} is not a multiple of unroll_j * {VEC} = {unroll_j * VEC}"
    return None


def multiply(module, A, B, C, tile_i, tile_j, tile_k, unroll_i, unroll_j, order="ijk") -> None:
    """C = A @ B (float32, C-contiguous, n x n) with one configuration; raises ValueError where
    the kernel refuses it."""
    n = A.shape[0]
    ffi, lib = module.ffi, module.lib
    o = order_indices(order)
    rc = lib.matmul(n, ffi.cast("const float *", A.ctypes.data), ffi.cast("const float *", B.ctypes.data),
                    ffi.cast("float *", C.ctypes.data), tile_i, tile_j, tile_k, unroll_i, unroll_j, *o)
    if rc != 0:
        raise ValueError(check_configuration(n, tile_i, tile_j, tile_k, unroll_i, unroll_j)
                         or "the kernel refused the configuration")
