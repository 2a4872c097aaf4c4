"""Bad input and faults: a message and exit status 2, nothing lost, never a traceback.

One table of hostile command lines (`BAD_INPUT`), one of unwritable output paths (checked before
any work: `_load` is replaced by a function that fails the test), then the faults that need more
than a command line: a full disk (`ulimit -f` in a subprocess), the umask, an unusable compile
cache, non-UTF-8 files and non-ASCII parameter names.
"""
from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from solverspace import OptionError, OutputError, Space, read_npy
from solverspace.cli import LISTING_BACKENDS, build_parser, main
from solverspace.core.output import atomic_output, check_output_path
from tests.helpers import needs_permission_bits, read_only_directory, skip_unless_sys_refuses_new_files

ROOT = Path(__file__).parents[1]
TINY = ["--set", "device=tiny"]


def run(capsys, *argv):
    """Exit status, stdout, stderr of the CLI; argparse's usage errors exit through SystemExit."""
    try:
        code = main([str(a) for a in argv])
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


def space_file(tmp_path, name: str, content: bytes) -> str:
    path = tmp_path / name
    path.write_bytes(content)
    return str(path)


# ----------------------------------------------------------------------------------- bad input
# (argv with {tmp} for the test's directory, a fragment the message must contain)
BAD_INPUT = [
    # item 6: the CSV formatter takes one character
    (["enumerate", "gemm", *TINY, "--sep", "::", "-o", "{tmp}/a.csv"], "expected exactly one character"),
    (["enumerate", "gemm", *TINY, "--sep", "", "-o", "{tmp}/a.csv"], "expected exactly one character"),
    (["enumerate", "gemm", *TINY, "--sep", '"', "-o", "{tmp}/a.csv"], "would make the CSV unreadable"),
    (["enumerate", "gemm", *TINY, "--sep", "\n", "-o", "{tmp}/a.csv"], "would make the CSV unreadable"),
    (["enumerate", "gemm", *TINY, "--sep", "-", "-o", "{tmp}/a.csv"], "would make the CSV unreadable"),
    (["enumerate", "gemm", *TINY, "--sep", "é", "-o", "{tmp}/a.csv"], "expected an ASCII character"),
    (["sample", "gemm", *TINY, "-n", "2", "--sep", "::"], "expected exactly one character"),
    # item 7: thread counts, in every command that takes one
    (["count", "gemm", *TINY, "--threads", "-2"], "threads=-2: expected a whole number from 1 to 4096"),
    (["count", "gemm", *TINY, "--threads", "0"], "threads=0: expected a whole number"),
    (["count", "gemm", *TINY, "--threads", "abc"], "'abc' is not a whole number"),
    (["count", "gemm", *TINY, "--threads", "100000"], "threads=100000"),
    (["enumerate", "gemm", *TINY, "--threads", "-2", "-o", "{tmp}/a.csv"], "threads=-2"),
    (["sample", "gemm", *TINY, "-n", "2", "--threads", "-2"], "threads=-2"),
    (["funnel", "gemm", *TINY, "--threads", "-2"], "threads=-2"),
    (["validate", "gemm", *TINY, "--threads", "-2"], "threads=-2"),
    (["count", "gemm", *TINY, "--backend", "cpsat", "--workers", "0"], "workers=0"),
    (["best", "gemm", *TINY, "--maximize", "dim_m", "--workers", "-1"], "workers=-1"),
    # item 8: check's NAME=VALUE words and --set
    (["check", "gemm", *TINY, "dim_m=abc"], "parameter 'dim_m' takes integer values"),
    (["check", "gemm", *TINY, "dim_m=16", "dim_m=32"], "parameter 'dim_m' is given twice"),
    (["check", "gemm", *TINY, "dim_m=16", "dim_n=2", "blk_m=16", "blk_n=16", "blk_k=8", "dim_vec=4", "vec_mul=0",
      "dim_m_a=4", "dim_n_a=8", "dim_m_b=2", "dim_n_b=16", "tex_a=0", "tex_b=0", "shmem_l1=0", "shmem_banks=x"],
     "parameter 'shmem_banks' takes integer values"),
    (["check", "gemm", *TINY, "dim_m="], "no value for parameter 'dim_m'"),
    (["check", "gemm", *TINY, "=3"], "expected NAME=VALUE"),
    (["check", "gemm", *TINY, "nosuch=1"], "'nosuch' is not a parameter"),
    (["check", "gemm", *TINY, "dim_mm=1"], "did you mean 'dim_m'"),
    (["count", "gemm", "--set", "nosuch=1"], "unknown setting 'nosuch'"),
    (["count", "gemm", "--set", "device="], "setting device='' is not one of the allowed values"),
    (["count", "gemm", "--set", "precision=triple"], "setting precision='triple' is not one of the allowed values"),
    (["count", "gemm", "--set", "=tiny"], "expected NAME=VALUE"),
    # item 13: only backends that can do the command are offered
    (["enumerate", "gemm", *TINY, "--backend", "cpsat", "-o", "{tmp}/a.csv"], "invalid choice: 'cpsat'"),
    (["funnel", "gemm", *TINY, "--backend", "cpsat"], "invalid choice: 'cpsat'"),
    # beyond the list
    (["sample", "gemm", *TINY, "-n", "2", "--seed", "-1"], "seed=-1: expected a non-negative whole number"),
    (["count", "gemm", *TINY, "--approximate", "--seed", "-1"], "seed=-1"),
    (["validate", "gemm", *TINY, "--seed", "-1"], "seed=-1"),
    (["count", "gemm", *TINY, "--approximate", "--epsilon", "-1"], "expected a number greater than 0"),
    (["count", "gemm", *TINY, "--approximate", "--delta", "2"], "expected a number between 0 and 1"),
    (["count", "gemm", *TINY, "--backend", "cpsat", "--time-limit", "-1"], "expected a number greater than 0"),
    (["count", "gemm", *TINY, "--backend", "cpsat", "--time-limit", "nan"], "expected a number greater than 0"),
    (["count", "gemm", *TINY, "--max-closure-values", "0"], "expected at least 1"),
    (["validate", "gemm", *TINY, "--samples", "-1"], "expected at least 0"),
    (["validate", "gemm", *TINY, "--reference-limit", "-1"], "expected at least 0"),
    (["emit-c", "gemm", *TINY, "--derived", "nosuch"], "'nosuch' is not a derived value"),
    (["get", "gemm", *TINY, "abc"], "invalid int value: 'abc'"),
    (["get", "gemm", *TINY, str(10 ** 30)], "out of range: the space has 336 configurations"),
    (["get", "gemm", *TINY, "--", "-337"], "out of range"),
    (["best", "gemm", *TINY, "--maximize", "dim_m", "--top", "0"], "expected a positive number"),
    (["count", "{tmp}"], "is not a file"),
]


@pytest.mark.parametrize("argv, fragment", BAD_INPUT, ids=lambda v: " ".join(v) if isinstance(v, list) else None)
def test_bad_input_exits_2_with_a_message(tmp_path, capsys, argv, fragment):
    code, out, err = run(capsys, *(a.replace("{tmp}", str(tmp_path)) for a in argv))
    assert code == 2, (out, err)
    assert fragment in err and "Traceback" not in err
    assert not list(tmp_path.iterdir())  # nothing written


# (file name, bytes, fragment of the message); each loaded by `count`
BAD_FILES = [
    ("latin1.py", b"x = range(4)\n# gr\xf6\xdfe\n", "not UTF-8 text: byte 0xf6 at line 2, column 5 (byte offset 17)"),
    ("latin1.json", b'{"ConfigurationSpace": {"TuningParameters": [{"Name": "a", "Type": "int", "Values": "[1]",'
                    b' "Doc": "\xe9"}]}}', "the T1 file is not UTF-8 text: byte 0xe9 at line 1"),
    ("empty.py", b"", "the space defines no parameters"),
    ("raises.py", b"x = range(4)\nraise RuntimeError('boom')\n", "raises.py:2: RuntimeError: boom"),
    ("exits.py", b"import sys\nx = range(4)\nsys.exit(3)\n", "exits.py:3: SystemExit: 3"),
    ("exits0.py", b"raise SystemExit\n", "SystemExit"),
    ("deep.py", b"x = range(" + b"+".join([b"1"] * 20000) + b")\n", "nested too deeply"),
    ("deep.json", b"[" * 100000 + b"]" * 100000, "nested too deeply"),
    ("list.json", b"[1, 2]", "not a T1 file"),
    ("nokeys.json", b'{"ConfigurationSpace": {"TuningParameters": [{"Name": "a"}]}}', "Type None is not one of"),
    ("nulls.py", b"x = range(4)\x00\n", "null bytes"),
]


@pytest.mark.parametrize("name, content, fragment", BAD_FILES, ids=[c[0] for c in BAD_FILES])
def test_bad_space_files_exit_2_naming_the_file(tmp_path, capsys, name, content, fragment):
    path = space_file(tmp_path, name, content)
    code, out, err = run(capsys, "count", path, "--backend", "reference")
    assert code == 2 and fragment in err and "Traceback" not in err, err
    assert name in err


@pytest.mark.parametrize("command", ["validate", "export-t1", "explain", "settings", "emit-c", "get", "check",
                                     "sample", "best", "funnel", "enumerate"])
def test_a_non_utf8_space_file_is_refused_by_every_command(tmp_path, capsys, command):
    path = space_file(tmp_path, "latin1.py", BAD_FILES[0][1])
    extra = {"export-t1": ["-o", tmp_path / "t.json"], "get": ["0"], "check": ["x=1"], "sample": ["-n", "1"],
             "best": ["--maximize", "x"], "enumerate": ["-o", tmp_path / "x.csv"]}.get(command, [])
    code, _, err = run(capsys, command, path, *extra)
    assert code == 2 and "not UTF-8 text" in err and "Traceback" not in err, err


def test_a_byte_order_mark_is_not_an_error(tmp_path, capsys):
    path = space_file(tmp_path, "bom.py", b"\xef\xbb\xbfx = range(4)\n")
    code, out, _ = run(capsys, "count", path, "--backend", "reference", "--json")
    assert code == 0 and json.loads(out.splitlines()[-1])["count"] == 4


def test_help_offers_only_backends_that_can_do_the_command():
    commands = build_parser()._subparsers._group_actions[0].choices
    for command, expected in (("enumerate", LISTING_BACKENDS), ("funnel", ("reference", "c")),
                              ("count", ("auto", "reference", "c", "cpsat"))):
        backend = next(a for a in commands[command]._actions if a.dest == "backend")
        assert set(backend.choices) == set(expected)
        assert "{" + ",".join(backend.choices) + "}" in commands[command].format_help()
    assert "cpsat" not in commands["enumerate"].format_help()


# ------------------------------------------------------------------------------- output paths
def _fail_if_loaded(*args, **kwargs):
    pytest.fail("the space was loaded before the output path was checked")


# (argv, fragment); {out} is replaced by the bad path
OUTPUT_COMMANDS = [
    ["enumerate", "gemm", *TINY, "-o", "{out}"],
    ["enumerate", "gemm", *TINY, "--backend", "reference", "-o", "{out}"],
    ["sample", "gemm", *TINY, "-n", "3", "-o", "{out}"],
    ["funnel", "gemm", *TINY, "--plot", "{out}"],
    ["explain", "gemm", *TINY, "--plot", "{out}"],
    ["export-t1", "gemm", *TINY, "-o", "{out}"],
]
BAD_PATHS = [
    ("missing-directory", lambda tmp: tmp / "nodir" / "out.svg", "directory '{tmp}/nodir' does not exist"),
    ("existing-directory", lambda tmp: tmp, "is a directory, not a file name"),
    ("file-as-directory", lambda tmp: (tmp / "f").write_text("") * 0 or tmp / "f" / "out.svg",
     "'{tmp}/f' is not a directory"),
    ("empty", lambda tmp: "", "is a directory, not a file name"),
]


@pytest.mark.parametrize("argv", OUTPUT_COMMANDS, ids=lambda a: " ".join(a[:1] + a[-2:-1]))
@pytest.mark.parametrize("make, fragment", [b[1:] for b in BAD_PATHS], ids=[b[0] for b in BAD_PATHS])
def test_unwritable_output_is_refused_before_any_work(tmp_path, capsys, monkeypatch, argv, make, fragment):
    monkeypatch.setattr("solverspace.cli.commands.load_space", _fail_if_loaded)
    out = str(make(tmp_path))
    before = sorted(tmp_path.rglob("*"))
    code, _, err = run(capsys, *(a.replace("{out}", out) for a in argv))
    assert code == 2 and fragment.replace("{tmp}", str(tmp_path)) in err and "Traceback" not in err, err
    assert sorted(tmp_path.rglob("*")) == before


def test_read_only_directory_injected(tmp_path, capsys, monkeypatch):
    """The tests run as root, which ignores permission bits: inject the error the kernel gives a
    read-only file system (EROFS) when the temporary file is created."""
    def read_only(path, *args, **kwargs):
        raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(path))
    monkeypatch.setattr("solverspace.cli.commands.load_space", _fail_if_loaded)
    monkeypatch.setattr("solverspace.core.output.os.open", read_only)
    for argv in OUTPUT_COMMANDS:
        code, _, err = run(capsys, *(a.replace("{out}", str(tmp_path / "out.svg")) for a in argv))
        assert code == 2 and "Read-only file system" in err and str(tmp_path) in err and "Traceback" not in err
    assert not list(tmp_path.iterdir())


@pytest.mark.skipif(not Path("/sys").is_dir(), reason="no /sys")
def test_read_only_directory_for_real(capsys, monkeypatch):
    """/sys refuses new files even to root (EACCES), as a read-only directory does."""
    skip_unless_sys_refuses_new_files()
    monkeypatch.setattr("solverspace.cli.commands.load_space", _fail_if_loaded)
    code, _, err = run(capsys, "enumerate", "gemm", *TINY, "-o", "/sys/out.csv")
    assert code == 2 and "cannot create -o '/sys/out.csv'" in err and "Traceback" not in err


@needs_permission_bits
def test_read_only_directory_by_permissions(tmp_path, capsys):
    with read_only_directory(tmp_path) as locked:
        code, _, err = run(capsys, "export-t1", "gemm", *TINY, "-o", str(locked / "t.json"))
        assert code == 2 and "Permission denied" in err


def test_api_refuses_unwritable_paths_with_output_error(tmp_path):
    space = Space.from_source("x = range(4)\n")
    with pytest.raises(OutputError, match="does not exist"):
        space.write(tmp_path / "nodir" / "x.csv", "reference")
    with pytest.raises(OSError, match="is a directory"):
        space.write_csv(tmp_path, "reference")


def test_a_symbolic_link_is_written_through(tmp_path, capsys):
    (tmp_path / "real").mkdir()
    (tmp_path / "link.csv").symlink_to("real/target.csv")
    code, _, err = run(capsys, "enumerate", "gemm", *TINY, "--backend", "reference", "-o", tmp_path / "link.csv")
    assert code == 0, err
    assert (tmp_path / "link.csv").is_symlink() and len((tmp_path / "real" / "target.csv").read_text().splitlines()) == 337
    assert sorted(p.name for p in (tmp_path / "real").iterdir()) == ["target.csv"]


def test_a_named_pipe_is_written_in_place_not_replaced(tmp_path, capsys):
    """Renaming onto a pipe or device (`-o /dev/null` as root) would replace it with a file."""
    import threading
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()), daemon=True)
    reader.start()
    code, _, err = run(capsys, "export-t1", "gemm", *TINY, "-o", fifo)
    reader.join(timeout=60)
    assert code == 0, err
    assert json.loads(received[0])["ConfigurationSpace"]["TuningParameters"]
    assert not fifo.is_file() and sorted(p.name for p in tmp_path.iterdir()) == ["fifo"]


# ----------------------------------------------------------------------------------- disk full
def test_a_failed_write_keeps_the_previous_file_and_removes_the_temporary(tmp_path):
    target = tmp_path / "out.csv"
    target.write_text("previous\n")
    with pytest.raises(OutputError, match="No space left on device; nothing was written"):
        with atomic_output(target, "w") as handle:
            handle.write("partial\n")
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    assert target.read_text() == "previous\n"
    assert [p.name for p in tmp_path.iterdir()] == ["out.csv"]


FULL_DISK = [
    ["enumerate", "gemm", *TINY, "-o", "out.csv"],
    ["enumerate", "gemm", *TINY, "-o", "out.npy"],
    ["enumerate", "gemm", *TINY, "--backend", "reference", "-o", "out.jsonl"],
    ["sample", "gemm", *TINY, "-n", "300", "-o", "out.npy"],
    ["export-t1", "gemm", "-o", "out.json"],
]


@pytest.mark.parametrize("argv", FULL_DISK, ids=lambda a: " ".join(a))
def test_file_size_limit_gives_a_message_and_no_file(tmp_path, argv):
    """`ulimit -f 2` (2 KiB): the kernel refuses the write (EFBIG; Python ignores SIGXFSZ)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), SOLVERSPACE_CACHE=str(tmp_path.parent / f"{tmp_path.name}-cache"))
    line = " ".join([sys.executable, "-m", "solverspace", *(f"'{a}'" for a in argv)])
    warm = tmp_path.parent / f"{tmp_path.name}-warm"   # the same command once without the limit: any
    warm.mkdir()                                        # module it compiles is in the cache before it
    subprocess.run(["bash", "-c", "exec " + line], cwd=warm, env=env, capture_output=True, timeout=300)
    command = "ulimit -f 2; exec " + line
    done = subprocess.run(["bash", "-c", command], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 2, done.stderr
    assert "failed: " in done.stderr and "; nothing was written under that name" in done.stderr
    assert "File too large" in done.stderr or "written" in done.stderr  # NumPy reports a short write
    assert "Traceback" not in done.stderr
    assert not list(tmp_path.iterdir())  # neither the output nor a .partial file


def test_parquet_file_size_limit(tmp_path):
    pytest.importorskip("pyarrow")
    test_file_size_limit_gives_a_message_and_no_file(tmp_path, ["enumerate", "gemm", *TINY, "-o", "out.parquet"])


# ----------------------------------------------------------------------------------- umask
@pytest.mark.parametrize("umask", [0o022, 0o077])
def test_output_files_honour_the_umask(tmp_path, capsys, umask):
    old = os.umask(umask)
    try:
        for argv in (["enumerate", "gemm", *TINY, "--backend", "reference", "-o", "{tmp}/r.csv"],
                     ["enumerate", "gemm", *TINY, "--backend", "reference", "-o", "{tmp}/r.jsonl"],
                     ["enumerate", "gemm", *TINY, "-o", "{tmp}/c.csv"],
                     ["enumerate", "gemm", *TINY, "-o", "{tmp}/c.npy"],
                     ["sample", "gemm", *TINY, "-n", "3", "-o", "{tmp}/s.csv"],
                     ["export-t1", "gemm", *TINY, "-o", "{tmp}/t.json"]):
            assert run(capsys, *(a.replace("{tmp}", str(tmp_path)) for a in argv))[0] == 0
    finally:
        os.umask(old)
    files = sorted(p.name for p in tmp_path.iterdir())
    assert files == ["c.csv", "c.npy", "r.csv", "r.jsonl", "s.csv", "s.csv.meta.json", "t.json"]
    for p in tmp_path.iterdir():
        assert p.stat().st_mode & 0o777 == 0o666 & ~umask, p.name


# ------------------------------------------------------------------------- the Python API too
def test_api_validates_threads_and_separator():
    space = Space.from_source("x = range(4)\n")
    for bad in (-2, 0, 10 ** 6, 1.5, True):
        with pytest.raises(OptionError, match="threads="):
            space.count("c", threads=bad)
    with pytest.raises(ValueError, match="threads=-2"):
        space.sample(2, threads=-2)
    with pytest.raises(ValueError, match="workers=0"):
        space.count("cpsat", workers=0)
    with pytest.raises(OptionError, match="exactly one character"):
        space.write("never-written.csv", "reference", sep="::")
    with pytest.raises(OptionError, match="seed=-1"):
        space.sample(2, seed=-1)
    with pytest.raises(OptionError, match="threads=0"):
        space.sample(2, method="cpsat", threads=0)
    assert space.count("c", threads=np.int64(2)) == 4 and len(space.sample(2, seed=np.uint32(7))) == 2
    assert not Path("never-written.csv").exists()


# ------------------------------------------------------------------------- compile cache
@pytest.mark.parametrize("kind", ["file", "unreachable"])
def test_unusable_cache_directory_falls_back_to_a_temporary_one(tmp_path, capsys, monkeypatch, kind):
    if kind == "file":
        cache = tmp_path / "cache"
        cache.write_text("not a directory")
    else:
        cache = Path("/proc/solverspace-nope")
    monkeypatch.setenv("SOLVERSPACE_CACHE", str(cache))
    source = tmp_path / "s.py"
    source.write_text(f"x = range({7 + len(kind)})\n")  # a module no cache holds yet
    code, out, err = run(capsys, "count", str(source), "--backend", "c")
    assert code == 0 and out.startswith(f"{7 + len(kind)} valid configurations")
    assert f"solverspace: warning: cannot use the compile cache '{cache}'" in err
    assert "SOLVERSPACE_CACHE" in err and "Traceback" not in err


def test_cache_fallback_warns_once(tmp_path, monkeypatch):
    from solverspace.translators.c import build as c_build
    monkeypatch.setenv("SOLVERSPACE_CACHE", str(tmp_path / "file"))
    (tmp_path / "file").write_text("")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        first, second = c_build.cache_dir(), c_build.cache_dir()
    assert first == second and first.is_dir() and len(caught) == 1


# ------------------------------------------------------------------------ non-ASCII names
NAMES = "größe = range(3)\nразмер = iterator(['a', 'b'])\n名前 = range(2)\n"


@pytest.mark.parametrize("suffix, backend", [("csv", "c"), ("jsonl", "c"), ("npy", "c"), ("parquet", "c"),
                                             ("csv", "reference"), ("jsonl", "reference")])
def test_non_ascii_parameter_names_in_every_format(tmp_path, capsys, suffix, backend):
    if suffix == "parquet":
        pytest.importorskip("pyarrow")
    source = tmp_path / "names.py"
    source.write_text(NAMES, encoding="utf-8")
    target = tmp_path / f"out.{suffix}"
    code, _, err = run(capsys, "enumerate", str(source), "--backend", backend, "-o", str(target))
    assert code == 0, err
    expected = [(g, r, n) for g in range(3) for r in "ab" for n in range(2)]
    names = ["größe", "размер", "名前"]
    if suffix == "csv":
        lines = target.read_text(encoding="utf-8").splitlines()
        assert lines[0] == ",".join(names)
        assert lines[1:] == [f"{g},{r},{n}" for g, r, n in expected]
    elif suffix == "jsonl":
        rows = [json.loads(line) for line in target.read_text(encoding="utf-8").splitlines()]
        assert [list(r) for r in rows] == [names] * len(expected)
        assert [tuple(r.values()) for r in rows] == expected
    elif suffix == "npy":
        array = read_npy(target)   # categorical columns are stored as codes
        assert list(array.dtype.names) == names and array.tolist() == expected
    else:
        import pyarrow.parquet as pq
        table = pq.read_table(target)
        assert table.column_names == names
        assert list(zip(*(table.column(n).to_pylist() for n in names))) == expected


def test_non_ascii_names_in_a_sample_npy(tmp_path, capsys):
    source = tmp_path / "names.py"
    source.write_text(NAMES, encoding="utf-8")
    code, _, err = run(capsys, "sample", str(source), "-n", "4", "-o", str(tmp_path / "s.npy"))
    assert code == 0 and "Warning" not in err
    array = np.load(tmp_path / "s.npy")
    assert list(array.dtype.names) == ["größe", "размер", "名前"] and len(array) == 4


def test_check_output_path_leaves_nothing_behind(tmp_path):
    assert check_output_path(tmp_path / "x.csv") == tmp_path / "x.csv"
    assert not list(tmp_path.iterdir())


# ------------------------------------------------------------------------------- repository
def test_quick_start_outputs_are_git_ignored():
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    for name in ("gemm.csv", "gemm.npy", "problem.json", ".gemm.csv.1.2.partial"):
        done = subprocess.run(["git", "check-ignore", "-q", name], cwd=ROOT)
        assert done.returncode == 0, name


def test_a_file_size_limit_while_compiling_is_a_message(tmp_path):
    """An empty cache under `ulimit -f 2`: writing the generated source fails (EFBIG); the
    command says where and what to do, with no traceback."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), SOLVERSPACE_CACHE=str(tmp_path / "cache"))
    command = "ulimit -f 2; exec " + " ".join([sys.executable, "-m", "solverspace", "count", "gemm", *TINY,
                                               "--backend", "c"])
    done = subprocess.run(["bash", "-c", command], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 2, done.stderr
    assert "cannot write the generated enumerator's source" in done.stderr and "Traceback" not in done.stderr
