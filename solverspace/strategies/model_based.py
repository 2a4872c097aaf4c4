"""The model-based strategy: Bayesian optimisation whose acquisition is maximised over valid
configurations only.

1. **Start-up**: a Latin hypercube design over the valid set (`Space.design(n, "lhs")`: every
   point an exactly uniform valid configuration, the first parameter stratified), points already
   tried or repeated replaced by exact uniform draws. With a prior (`prior.RankPrior`: another
   device's measurements of the same space), the start-up is instead the prior's best
   configurations, spread out: the best, then greedily the next best far enough (in features)
   from those chosen (`prior_startup` of them, the rest of the `n_startup` a Latin hypercube).
2. **Then**: a Gaussian process (`surrogate.GaussianProcess`) over the configurations' features
   (`base.Features`: value ranks, and the dyadic columns of integer parameters unless
   `dyadic=False`) on the log times of everything
   measured (failed configurations as the worst time measured plus one standard deviation), with
   a prior's normalised rank as one more feature when there is one; the next configuration is the
   untried candidate (`base.Listed` or `base.Pooled`) of largest expected improvement. The GP's
   hyperparameters are refitted every `refit` proposals (the posterior itself every proposal), on
   at most `fit_limit` rows (past that the fastest two thirds and a seeded draw of the rest, and the
   refits spaced out in proportion: a refit's cost grows as n^3, and the mean proposal on the
   K40c and H100 GEMM spaces stays under 10 CPU-ms to 200 measurements).
3. **Local and global steps**: three model steps in four (`global_every`) maximise the expected
   improvement only over the candidates that differ from one of the `anchors` (3) best
   configurations in at most `local_changes` (1) parameters (a trust region of one-parameter
   moves; all candidates when none is left), the fourth over all candidates. On the benchmark
   hub's convolution caches the fastest configurations sit in narrow basins (on A100 one
   configuration within 1.05x of the optimum among 4,362): global expected improvement alone
   reached 1.12-1.22x at 100 measurements (10 seeds), these local steps 1.03-1.14x
   (`bench/search.py`).

Variants, off by default because none beat the defaults on the hub's convolution caches (6 caches,
5-10 seeds, geometric mean of best/optimum at 100 measurements within the +-0.02 that two
equivalent implementations differ by, or worse): `categorical` (one-hot blocks beside the ordinal
features, `base.Features`: a value-specific effect, e.g. block sizes that are not powers of two
being 60-100x slower on AMD, with no smoothness along the value list), `target="rank"` (normal
scores of the ranks instead of log times), `spread` (local-step anchors in different basins),
`prior_startup` below `n_startup`. Where the defaults fall short is a seed stuck in a deceptive
basin (W6600: the best of `bx=16, by=16` at 1.196 while the optimum needs five parameters changed).
"""
from __future__ import annotations

import numpy as np

from solverspace.core.errors import OptionError, SolverspaceError

from solverspace.strategies.base import LIST_LIMIT, SpaceExhausted, Strategy, candidates_for, config_tuples
from solverspace.strategies.surrogate import GaussianProcess, expected_improvement, one_blas_thread

#: What the surrogate fits (`ModelBased._targets`).
TARGETS = ("log", "rank")


class ModelBased(Strategy):
    """Bayesian optimisation over the valid set (see the module's documentation)."""

    name = "model"

    def __init__(self, space, seed: int = 0, *, n_startup: int = 10, refit: int = 10, prior=None,
                 list_limit: int = LIST_LIMIT, xi: float = 0.0, kappa: float | None = None, local_every: int = 0,
                 local_changes: int = 1, max_train: int = 300, global_every: int = 4, anchors: int = 3,
                 categorical: bool = False, target: str = "log", prior_startup: int = 10, fit_limit: int = 100,
                 spread: int = 0, dyadic: bool = True):
        super().__init__(space, seed)
        if target not in TARGETS:
            raise OptionError(f"target={target!r}: expected one of {', '.join(TARGETS)}",
                              hint="target='log' (the default) or target='rank'")
        self.target, self.prior_startup, self.fit_limit, self.spread = target, prior_startup, fit_limit, spread
        self.local_every, self.local_changes, self.model_steps = local_every, local_changes, 0
        self.global_every, self.anchors = global_every, anchors
        self.max_train = max_train
        self.n_startup, self.refit, self.prior, self.xi, self.kappa = n_startup, refit, prior, xi, kappa
        self.candidates = candidates_for(space, seed, list_limit, categorical=categorical, dyadic=dyadic)
        groups = self.candidates.features.groups()
        if prior is not None:
            groups = groups + [max(groups, default=-1) + 1]
        self.gp = GaussianProcess(seed=seed, groups=groups)
        self.ordinal = len(self.candidates.features.kept)
        self.since_fit = None
        self.startup: list[tuple] = []
        self.notes: list[str] = []
        self._startup_design()

    # ---------------------------------------------------------------------------- start-up
    def _startup_design(self) -> None:
        n = min(self.n_startup, len(self.space))
        first: list[tuple] = []
        if self.prior is not None:
            first = self._prior_startup(min(n, self.prior_startup))
            n -= len(first)
            if n <= 0:
                self.startup = first
                return
        try:
            design = config_tuples(self.space.design(n, "lhs", seed=self.seed))
        except SolverspaceError as exc:    # order-valued parameters: no conditional quantiles
            self.notes.append(f"start-up: uniform draws instead of a Latin hypercube ({exc})")
            design = [self._uniform(take=False) for _ in range(n)]
        self.startup = list(dict.fromkeys(first + design))

    def _prior_startup(self, n: int) -> list[tuple]:
        ranked = self.prior.ranked()
        if not ranked:
            return []
        features = self.candidates.features
        x = features.encode(features.indices(ranked[:max(10 * n, 50)]))[:, :len(features.kept)]
        chosen = [0]
        spread = 0.5 * np.sqrt(x.shape[1]) * 0.25
        for i in range(1, len(x)):
            if len(chosen) == n:
                break
            if np.min(np.linalg.norm(x[chosen] - x[i], axis=1)) >= spread:
                chosen.append(i)
        for i in range(len(x)):
            if len(chosen) == n:
                break
            if i not in chosen:
                chosen.append(i)
        return [ranked[i] for i in chosen]

    # ---------------------------------------------------------------------------- proposals
    def _propose(self):
        while self.startup:
            config = self.startup.pop(0)
            if config not in self.proposed:
                self.candidates.taken(config)
                return config, "startup"
        measured = [c for c, t in self.results.items()]
        if len(measured) < 2 or all(t is None for t in self.results.values()):
            return self._uniform(), "uniform"
        configs, x = self.candidates.current(self.best(self.candidates_around()))
        keep = [i for i, c in enumerate(configs) if c not in self.proposed]
        if not keep:
            return self._uniform(), "uniform"
        if len(keep) < len(configs):
            configs, x = [configs[i] for i in keep], x[keep]
        self.model_steps += 1
        local = (self.local_every and self.model_steps % self.local_every == 0) or \
            (self.global_every and self.model_steps % self.global_every != 0)
        if local:
            configs, x = self._near_best(configs, x)
        with one_blas_thread():
            mean, sd = self._posterior(configs, x)
        if self.kappa is not None:
            ei = -(mean - self.kappa * sd)
        else:
            ei = expected_improvement(mean, sd, self.incumbent, self.xi)
        top = np.flatnonzero(ei >= ei.max())
        config = configs[int(top[self.rng.integers(len(top))])]
        self.candidates.taken(config)
        return config, "model"

    def _anchors(self, k: int) -> list[tuple]:
        """The `k` best configurations measured, or with `spread` the best ones that differ from
        each other in at least `spread` parameters (anchors in several basins, not one)."""
        if not self.spread:
            return self.best(k)
        chosen: list[tuple] = []
        for config in self.best(len(self.results)):
            if all(sum(a != b for a, b in zip(config, c)) >= self.spread for c in chosen):
                chosen.append(config)
                if len(chosen) == k:
                    break
        return chosen

    def _changes(self, anchors: list[tuple], x: np.ndarray) -> np.ndarray:
        """Per candidate, the fewest parameters in which it differs from one of `anchors`."""
        features = self.candidates.features
        anchor = features.encode(features.indices(anchors))
        k = self.ordinal
        return (np.abs(x[:, None, :k] - anchor[None, :, :k]) > 1e-12).sum(2).min(1)

    def _near_best(self, configs, x):
        """The candidates that differ from one of the `anchors` best configurations in at most
        `local_changes` parameters (all candidates when none does)."""
        best = self._anchors(self.anchors)
        if not best:
            return configs, x
        chosen = np.flatnonzero(self._changes(best, x) <= self.local_changes)
        if len(chosen) == 0:
            return configs, x
        return [configs[i] for i in chosen], x[chosen]

    def candidates_around(self) -> int:
        return 3

    def _posterior(self, configs, x):
        measured = self._training_set()
        features = self.candidates.features
        xm = features.encode(features.indices(measured))
        if self.prior is not None:
            xm = np.hstack([xm, self.prior.scores(measured)[:, None]])
            x = np.hstack([x, self.prior.scores(configs)[:, None]])
        y = self._targets(measured)
        self.incumbent = float(y.min())
        # past `fit_limit` measurements the refits space out in proportion (each costs as much)
        optimise = self.since_fit is None or self.since_fit >= self.refit * max(1.0, len(y) / self.fit_limit)
        self.gp.fit(xm, y, optimise=optimise, subset=self._fit_subset(y) if optimise else None)
        self.since_fit = 1 if optimise else self.since_fit + 1
        return self.gp.predict(x)

    def _targets(self, measured: list[tuple]) -> np.ndarray:
        """What the GP fits: the log times (`target` "log"), or their normal scores (`target`
        "rank": rank-based, so a few very slow configurations do not flatten the rest); failed
        configurations as the worst plus one standard deviation."""
        y = np.array([np.nan if self.results[c] is None else np.log(self.results[c]) for c in measured])
        ok = ~np.isnan(y)
        if self.target == "rank" and ok.sum() > 1:
            from scipy.special import ndtri
            from scipy.stats import rankdata
            y[ok] = ndtri((rankdata(y[ok]) - 0.5) / ok.sum())
        worst = y[ok].max() + (y[ok].std() if ok.sum() > 1 else 1.0)
        y[~ok] = worst
        return y

    def _fit_subset(self, y: np.ndarray):
        """The rows the hyperparameters are fitted on: all of them up to `fit_limit`, else the
        `fit_limit` * 2/3 fastest and a seeded draw of the rest (bounds a refit's cost on long
        runs: at 200 measurements a refit on every row cost 100-200 CPU-ms)."""
        if len(y) <= self.fit_limit:
            return None
        order = np.argsort(y, kind="stable")
        keep = (2 * self.fit_limit) // 3
        rest = order[keep:]
        picked = self.rng.choice(len(rest), self.fit_limit - keep, replace=False)
        return np.sort(np.concatenate([order[:keep], rest[picked]]))

    def _training_set(self) -> list[tuple]:
        """What the GP is fitted to: everything measured, or past `max_train` (an n^3 fit) the
        `max_train` * 2/3 fastest and a seeded draw of the rest."""
        measured = list(self.results)
        if len(measured) <= self.max_train:
            return measured
        ranked = sorted(measured, key=lambda c: (self.results[c] is None, self.results[c] or 0.0))
        keep = (2 * self.max_train) // 3
        rest = ranked[keep:]
        picked = self.rng.choice(len(rest), self.max_train - keep, replace=False)
        return ranked[:keep] + [rest[i] for i in sorted(picked)]

    def _uniform(self, take: bool = True) -> tuple:
        """An exact uniform draw among the valid configurations not proposed (`take`: and mark it
        proposed among the candidates)."""
        left = self.candidates.left()
        if left == 0:
            raise SpaceExhausted("every valid configuration has been proposed")
        if left is not None:
            alive = self.candidates.alive_positions()
            config = self.candidates.rows[int(alive[self.rng.integers(len(alive))])]
        else:
            for attempt in range(1000):
                config = tuple(self.space[int(self.rng.integers(len(self.space)))])
                if config not in self.proposed:
                    break
            else:
                raise SpaceExhausted("1,000 uniform draws all hit configurations already proposed")
        if take:
            self.candidates.taken(config)
        return config

    def _told(self, config):
        self.candidates.taken(config)
