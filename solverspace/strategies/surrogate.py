"""Surrogates of measured times over configuration features, and the expected improvement.

`GaussianProcess`: a Matern-5/2 kernel on the [0, 1] features (`base.Features`), one length
scale per feature (ARD) or per group of features (`groups`: a one-hot block shares one), fitted to the log times by maximising the marginal likelihood (scipy's
L-BFGS-B from a few starts, analytic gradient), a constant mean and a noise term. Log times,
because run times of one kernel span orders of magnitude and the relative error is what matters.
A failed configuration is given the worst log time measured plus one standard deviation: the model
learns its region as slow, without a second classifier. Fits are cheap at the sizes a measured
search reaches (n <= a few hundred: an n x n Cholesky per step).

`expected_improvement(mean, sd, best)`: for minimisation.

`one_blas_thread()`: the fits and predictions here are small matrices (a few hundred rows), where a
multithreaded BLAS spends more time waking and spinning its threads than computing (on a loaded
2-core machine a proposal cost 60-90 CPU-ms with OpenBLAS's threads, 7 with one); the strategies run
their model steps inside it. It needs `threadpoolctl` (installed with scikit-learn and many others);
without it the BLAS keeps its own setting.
"""
from __future__ import annotations

import contextlib
import math

import numpy as np
from scipy.linalg import cho_factor, cho_solve, solve_triangular
from scipy.optimize import minimize
from scipy.special import erfc

SQRT5 = math.sqrt(5.0)
_CONTROLLER: list = []


def one_blas_thread():
    """A context in which the BLAS and OpenMP libraries loaded use one thread (see the module's
    documentation); a no-op context without `threadpoolctl`."""
    if not _CONTROLLER:
        try:
            from threadpoolctl import ThreadpoolController
            _CONTROLLER.append(ThreadpoolController())
        except ImportError:
            _CONTROLLER.append(None)
    controller = _CONTROLLER[0]
    return contextlib.nullcontext() if controller is None else controller.limit(limits=1)


def _matern52(r: np.ndarray) -> np.ndarray:
    return (1.0 + SQRT5 * r + 5.0 / 3.0 * r * r) * np.exp(-SQRT5 * r)


def _sqdist(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    d = (a * a).sum(1)[:, None] + (b * b).sum(1)[None, :] - 2.0 * a @ b.T
    return np.maximum(d, 0.0)


class GaussianProcess:
    """A GP regression of targets `y` on features `x`; `fit` then `predict`."""

    def __init__(self, *, noise_floor: float = 1e-6, restarts: int = 1, seed: int = 0, groups=None):
        self.noise_floor, self.restarts = noise_floor, restarts
        self.rng = np.random.default_rng(seed)
        self.theta: np.ndarray | None = None     # log length scales (g), log signal var, log noise var
        #: column -> its length scale's index (columns of one group share one: a one-hot block)
        self.groups = None if groups is None else np.asarray(groups, dtype=np.int64)

    def _groups(self, d: int) -> tuple[np.ndarray, int]:
        if self.groups is None:
            return np.arange(d), d
        return self.groups, int(self.groups.max()) + 1 if len(self.groups) else 0

    # ---------------------------------------------------------------------------- likelihood
    def negative_log_likelihood(self, theta: np.ndarray, x: np.ndarray, y: np.ndarray) -> tuple[float, np.ndarray]:
        group, d = self._groups(x.shape[1])
        ls, sf2, sn2 = np.exp(theta[:d])[group], math.exp(theta[d]), math.exp(theta[d + 1]) + self.noise_floor
        xs = x / ls
        sq = _sqdist(xs, xs)
        r = np.sqrt(sq)
        e = np.exp(-SQRT5 * r)
        k0 = (1.0 + SQRT5 * r + 5.0 / 3.0 * sq) * e
        k = sf2 * k0 + sn2 * np.eye(len(y))
        try:
            c, low = cho_factor(k, lower=True, check_finite=False)
        except np.linalg.LinAlgError:
            return 1e10, np.zeros_like(theta)
        alpha = cho_solve((c, low), y, check_finite=False)
        nll = 0.5 * y @ alpha + np.log(np.diag(c)).sum() + 0.5 * len(y) * math.log(2 * math.pi)
        w = np.outer(alpha, alpha) - cho_solve((c, low), np.eye(len(y)), check_finite=False)
        grad = np.zeros_like(theta)
        # dk0/dlog(ls_j) = (5/3) (1 + sqrt5 r) e * (x_j diff / ls_j)^2, summed over a group's columns;
        # for symmetric wc, sum_ik wc_ik (a_i - a_k)^2 = 2 (rowsum(wc) . a^2 - a . wc a): all columns
        # by two matrix products instead of an n x n array per column
        wc = w * (sf2 * 5.0 / 3.0 * (1.0 + SQRT5 * r) * e)
        column = -(wc.sum(1) @ (xs * xs) - np.einsum("ij,ij->j", xs, wc @ xs))
        np.add.at(grad, group, column)
        grad[d] = -0.5 * np.sum(w * sf2 * k0)
        grad[d + 1] = -0.5 * np.trace(w) * (sn2 - self.noise_floor)
        return nll, grad

    def fit(self, x: np.ndarray, y: np.ndarray, *, optimise: bool = True, subset=None) -> "GaussianProcess":
        """Condition on (`x`, `y`); `optimise`: first fit the hyperparameters by marginal
        likelihood, on the rows `subset` only when given (a fit's cost grows as n^3 per
        likelihood evaluation; the posterior still uses every row)."""
        self.mean = float(np.mean(y))
        self.scale = float(np.std(y)) or 1.0
        z = (y - self.mean) / self.scale
        group, d = self._groups(x.shape[1])
        bounds = [(math.log(0.02), math.log(20.0))] * d + [(math.log(0.05), math.log(20.0)),
                                                          (math.log(1e-6), math.log(1.0))]
        if self.theta is None or len(self.theta) != d + 2:
            self.theta = np.array([math.log(0.3)] * d + [0.0, math.log(1e-2)])
        if optimise and len(y) >= 3:
            xo, zo = (x, z) if subset is None else (x[subset], z[subset])
            starts = [self.theta] + [np.array([self.rng.uniform(lo, hi) for lo, hi in bounds])
                                     for _ in range(self.restarts)]
            best = (self.negative_log_likelihood(self.theta, xo, zo)[0], self.theta)
            for start in starts:
                res = minimize(self.negative_log_likelihood, start, args=(xo, zo), jac=True, method="L-BFGS-B", bounds=bounds,
                               options={"maxiter": 40})
                if res.fun < best[0]:
                    best = (res.fun, res.x)
            self.theta = best[1]
        theta = self.theta
        self.ls = np.exp(theta[:d])[group]
        self.sf2 = math.exp(theta[d])
        sn2 = math.exp(theta[d + 1]) + self.noise_floor
        self.xs = x / self.ls
        k = self.sf2 * _matern52(np.sqrt(_sqdist(self.xs, self.xs))) + sn2 * np.eye(len(z))
        self.chol = np.linalg.cholesky(k + 1e-10 * np.eye(len(z)))
        self.alpha = cho_solve((self.chol, True), z, check_finite=False)
        return self

    def predict(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Mean and standard deviation at `x`, in the units of `y`."""
        ks = self.sf2 * _matern52(np.sqrt(_sqdist(x / self.ls, self.xs)))
        mu = ks @ self.alpha
        v = solve_triangular(self.chol, ks.T, lower=True, check_finite=False)
        var = np.maximum(self.sf2 - (v * v).sum(0), 1e-12)
        return mu * self.scale + self.mean, np.sqrt(var) * self.scale


def expected_improvement(mean: np.ndarray, sd: np.ndarray, best: float, xi: float = 0.0) -> np.ndarray:
    """E[max(best - xi - Y, 0)] for Y ~ N(mean, sd^2) (minimisation)."""
    z = (best - xi - mean) / sd
    cdf = 0.5 * erfc(-z / math.sqrt(2.0))
    pdf = np.exp(-0.5 * z * z) / math.sqrt(2.0 * math.pi)
    return (best - xi - mean) * cdf + sd * pdf

