"""`best` compiled: the registry's `bnb` and `exhaustive` backends (`solverspace.registry.backends`).

The search walks the plan's loop nest in generated C (`translators.c.best`): `bnb` cuts
subtrees by sound bounds of the objective, `exhaustive` evaluates every valid configuration.
It lives here rather than beside the Python walk (`solverspace.analysis.search`, whose backends
are `analysis.reference_backend.ReferenceSearch`) because it chooses the compiled search, and the
analysis layer may not import a translator; the fallback to the Python walk is an import downward.
"""
from __future__ import annotations
from ..errors import UnsupportedConstruct
from .best import best_compiled
from .build import CompilerError
from solverspace.analysis.search import best


class SearchBackend:
    """`best` by walking the plan's loop nest, compiled in C. Where the C translation refuses the
    space or the objective (orders, values past its integers), `bnb` and `exhaustive` run their
    Python walk (`solverspace.analysis.search`) and say so in the result (`engine`, `note`): the
    same exact answer, slower. So do they where the search cannot be compiled (no C compiler)."""

    def __init__(self, engine: str, time_limit: float | None = None, threads: int | None = None):
        self.name, self.time_limit, self.threads = engine, time_limit, threads

    def best(self, plan, objective: str, *, maximize: bool = True, top: int = 10, progress=None):
        try:
            return best_compiled(plan, objective, maximize=maximize, top=top, prune=self.name == "bnb",
                                 time_limit=self.time_limit, threads=self.threads, progress=progress)
        except (UnsupportedConstruct, CompilerError) as exc:
            result = best(plan, objective, maximize=maximize, top=top, engine=self.name, time_limit=self.time_limit,
                          progress=progress)
            result.engine = f"{self.name}-reference"
            result.note = (f"the C search refused this space or objective, or could not be built "
                           f"({str(exc).splitlines()[0]}): searched in Python")
            return result
