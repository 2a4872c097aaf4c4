"""Exact uniform random search without replacement: each proposal is a position of the canonical
order drawn uniformly among those not yet proposed (a sparse Fisher-Yates shuffle over
`range(len(space))`, so nothing is listed), and the configuration there (`space[i]`)."""
from __future__ import annotations

from solverspace.strategies.base import SpaceExhausted, Strategy


class Uniform(Strategy):
    """Uniform random search without replacement (see the module's documentation)."""

    name = "random"

    def __init__(self, space, seed: int = 0):
        super().__init__(space, seed)
        self.size = len(space)
        self.swapped: dict = {}       # the shuffle's moved entries: position -> what stands there
        self.drawn = 0

    def _propose(self):
        while self.drawn < self.size:
            i = self.drawn + int(self.rng.integers(self.size - self.drawn))
            position = self.swapped.get(i, i)
            self.swapped[i] = self.swapped.get(self.drawn, self.drawn)
            self.drawn += 1
            config = tuple(self.space[position])
            if config not in self.proposed:       # told by someone else (a resumed run)
                return config, "uniform"
        raise SpaceExhausted("every valid configuration has been proposed")
