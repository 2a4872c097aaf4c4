"""MkDocs hook: a nav entry that is a glob (`how-to/*.md`) stands for the pages it matches that the nav
does not list elsewhere, sorted by file name. So a section can be a whole folder, or some pages in a
chosen order followed by the rest of the folder, and a new page needs no edit of mkdocs.yml. Each
page's title is its first heading, as for any nav entry without a title."""
from __future__ import annotations

from pathlib import Path

from mkdocs.exceptions import PluginError


def _is_glob(item) -> bool:
    return isinstance(item, str) and any(c in item for c in "*?[")


def _listed(items) -> set[str]:
    """The pages the nav names explicitly (not through a glob)."""
    found = set()
    for item in items:
        if isinstance(item, str) and not _is_glob(item):
            found.add(item)
        elif isinstance(item, dict):
            for value in item.values():
                found |= _listed(value) if isinstance(value, list) else _listed([value])
    return found


def _expand(items, docs: Path, listed: set[str]):
    expanded = []
    for item in items:
        if _is_glob(item):
            pages = sorted(p.relative_to(docs).as_posix() for p in docs.glob(item) if p.is_file())
            if not pages:
                raise PluginError(f"the nav entry {item!r} matches no page in {docs}")
            expanded += [page for page in pages if page not in listed]
        elif isinstance(item, dict):
            expanded.append({title: _expand(value, docs, listed) if isinstance(value, list) else value
                             for title, value in item.items()})
        else:
            expanded.append(item)
    return expanded


def on_config(config):
    if config["nav"]:
        config["nav"] = _expand(config["nav"], Path(config["docs_dir"]), _listed(config["nav"]))
    return config
