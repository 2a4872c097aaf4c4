"""Typed refusals shared by the translators."""
from __future__ import annotations

from solverspace.core.errors import Location, SolverspaceError
from solverspace.lang.printing import to_source


class UnsupportedConstruct(SolverspaceError, ValueError):
    """A backend cannot express a construct exactly; it refuses instead of approximating."""

    def __init__(self, backend: str, node, message: str, *, owner=None, model=None, hint=None):
        where = None
        if owner is not None and model is not None:
            where = Location(model.source, getattr(owner, "line", None))
        subject = f" in {owner.name!r}" if owner is not None else ""
        super().__init__(f"the {backend} backend cannot translate `{to_source(node)}`{subject}: {message}",
                         where=where, hint=hint)
