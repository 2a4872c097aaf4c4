"""MkDocs hook: a nav entry that is a glob (`how-to/*.md`) stands for the pages it matches, sorted by
file name, so a new how-to guide or explanation page needs no edit of mkdocs.yml. Each page's title
is its first heading, as for any nav entry without a title."""
from __future__ import annotations

from pathlib import Path

from mkdocs.exceptions import PluginError


def _expand(items, docs: Path):
    expanded = []
    for item in items:
        if isinstance(item, str) and any(c in item for c in "*?["):
            pages = sorted(p.relative_to(docs).as_posix() for p in docs.glob(item) if p.is_file())
            if not pages:
                raise PluginError(f"the nav entry {item!r} matches no page in {docs}")
            expanded += pages
        elif isinstance(item, dict):
            expanded.append({title: _expand(value, docs) if isinstance(value, list) else value
                             for title, value in item.items()})
        else:
            expanded.append(item)
    return expanded


def on_config(config):
    if config["nav"]:
        config["nav"] = _expand(config["nav"], Path(config["docs_dir"]))
    return config
