"""Ctrl-C and SIGTERM stop a run promptly, exit 130 / 143 and leave no file behind, in every
backend that writes files and inside one huge C work unit. Each run is a subprocess: a signal
must not reach pytest."""
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from solverspace import Space

pytestmark = pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs Linux /proc")
needs_cc = pytest.mark.skipif(shutil.which(os.environ.get("CC", "gcc")) is None, reason="no C compiler")

# two work units (the hoisted `h` ends the prefix after `a`), each 10**12 iterations of a test that
# no optimization can solve or break: minutes of work inside one unit
HUGE_UNITS = "a = range(2)\nh = range(3)\nb = range(10**12)\nrequire((a + b * 7 + b // 3) % 1000003 == 1)\n"
# nested loops each proven shorter than the check interval, 10**15 iterations under each unit: the
# loops look at the flag by the lengths they add on entry
HUGE_NEST = ("a = range(2)\nh = range(3)\nb = range(60000)\nc = range(60000)\nd = range(60000)\n"
             "require((a + b * 7 + c * c + d * d + b // 3) % 1000003 == 1)\n")
# two work units; in each, the divisor loop over `b` (2**33 values) first seeks the divisors of
# e, about 2**63, by some 3 * 10**9 trial divisions (`LoopNest.divisor_loop`): seconds in one search
DIVISOR_SEARCH = ("a = range(2)\nh = range(3)\nb = range(1, 2 ** 33)\nc = range(-(2 ** 29), 2 ** 29)\n"
                  "require(b * c == 9223372036854775783 - a)\n")
# many small rows in Python: the reference backend writes for minutes
LONG_LISTING = "a = range(10**5)\nb = range(10**5)\nrequire((a + b) % 3 == 0)\n"


def _space(tmp_path, text) -> Path:
    folder = tmp_path / "space"
    folder.mkdir()
    path = folder / "s.py"
    path.write_text(text)
    return path


def _prebuild(path):
    """Compile the C module in this process (the subprocess then finds it cached)."""
    from solverspace.translators.c.backend import CBackend
    CBackend().enumerator(Space.load(path).plan)


def _start(argv, cwd):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    return subprocess.Popen([sys.executable, "-m", "solverspace", *argv], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env, cwd=cwd)


def _threads(proc) -> int:
    try:
        text = Path(f"/proc/{proc.pid}/status").read_text()
    except OSError:
        return 0
    return int(next(line.split()[1] for line in text.splitlines() if line.startswith("Threads:")))


def _wait_until(condition, proc, seconds=120):
    deadline = time.time() + seconds
    while time.time() < deadline and proc.poll() is None and not condition():
        time.sleep(0.05)
    assert proc.poll() is None, proc.communicate()
    assert condition(), "the run did not get going in time"


def _stop(proc, signum, within=3.0):
    sent = time.time()
    proc.send_signal(signum)
    try:
        out, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        pytest.fail(f"signal {signum} was ignored for a minute")
    assert time.time() - sent < within, (time.time() - sent, err)
    return proc.returncode, out.decode(), err.decode()


@needs_cc
@pytest.mark.parametrize("text, signum, status", [(HUGE_UNITS, signal.SIGINT, 130), (HUGE_UNITS, signal.SIGTERM, 143),
                                                  (HUGE_NEST, signal.SIGINT, 130), (DIVISOR_SEARCH, signal.SIGINT, 130)],
                         ids=["long-loop-int", "long-loop-term", "nest-of-short-loops-int", "divisor-search-int"])
def test_a_signal_stops_a_count_inside_one_huge_work_unit(tmp_path, text, signum, status):
    path = _space(tmp_path, text)
    _prebuild(path)
    proc = _start(["count", str(path), "--quiet", "--threads", "2"], tmp_path)
    _wait_until(lambda: _threads(proc) >= 3, proc)  # the C thread and its OpenMP team are counting
    time.sleep(1.0)
    code, out, err = _stop(proc, signum)
    assert code == status, (code, out, err)
    assert "Traceback" not in err


@needs_cc
@pytest.mark.parametrize("signum, status", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_during_c_enumerate_leaves_no_file(tmp_path, signum, status):
    path = _space(tmp_path, HUGE_UNITS)
    _prebuild(path)
    out = tmp_path / "out"
    out.mkdir()
    proc = _start(["enumerate", str(path), "-o", str(out / "rows.npy"), "--quiet", "--threads", "2"], tmp_path)
    _wait_until(lambda: any(out.iterdir()), proc)  # the temporary file exists: counting has begun
    time.sleep(0.5)
    code, _, err = _stop(proc, signum)
    assert code == status, (code, err)
    assert list(out.iterdir()) == []


@pytest.mark.parametrize("name", ["rows.csv", "rows.jsonl"])
def test_sigterm_during_reference_enumerate_leaves_no_file(tmp_path, name):
    path = _space(tmp_path, LONG_LISTING)
    out = tmp_path / "out"
    out.mkdir()
    proc = _start(["enumerate", str(path), "--backend", "reference", "-o", str(out / name), "--quiet"], tmp_path)
    _wait_until(lambda: any(p.stat().st_size > 0 for p in out.iterdir()), proc)  # rows are being written
    code, _, err = _stop(proc, signal.SIGTERM)
    assert code == 143, (code, err)
    assert "terminated" in err and "Traceback" not in err
    assert list(out.iterdir()) == []


@needs_cc
def test_sigterm_during_sample_leaves_no_file(tmp_path):
    path = _space(tmp_path, HUGE_UNITS)
    _prebuild(path)
    out = tmp_path / "out"
    out.mkdir()
    proc = _start(["sample", str(path), "-n", "3", "-o", str(out / "s.npy"), "--quiet", "--threads", "2"], tmp_path)
    _wait_until(lambda: _threads(proc) >= 3, proc)
    code, _, err = _stop(proc, signal.SIGTERM)
    assert code == 143, (code, err)
    assert list(out.iterdir()) == []


def test_main_restores_the_sigterm_handler(capsys):
    from solverspace.cli import main
    before = signal.getsignal(signal.SIGTERM)
    assert main(["count", "gemm", "--backend", "reference", "--set", "device=tiny", "--quiet"]) == 0
    assert signal.getsignal(signal.SIGTERM) is before
