"""`solverspace cache`: where the compiled modules and what is remembered beside them are kept,
how much is there (`cache` or `cache info`), and clearing it (`cache clear`). The place is
`$SOLVERSPACE_CACHE`, else `$XDG_CACHE_HOME/solverspace`, else `~/.cache/solverspace`
(`solverspace.core.cache`)."""
from __future__ import annotations

from solverspace.cli.commands import Command
from solverspace.cli.outputs import add_json, print_json
from solverspace.core.cache import cache_info, clear_cache


class Cache(Command):
    example = "solverspace cache clear"

    def add_arguments(self, p):
        p.add_argument("action", nargs="?", choices=["info", "clear"], default="info",
                       help="info (default): the directory, its entries and their size, per kind; clear: remove "
                            "this package's entries (not those a running process uses; other files stay), saying "
                            "what was removed. Everything there is rebuilt on demand: clearing costs the next runs "
                            "their compiles")
        add_json(p, "info: {\"path\", \"exists\", \"entries\", \"bytes\", \"kinds\": {KIND: {\"entries\", \"bytes\"}}}; "
                    "clear: {\"path\", \"removed\", \"bytes\", \"kept\"}")

    def run(self, args) -> int:
        if args.action == "clear":
            cleared = clear_cache()
            if args.json:
                print_json({"path": str(cleared.path), "removed": cleared.removed, "bytes": cleared.bytes,
                            "kept": cleared.kept})
            else:
                print(cleared.describe())
            return 0
        info = cache_info()
        if args.json:
            print_json({"path": str(info.path), "exists": info.exists, "entries": info.entries, "bytes": info.bytes,
                        "kinds": {kind: {"entries": count, "bytes": size} for kind, (count, size) in info.kinds.items()}})
        else:
            print(info.describe())
        return 0
