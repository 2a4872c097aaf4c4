"""MkDocs hook: the page `reference/cli.md` is generated at build time from the command-line parser
(`solverspace.cli.reference.markdown()`), so the reference cannot drift from the commands. A file of
that name in docs/ is replaced by the generated one."""
from __future__ import annotations

import sys
from pathlib import Path

from mkdocs.structure.files import File

PAGE = "reference/cli.md"


def on_files(files, config):
    root = str(Path(config["config_file_path"]).resolve().parent)
    if root not in sys.path:   # a checkout that is not installed builds its own commands
        sys.path.insert(0, root)
    from solverspace.cli.reference import markdown

    existing = files.get_file_from_path(PAGE)
    if existing is not None:
        files.remove(existing)
    files.append(File.generated(config, PAGE, content=markdown()))
    return files
