"""The CP-SAT backend's sampling methods, as samplers: `cpsat` (exact counts as the oracle of
self-reducibility, translators.cpsat.sample) and `cpsat-xor` (near-uniform, UniGen2 with random
XOR cells, translators.cpsat.hashing). Both draw configurations, not positions (CP-SAT has no
canonical order). `solverspace.scale.sampling` gets them through the backend registry."""
from __future__ import annotations

import numpy as np

from solverspace.core.draws import SampleSizeError, check_sample_size, collect_rows
from solverspace.core.results import rows_to_array

from .solver import Options
from .hashing import NearUniformSampler
from .sample import SelfReducibleSampler


class CpSatSampler:
    """Configurations drawn by self-reducibility over exact CP-SAT counts."""

    name = "cpsat"
    guarantee = ("exactly uniform over the valid configurations (self-reducibility with exact CP-SAT "
                 "counts; configurations drawn directly, not by position)")

    def __init__(self, plan, threads=None, *, seed: int = 0, progress=None, settings: dict | None = None,
                 **options):
        plan = getattr(plan, "plan", plan)   # a Space or a Plan
        settings = dict(settings or {"workers": threads}, time_limit=None)  # a stopped count cannot give uniform draws
        self.columns = plan.model.parameter_names
        self.sampler = SelfReducibleSampler(plan, Options(**settings), progress=progress, **options)

    def size(self) -> int:
        return self.sampler.size()

    def draw(self, n: int, seed: int, replace: bool) -> np.ndarray:
        check_sample_size(self.size(), n, replace)
        rng = np.random.Generator(np.random.PCG64(seed))
        rows = collect_rows(lambda wanted: self.sampler.draw(wanted, rng), n, replace, self.columns)
        return rows_to_array(rows, self.columns)


class XorSampler:
    """Near-uniform configurations from random XOR cells (UniGen2); see translators.cpsat.hashing."""

    name = "cpsat-xor"

    def __init__(self, plan, threads=None, *, seed: int = 0, progress=None):
        self.plan = getattr(plan, "plan", plan)
        self.columns = self.plan.model.parameter_names
        self.options = Options(workers=threads or 1)
        self._for_seed(seed)

    def _for_seed(self, seed: int):
        """The hashing state of one seed (its ApproxMC2 count included): a new seed starts over."""
        if getattr(self, "seed", None) != seed:
            self.sampler, self.seed = NearUniformSampler(self.plan, self.options, seed), seed
        return self.sampler

    @property
    def size_exact(self) -> bool:
        return self.sampler.count.exact

    @property
    def guarantee(self) -> str:
        sampler = self.sampler
        if sampler.listed is not None:
            return "exactly uniform (the space is small enough to list: no hashing needed)"
        return (f"near-uniform (UniGen2): each configuration's probability within a factor {1 + sampler.epsilon:.1f} "
                f"of 1/size; size {sampler.count.describe()}")

    def size(self) -> int:
        return self.sampler.count.estimate

    def draw(self, n: int, seed: int, replace: bool) -> np.ndarray:
        sampler = self._for_seed(seed)
        count = sampler.count
        if count.exact:
            check_sample_size(count.estimate, n, replace)
        elif not replace and n > count.estimate / (1 + count.epsilon):
            raise SampleSizeError(
                f"cannot promise {n} distinct configurations: the space has {count.describe()}",
                hint="ask for at most the estimate divided by 1.8, sample with replacement, or use "
                     "--method exact / cpsat, which know the exact size")
        rows = collect_rows(lambda wanted: sampler.draw_cell(), n, replace, self.columns, patience=200)
        return rows_to_array(rows, self.columns)
