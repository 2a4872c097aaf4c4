"""Issue 28: every wait over a second in the README's commands says what it is doing.

The README's commands on the built-in GEMM space (`count`, `best` with the README's objective,
`funnel`, `sample`, `sweep`, the quick start's `enumerate`; `get` and `check` too on K40c), each
in a fresh cache directory (cold: everything is generated and
compiled), run as a user runs them: a child process whose standard error is a terminal (a
pseudo-terminal, so the progress bars that only a terminal gets are there) and whose standard
output is a pipe. Every line (or progress-bar update) is stamped, as it arrives, with the CPU
seconds the child has spent so far: per thread (so a walk on every core is not counted as many
seconds as it has threads) and in the processes it waited for (the compiler). Between two
consecutive outputs, the busiest thread and the compiler may each spend at most `LIMIT` seconds
unless the earlier output said what was starting: a `solverspace: compiling ...` line covers
the compiler's time (not a walk after it); another `solverspace: ...` line (generating, planning
a search) or a progress bar covers the process's own time. Standard output holds the answer
only. CPU seconds, not wall-clock time, so a loaded machine does not fail it.

The default tests run the `tiny` GEMM variant with every wait said at once (`ANNOUNCE_AFTER` 0,
set in the child before the command runs): there, any compile the child waits for must follow a
`compiling` line, however short. The K40c commands themselves, where the waits are real, are
`slow`. `bench/latency.py --quick` runs at the end (a smoke test of the issue's benchmark).
"""
from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import struct
import subprocess
import sys
import termios
import threading
from dataclasses import dataclass, field
from pathlib import Path

import pytest

pytestmark = pytest.mark.needs_cc

ROOT = Path(__file__).resolve().parents[1]
LIMIT = 1.5                 # CPU seconds of one thread (about a second of a user's wait, with slack)
TICK = os.sysconf("SC_CLK_TCK")
BAR = re.compile(r"\d+%\||\d+/\d+ \[")      # a tqdm progress bar
OBJECTIVE = "fmas_per_block - loads_per_block"   # the README's objective


@dataclass
class Snapshot:
    threads: dict            # thread id -> CPU seconds
    children: float          # CPU seconds of the processes it waited for

    def since(self, earlier: "Snapshot") -> tuple[float, float]:
        busiest = max((cpu - earlier.threads.get(tid, 0.0) for tid, cpu in self.threads.items()), default=0.0)
        return busiest, self.children - earlier.children


def snapshot(pid: int) -> Snapshot | None:
    def fields(path: str) -> list[str]:
        with open(path) as handle:
            return handle.read().rsplit(")", 1)[1].split()
    try:
        own = fields(f"/proc/{pid}/stat")
        threads = {}
        for tid in os.listdir(f"/proc/{pid}/task"):
            try:
                f = fields(f"/proc/{pid}/task/{tid}/stat")
            except OSError:
                continue
            threads[tid] = (int(f[11]) + int(f[12])) / TICK
        return Snapshot(threads, (int(own[13]) + int(own[14])) / TICK)
    except (OSError, IndexError):
        return None


@dataclass
class Event:
    stream: str              # "out", "say" (a solverspace: line on stderr), "bar" or "err"
    text: str
    at: Snapshot


@dataclass
class Timeline:
    command: list
    events: list = field(default_factory=list)
    code: int = 0

    @property
    def out(self) -> str:
        return "".join(e.text + "\n" for e in self.events if e.stream == "out")

    @property
    def said(self) -> list[str]:
        return [e.text for e in self.events if e.stream == "say"]

    def silent_waits(self, limit: float = LIMIT, compile_limit: float = LIMIT) -> list[str]:
        """Each stretch between outputs that spent more than allowed, in words."""
        found = []
        start = Event("start", "(the process started)", Snapshot({}, 0.0))
        for before, after in zip([start] + self.events, self.events):
            busiest, children = after.at.since(before.at)
            compiling = before.stream == "say" and before.text.startswith("solverspace: compiling")
            working = before.stream == "bar" or (before.stream == "say" and not compiling)
            if busiest > limit and not working:
                found.append(f"{busiest:.2f} CPU-s of one thread after {before.text!r}, until {after.text!r}")
            if children > compile_limit and not compiling:
                found.append(f"{children:.2f} CPU-s of a compiler after {before.text!r}, until {after.text!r}")
        return found


def saying(line: str) -> bool:
    """A line that says what the command is doing (not an error or a warning)."""
    return line.startswith("solverspace: ") and not line.startswith(("solverspace: error", "solverspace: warning"))


def run(argv: list[str], cache: Path, say_every_wait: bool = False) -> Timeline:
    """`solverspace ARGV` in a child with stderr on a terminal; every output stamped as it arrives."""
    env = dict(os.environ, SOLVERSPACE_CACHE=str(cache), PYTHONUNBUFFERED="1")
    if say_every_wait:
        code = ("import sys; from solverspace.translators.c import build; build.ANNOUNCE_AFTER = 0.0; "
                "from solverspace.cli import main; sys.exit(main())")
        command = [sys.executable, "-c", code, *argv]
    else:
        command = [sys.executable, "-m", "solverspace", *argv]
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))   # a terminal 100 columns wide
    proc = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=slave, env=env,
                            cwd=cache.parent)          # where `-o gemm.csv` writes
    os.close(slave)
    timeline, lock = Timeline(argv), threading.Lock()
    last = [Snapshot({}, 0.0)]

    def stamp(stream: str, text: str) -> None:
        at = snapshot(proc.pid) or last[0]     # the process may have just exited: its last known state
        with lock:
            last[0] = at
            timeline.events.append(Event(stream, text, at))

    def read_out():
        for line in proc.stdout:
            stamp("out", line.decode().rstrip("\n"))

    def read_err():
        pending = ""
        while True:
            try:
                chunk = os.read(master, 4096)
            except OSError:       # EIO: the child closed the terminal
                break
            if not chunk:
                break
            pending += chunk.decode(errors="replace")
            *pieces, pending = re.split(r"\r\n|\r|\n", pending)
            if BAR.search(pending):     # a bar is drawn as "\r" + the bar: it is complete when it arrives
                pieces, pending = pieces + [pending], ""
            for piece in pieces:
                if piece.strip():
                    kind = "bar" if BAR.search(piece) else "say" if saying(piece) else "err"
                    stamp(kind, piece)
        if pending.strip():
            stamp("say" if saying(pending) else "err", pending)

    readers = [threading.Thread(target=read_out), threading.Thread(target=read_err)]
    for reader in readers:
        reader.start()
    timeline.code = proc.wait(timeout=600)
    for reader in readers:
        reader.join(timeout=30)
    os.close(master)
    return timeline


def check(timeline: Timeline, **limits) -> None:
    assert timeline.code == 0, (timeline.command, timeline.events)
    assert "solverspace:" not in timeline.out, timeline.out          # standard output: the answer only
    assert not any(e.stream == "err" for e in timeline.events if "Traceback" in e.text), timeline.events
    assert timeline.silent_waits(**limits) == [], (timeline.command, [(e.stream, e.text) for e in timeline.events])


# ------------------------------------------------------------------------------ the README's commands
def commands(device: str | None) -> dict:
    sets = ["--set", f"device={device}"] if device else []
    values = range(16, 96, 4) if device == "tiny" else range(384, 1024, 32)     # 20 values
    sweep = ",".join(str(v) for v in values)
    return {
        "count": ["count", "gemm", *sets] + (["--backend", "c"] if device == "tiny" else []),   # auto: reference
        "best": ["best", "gemm", *sets, "--maximize", OBJECTIVE, "--top", "10"],
        "funnel": ["funnel", "gemm", *sets],
        "sample": ["sample", "gemm", *sets, "-n", "100" if device == "tiny" else "1000", "--seed", "7"],
        "sweep": ["sweep", "gemm", *sets, "--set", f"max_threads_per_block={sweep}", "--json"],
        "enumerate": ["enumerate", "gemm", *sets, "-o", "gemm.csv"] + (["--backend", "c"] if device == "tiny" else []),
        "get": ["get", "gemm", *sets, "12345" if device is None else "123"],
        "check": ["check", "gemm", *sets, "dim_m=3"],
    }


def answer_is_clean(name: str, out: str, total: int) -> None:
    """Standard output is the command's answer and nothing else."""
    lines = out.splitlines()
    if name == "count":
        assert len(lines) == 1 and re.fullmatch(rf"{total} valid configurations \(.*\)", lines[0]), out
    elif name == "best":
        assert lines[0].startswith("best 10 configuration(s) by maximize") and len(lines) == 11, out
        assert all(re.match(rf"\s*{i}\. ", line) for i, line in enumerate(lines[1:], 1)), out
    elif name == "funnel":
        assert lines[0].split()[:3] == ["loop", "constraint", "reached"] and lines[-1] == f"valid configurations: {total}", out
    elif name == "sample":
        assert lines[0].startswith("dim_m,dim_n,blk_m") and len(lines) == 1 + (100 if total == TINY else 1000), out
        assert all(re.fullmatch(r"\d+(,\d+)+", line) for line in lines[1:]), out
    elif name == "sweep":
        rows = [json.loads(line) for line in lines]
        assert len(rows) == 20 and all(isinstance(r["count"], int) for r in rows), out
    elif name == "enumerate":   # the answer is the file; what was written is said on stderr
        assert out == "", out
    elif name == "get":
        assert len(lines) == 1 and lines[0].startswith("dim_m=") and len(lines[0].split()) == 15, out
    elif name == "check":
        assert len(lines) == 1 and lines[0].startswith("valid completion: dim_m=3 "), out


TINY = 336      # configurations of the tiny GEMM variant


@pytest.mark.parametrize("name", ["count", "best", "funnel", "sample", "sweep", "enumerate"])
def test_every_compile_of_a_readme_command_is_said_first(name, tmp_path):
    """Tiny GEMM, every wait said at once: whatever the command compiles comes after a line saying
    so (no compiler time after any other output), and standard output is only the answer."""
    timeline = run(commands("tiny")[name], tmp_path / "cache", say_every_wait=True)
    check(timeline, compile_limit=0.05)
    answer_is_clean(name, timeline.out, TINY)
    assert any(text.startswith("solverspace: compiling ") for text in timeline.said), timeline.said
    assert list((tmp_path / "cache").glob("*.so")), "the command compiled nothing: the test saw no wait"


def test_quiet_says_nothing_and_a_warm_command_has_nothing_to_say(tmp_path):
    argv = commands("tiny")["count"]
    cold = run([*argv, "--quiet"], tmp_path / "cache", say_every_wait=True)
    assert cold.code == 0 and cold.said == [] and not [e for e in cold.events if e.stream != "out"]
    warm = run(argv, tmp_path / "cache", say_every_wait=True)
    assert warm.code == 0 and warm.said == [], warm.said
    answer_is_clean("count", warm.out, TINY)


def test_the_check_finds_a_silent_wait():
    """The rule itself: a long silent stretch is found; one after a line saying what it is is not."""
    def at(cpu: float, compiler: float = 0.0) -> Snapshot:
        return Snapshot({"1": cpu}, compiler)
    silent = Timeline(["x"], [Event("out", "answer", at(3.0))])
    assert len(silent.silent_waits()) == 1
    said = Timeline(["x"], [Event("say", "solverspace: planning the search", at(0.3)), Event("out", "answer", at(3.0))])
    assert said.silent_waits() == []
    compiled_then_walked = Timeline(["x"], [Event("say", "solverspace: compiling 9 kB", at(0.3)),
                                            Event("out", "answer", at(3.0, compiler=1.0))])
    assert len(compiled_then_walked.silent_waits()) == 1      # the compile line does not cover a long walk
    unsaid_compile = Timeline(["x"], [Event("out", "answer", at(0.3, compiler=2.0))])
    assert len(unsaid_compile.silent_waits()) == 1
    with_a_bar = Timeline(["x"], [Event("bar", "funnel:  10%|#  | 1/10", at(1.0)), Event("out", "answer", at(5.0))])
    assert with_a_bar.silent_waits() == []


@pytest.mark.slow
@pytest.mark.parametrize("name", ["count", "best", "funnel", "sample", "sweep", "enumerate", "get", "check"])
def test_the_readme_commands_on_k40c_never_wait_in_silence(name, tmp_path):
    """The README's commands on the K40c GEMM space, cold, as a user runs them (no setting changed)."""
    timeline = run(commands(None)[name], tmp_path / "cache")
    check(timeline)
    answer_is_clean(name, timeline.out, 1_207_600)


# ------------------------------------------------------------------------------ bench/latency.py
def test_the_latency_bench_runs_quick():
    """`python bench/latency.py --quick` (a smoke run of the issue-28 table): it runs, its counts are
    the published ones, each line it must print is there, and no answer is marked wrong."""
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "latency.py"), "--quick", "--no-cpsat"],
                          capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    rows = {line.split()[0]: line.split() for line in lines if line.startswith("willemsen2025/")}
    assert rows["willemsen2025/atf_prl2.json"][1] == "1200" and rows["willemsen2025/atf_prl4.json"][1] == "10800"
    (gemm,) = [line.split() for line in lines if line.startswith("gemm (tiny: not K40c) ") and "count:" not in line]
    assert gemm[4] == str(TINY), gemm
    kernel_tuner = "Kernel Tuner: no Kernel Tuner" not in lines[0]
    for name in ("willemsen2025/atf_prl2.json", "willemsen2025/atf_prl4.json"):
        warm, cold, bg, total = (float(rows[name][i]) for i in (2, 4, 6, 7))
        assert 0 < warm and 0 < cold and bg >= 0 and abs(total - (cold + bg)) < 0.02, rows[name]
        if kernel_tuner:                                      # KT, KT/warm, KT/cold+bg; its size agrees (no note)
            kt, by_warm, by_cold = (float(rows[name][i]) for i in (8, 9, 10))
            assert abs(by_warm - kt / warm) <= 0.1 * by_warm and len(rows[name]) == 12, rows[name]   # rounded cells
    expected = ["warm count:", "sweep of gemm (tiny) over 20 values", "warm CLI best on tiny gemm", "load at the end"]
    if kernel_tuner:
        expected += ["target warm >= 2x Kernel Tuner", "target cold incl. background >= 1x Kernel Tuner"]
    for text in expected:
        assert any(text in line for line in lines), (text, proc.stdout)
    assert "WRONG" not in proc.stdout and "DIFFER" not in proc.stdout and "exited" not in proc.stdout, proc.stdout


def test_the_command_lines_progress_bar_redraws_whatever_moved(monkeypatch):
    """tqdm's dynamic `miniters`, set from the bar's first jump (a funnel's first work units are
    85% of it), held the bar still until the end; the command line's bar redraws on time alone."""
    import io
    from solverspace.cli.commands import Progress

    class Terminal(io.StringIO):
        def isatty(self):
            return True
    monkeypatch.setattr("sys.stderr", Terminal())
    progress = Progress(True, "funnel")
    progress(85, 100)
    assert progress.bar is not None and progress.bar.miniters == 0 and not progress.bar.dynamic_miniters
    progress.close()
