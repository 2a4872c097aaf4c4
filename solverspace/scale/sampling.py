"""Uniform random samples and index-addressable configurations, without listing the space.

Every method sees the space as its canonical enumeration order (the C enumerator's output
order) and draws *positions*: `numpy.random.Generator(PCG64(seed))` picks n distinct positions
(or n positions with replacement) uniformly in [0, size), and the method returns the
configurations at those positions. So a sample depends only on the seed, the space and n, never
on the thread count, and the first m rows of a sample of n are themselves a uniform sample of m.
Spaces of 2**63 configurations or more get positions as Python ints (`draw_big_positions`).
A sample is held in memory before it is written: at most `draws.MAX_SAMPLE` rows.

Each method belongs to a backend of the registry (`solverspace.registry.backends`: `exact` to `c`,
`reference` to `reference`, `cpsat` and `cpsat-xor` to `cpsat`), which makes its sampler; this
module draws from it and says what the sample guarantees. Positions and sizes: `solverspace.core.draws`.

Methods:
- `exact` (default): the compiled enumerator counts the configurations under each prefix of the
  outer loops (its work units), then fills only the units that hold the drawn positions. Exactly
  uniform; memory is bounded by the prefix table plus one batch of units.
- `reference`: lists the whole space in Python (small spaces only; exactly uniform).
- `cpsat`: exact counts from CP-SAT as the oracle of self-reducibility (translators.cpsat.samplers),
  for spaces the compiled enumerator does not accept. Exactly uniform; it draws configurations,
  not positions (it has no canonical order), so its samples differ from the other methods' for
  the same seed. Without replacement, repeated draws are skipped: the result is distributed as
  n distinct configurations drawn one after another uniformly among those not yet drawn.
- `cpsat-xor`: near-uniform (UniGen2 with random XOR cells, translators.cpsat.hashing), for spaces
  whose exact counts do not finish: each sample has probability within a factor 1 + epsilon
  (epsilon 16) of 1/size; the size it reports is an ApproxMC estimate with (0.8, 0.8).
"""
from __future__ import annotations

from dataclasses import dataclass

from solverspace.registry.backends import REGISTRY, backend_for_method, get_backend
from solverspace.core.draws import SampleSizeError
from solverspace.core.options import check_seed, check_threads


@dataclass(frozen=True)
class SampleInfo:
    """What reproduces a sample: keep it next to the sample file."""

    method: str
    seed: int
    n: int
    replace: bool
    size: int
    guarantee: str
    size_exact: bool = True     # False: `size` is an estimate (the cpsat-xor method)


def get_sampler(plan, method: str = "exact", threads=None, *, seed: int = 0, progress=None):
    """The sampler of `method`, made by the backend that provides it (configured with `threads`
    as its parallelism): an object with `size()`, `draw(n, seed, replace)` and `guarantee`."""
    name = backend_for_method(method)
    option = REGISTRY[name].threads_option
    backend = get_backend(name, "sample", **({option: threads} if option else {}))
    return backend.sampler(getattr(plan, "plan", plan), method, seed=seed, progress=progress)


def sample(plan, n: int, seed: int, *, replace: bool = False, method: str = "exact", threads=None, progress=None):
    """(structured array of n configurations, SampleInfo) for a `Plan` (or a `Space`);
    `progress(done, total)` follows the CP-SAT count of the `cpsat` method."""
    check_seed(seed), check_threads(threads)
    sampler = get_sampler(plan, method, threads, seed=seed, progress=progress)
    try:
        rows = sampler.draw(n, seed, replace)
    except MemoryError:
        raise SampleSizeError(f"not enough memory to hold a sample of {n} configurations",
                              hint="ask for fewer") from None
    return rows, SampleInfo(method, seed, n, replace, sampler.size(), sampler.guarantee,
                            getattr(sampler, "size_exact", True))
