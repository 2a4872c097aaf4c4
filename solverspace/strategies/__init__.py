"""Search strategies of our own over the valid set (`Strategy`: ask a valid configuration never
proposed before, tell its time): `model` (Bayesian optimisation whose acquisition is maximised over
valid configurations only, `model_based`) and `random` (exact uniform without replacement,
`uniform`). `make(name, space, seed, prior)` builds one by name."""
from __future__ import annotations

from solverspace.core.errors import OptionError
from solverspace.strategies.base import SpaceExhausted, Strategy
from solverspace.strategies.model_based import ModelBased
from solverspace.strategies.uniform import Uniform

STRATEGIES = {"model": ModelBased, "random": Uniform}


def make(name: str, space, seed: int = 0, prior=None) -> Strategy:
    """The strategy called `name` (`STRATEGIES`) on `space`, seeded; `prior` (a `RankPrior`) only
    for `model`."""
    if name not in STRATEGIES:
        raise OptionError(f"strategy={name!r}: expected one of {', '.join(STRATEGIES)}",
                          hint="--strategy model (the default) or --strategy random")
    if prior is not None:
        if name != "model":
            raise OptionError(f"strategy={name!r} takes no prior: only the model-based strategy reads one",
                              hint="--strategy model --prior CACHE")
        return ModelBased(space, seed, prior=prior)
    return STRATEGIES[name](space, seed)


__all__ = ["STRATEGIES", "ModelBased", "SpaceExhausted", "Strategy", "Uniform", "make"]
