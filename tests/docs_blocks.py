"""The code blocks of the README and docs/: read them from Markdown, and run them as a reader would.

Conventions (the docs are written to them):

- ```python blocks run as Python; ```sh blocks run with `bash -e`, with `solverspace` (the command
  line of this checkout: `sys.executable -m solverspace`) and `python` (`sys.executable`) first on
  PATH, and the checkout first on PYTHONPATH, so the blocks need no install.
- All blocks of one file run in order, in one fresh temporary directory holding a copy of the
  repository's `examples/` folder; the Python blocks of a file share one namespace (one process),
  like a doctest session.
- ```text, ```console, ```json, ```c and blocks with no language are output, never run.
- A block whose previous non-blank line is `<!-- not run: REASON -->` is not run; the reason is
  required.
- Any other language is an error (a typo must not skip a block).
- Each block has a time limit (`TIMEOUT`, seconds): a block still running then fails.

A failure names the file and the line of the block's opening fence (`README.md:12`), shows the
block's output, and stops the file (later blocks may depend on it).
"""
from __future__ import annotations

import json
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RUN = ("python", "sh")
OUTPUT = ("text", "console", "json", "c", "")
TIMEOUT = 120.0
SHOWN = 4000   # characters of a failing block's output in the message

_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})\s*(?P<info>[^`]*)$")
_NOT_RUN = re.compile(r"^\s*<!--\s*not run\b\s*:?(?P<reason>.*?)-->\s*$")


@dataclass(frozen=True)
class Block:
    """One fenced code block: where it opens (`path` as shown, 1-based `line` of the fence), its
    language (the info string's first word, lower case; "" for none), its text, and the reason
    given for not running it (None: no `<!-- not run -->` comment; "": the comment without one)."""
    path: str
    line: int
    language: str
    code: str
    not_run: str | None = None

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}"

    @property
    def runs(self) -> bool:
        return self.language in RUN and self.not_run is None


def doc_files(root: Path = ROOT) -> list[Path]:
    """README.md and every Markdown file under docs/ (not the build's own code in docs/hooks/)."""
    docs = root / "docs"
    found = sorted(p for p in docs.rglob("*.md") if "hooks" not in p.relative_to(docs).parts) if docs.is_dir() else []
    return [root / "README.md"] + found


def parse(text: str, path: str) -> list[Block]:
    """The fenced blocks of Markdown `text` (`path` names the file in messages). A fence may be
    indented (inside a list or an admonition): the block's lines lose that indentation."""
    blocks: list[Block] = []
    lines = text.splitlines()
    i = 0
    previous = ""   # the last non-blank line outside blocks
    while i < len(lines):
        opening = _FENCE.match(lines[i])
        if not opening:
            if lines[i].strip():
                previous = lines[i]
            i += 1
            continue
        indent, fence = opening["indent"], opening["fence"]
        info = opening["info"].strip()
        language = info.split()[0].lower() if info else ""
        body: list[str] = []
        j = i + 1
        while j < len(lines):
            stripped = lines[j].strip()
            if stripped.startswith(fence[0] * len(fence)) and not stripped.strip(fence[0]):
                break
            line = lines[j]
            body.append(line[len(indent):] if line.startswith(indent) else line.lstrip())
            j += 1
        comment = _NOT_RUN.match(previous)
        blocks.append(Block(path, i + 1, language, "\n".join(body) + "\n",
                            comment["reason"].strip() if comment else None))
        previous = ""
        i = j + 1
    return blocks


def read_blocks(file: Path, root: Path = ROOT) -> list[Block]:
    try:
        shown = file.resolve().relative_to(root).as_posix()
    except ValueError:
        shown = str(file)
    return parse(file.read_text(encoding="utf-8"), shown)


def problems(blocks: list[Block]) -> list[str]:
    """What is wrong with the blocks before anything runs: an unknown language, a `not run`
    comment without a reason."""
    found = []
    for block in blocks:
        if block.language not in RUN + OUTPUT:
            found.append(f"{block.where}: unknown language {block.language!r}: run are "
                         f"{', '.join(RUN)}; output are {', '.join(repr(o) for o in OUTPUT)}")
        if block.not_run == "":
            found.append(f"{block.where}: `<!-- not run -->` needs a reason: `<!-- not run: REASON -->`")
    return found


# --- running ---------------------------------------------------------------------------------------
_WORKER = r"""
import json, linecache, os, sys, traceback
reply = os.fdopen(int(sys.argv[1]), "w")
namespace = {"__name__": "__main__", "__builtins__": __builtins__}
for message in sys.stdin:
    block = json.loads(message)
    path = block["path"]
    if path not in linecache.cache:
        lines = block["source"].splitlines(True)
        linecache.cache[path] = (len(block["source"]), None, lines, path)
    try:
        exec(compile("\n" * block["line"] + block["code"], path, "exec"), namespace)
        result = {"ok": True}
    except BaseException as exc:   # the block's frames only, not this loop's
        shown = traceback.format_exception(type(exc), exc, exc.__traceback__.tb_next)
        result = {"ok": False, "error": "".join(shown)}
    sys.stdout.flush(); sys.stderr.flush()
    reply.write(json.dumps(result) + "\n"); reply.flush()
"""


class BlockFailed(AssertionError):
    """A block failed: the message names it and shows its output."""


class Runner:
    """Runs the blocks of one file in order, in `directory`, with a time limit per block."""

    def __init__(self, directory: Path, source: str, *, root: Path = ROOT, timeout: float = TIMEOUT):
        self.directory, self.source, self.timeout = directory, source, timeout
        self.scratch = Path(tempfile.mkdtemp(prefix="blocks-", dir=directory.parent))
        self.log = self.scratch / "output.log"
        self.log.touch()
        bin_dir = self.scratch / "bin"
        bin_dir.mkdir()
        (bin_dir / "solverspace").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m solverspace "$@"\n')
        (bin_dir / "python").write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
        for shim in bin_dir.iterdir():
            shim.chmod(0o755)
        self.env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
                        PYTHONPATH=os.pathsep.join([str(root)] + [p for p in [os.environ.get("PYTHONPATH")] if p]))
        self.worker: subprocess.Popen | None = None
        self.reply = -1   # the worker's answers: a pipe's read end

    def close(self) -> None:
        self.close_worker()
        shutil.rmtree(self.scratch, ignore_errors=True)

    def close_worker(self) -> None:
        if self.worker is not None:
            self._kill(self.worker)
            os.close(self.reply)
            self.worker = None

    @staticmethod
    def _kill(process: subprocess.Popen) -> None:
        """Stop `process` and everything it started (its own process group)."""
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        process.wait()

    def _output_since(self, offset: int) -> str:
        with open(self.log, "rb") as f:
            f.seek(offset)
            text = f.read().decode("utf-8", "replace")
        return text if len(text) <= SHOWN else "...\n" + text[-SHOWN:]

    def _fail(self, block: Block, what: str, offset: int, error: str = "") -> BlockFailed:
        shown = "\n".join("    " + line for line in block.code.rstrip("\n").splitlines())
        output = self._output_since(offset).rstrip("\n")
        return BlockFailed(f"{block.where}: ```{block.language} block {what}\n{shown}\n"
                           + (f"--- its output ---\n{output}" if output else "--- no output ---")
                           + (f"\n--- the error ---\n{error.rstrip()}" if error else ""))

    def run(self, block: Block) -> None:
        """Run `block`; raise BlockFailed naming it if it fails or runs past the time limit."""
        offset = self.log.stat().st_size
        if block.language == "sh":
            self._run_sh(block, offset)
        else:
            self._run_python(block, offset)

    def _run_sh(self, block: Block, offset: int) -> None:
        script = self.scratch / f"block-{block.line}.sh"
        script.write_text(block.code)
        with open(self.log, "ab") as log:
            process = subprocess.Popen(["bash", "-e", str(script)], cwd=self.directory, env=self.env,
                                       stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                       start_new_session=True)
            try:
                status = process.wait(timeout=self.timeout)
            except subprocess.TimeoutExpired:
                self._kill(process)
                raise self._fail(block, f"ran past its time limit ({self.timeout:g} s)", offset) from None
        if status != 0:
            raise self._fail(block, f"failed (exit status {status})", offset)

    def _start_worker(self) -> None:
        read, write = os.pipe()
        log = open(self.log, "ab")
        try:
            self.worker = subprocess.Popen([sys.executable, "-c", _WORKER, str(write)], cwd=self.directory,
                                           env=self.env, stdin=subprocess.PIPE, stdout=log,
                                           stderr=subprocess.STDOUT, pass_fds=(write,), start_new_session=True,
                                           text=True)
        finally:
            log.close()
            os.close(write)
        self.reply = read

    def _run_python(self, block: Block, offset: int) -> None:
        if self.worker is None:
            self._start_worker()
        self.worker.stdin.write(json.dumps({"path": block.path, "line": block.line, "code": block.code,
                                            "source": self.source}) + "\n")
        self.worker.stdin.flush()
        deadline = time.monotonic() + self.timeout
        answer = ""
        while not answer.endswith("\n"):
            ready, _, _ = select.select([self.reply], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                self.close_worker()
                raise self._fail(block, f"ran past its time limit ({self.timeout:g} s)", offset)
            chunk = os.read(self.reply, 65536).decode()
            if not chunk:
                self.close_worker()
                raise self._fail(block, "ended the Python process", offset)
            answer += chunk
        result = json.loads(answer)
        if not result["ok"]:
            raise self._fail(block, "failed", offset, result["error"])


def run_file(file: Path, *, root: Path = ROOT, timeout: float = TIMEOUT) -> int:
    """Check and run the blocks of `file` as the conventions say; returns how many ran. Raises
    BlockFailed (an AssertionError) naming the first problem or failing block."""
    blocks = read_blocks(file, root)
    found = problems(blocks)
    if found:
        raise BlockFailed("\n".join(found))
    runnable = [b for b in blocks if b.runs]
    if not runnable:
        return 0
    with tempfile.TemporaryDirectory(prefix="docs-blocks-") as tmp:
        directory = Path(tmp) / "work"
        if (root / "examples").is_dir():
            shutil.copytree(root / "examples", directory / "examples",
                            ignore=shutil.ignore_patterns("__pycache__", "build", "machine.json"))
        directory.mkdir(exist_ok=True)
        runner = Runner(directory, file.read_text(encoding="utf-8"), root=root, timeout=timeout)
        try:
            for done, block in enumerate(runnable):
                try:
                    runner.run(block)
                except BlockFailed as failure:
                    later = len(runnable) - done - 1
                    raise BlockFailed(f"{failure}" + (f"\n({later} later block(s) of {block.path} not run)"
                                                      if later else "")) from None
        finally:
            runner.close()
    return len(runnable)
