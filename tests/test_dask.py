"""`--engine dask`: counts, shards and samples on a local Dask cluster equal the single-process
answers; a rerun resumes; a manifest of another run is refused; a killed worker changes nothing.

One cluster of 2 worker processes serves the module (starting one takes a second or two).
"""
from __future__ import annotations

import importlib.util
import json
import os
import signal
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("distributed", reason="Dask's distributed scheduler (the `dask` extra) is not installed")

import numpy as np  # noqa: E402
from hypothesis import HealthCheck, given, reject, settings  # noqa: E402

from solverspace import Space  # noqa: E402
from solverspace.cli import main  # noqa: E402
from solverspace.scale.dask_engine import DaskEngine, Job  # noqa: E402
from solverspace.core.errors import SolverspaceError  # noqa: E402
from solverspace.core.manifest import NAME, ManifestError  # noqa: E402
from solverspace.validation.generate import spaces  # noqa: E402

pytestmark = pytest.mark.needs_cc

CORPUS = Path(__file__).parent / "corpus"
TINY = {"device": "tiny"}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """A LocalCluster of 2 worker processes sharing one compile cache with this process."""
    import distributed
    cache = tmp_path_factory.mktemp("c-cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SOLVERSPACE_CACHE", str(cache))
        with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                      dashboard_address=None) as local:
            yield local


def engine(cluster, space_name, settings=None, **options) -> tuple[Space, DaskEngine]:
    space = Space.load(space_name, settings)
    return space, DaskEngine(space, Job.make(space_name, settings), scheduler=cluster.scheduler_address,
                             progress=False, **options)


def shards_in_order(directory: Path) -> np.ndarray:
    return np.concatenate([np.load(p) for p in sorted(directory.glob("part-*.npy"))])


def check_space(cluster, path, settings=None, tmp=None, listing=True):
    """Count, shards (.npy, compared byte for byte as arrays) and a sample against one process."""
    space, run = engine(cluster, str(path), settings, partitions=3)
    with run:
        stats, expected = run.stats(), space.stats("c")
        assert (stats.count, stats.undefined) == (expected.count, expected.undefined)
        if not listing:
            return
        run.enumerate(tmp / "shards", "npy")
        single = tmp / "single.npy"
        space.write(single, "c")
        assert shards_in_order(tmp / "shards").tobytes() == np.load(single).tobytes()
        n = min(expected.count, 5)
        rows, info = run.draw(n, seed=3)
        local_rows, local_info = space.draw(n, seed=3)
        assert info == local_info and rows.tolist() == local_rows.tolist()


def test_gemm_count_shards_and_sample_equal_one_process(cluster, tmp_path):
    check_space(cluster, "gemm", TINY, tmp_path)


@pytest.mark.parametrize("name", ["disagree-cpsat-undefined-tally.py", "disagree-c-closure-over-categorical-input.py",
                                  "crash-c-closure-over-empty-domain.py"])
def test_corpus_spaces_equal_one_process(cluster, tmp_path, name):
    check_space(cluster, CORPUS / name, tmp=tmp_path)


def test_a_count_past_64_bits_is_exact_and_samples_alike(cluster):
    """The workers rebuild with wide counts, as one process does; positions past 63 bits."""
    path = str(CORPUS / "disagree-c-count-past-64-bits.py")
    check_space(cluster, path, listing=False)
    space, run = engine(cluster, path, partitions=5)
    with run:
        rows, info = run.draw(6, seed=4)
    local_rows, local_info = space.draw(6, seed=4)
    assert info.size >= 2 ** 63 and info == local_info and rows.tolist() == local_rows.tolist()


@settings(max_examples=4, derandomize=True, deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(source=spaces(c_compatible=True))
def test_generated_spaces_equal_one_process(cluster, tmp_path_factory, source):
    tmp = tmp_path_factory.mktemp("generated")
    path = tmp / "space.py"
    path.write_text(source)
    try:
        Space.load(str(path)).count("c")
    except SolverspaceError:
        reject()   # a space the C backend refuses has no Dask answer either
    check_space(cluster, path, tmp=tmp)


def test_strict_refuses_the_first_undefined_as_one_process_does(cluster):
    path = str(CORPUS / "disagree-cpsat-undefined-tally.py")
    space, run = engine(cluster, path, strict=True)
    with pytest.raises(SolverspaceError) as local:
        space.stats("c", strict=True)
    with run, pytest.raises(SolverspaceError) as dask:
        run.stats()
    assert str(dask.value) == str(local.value)


def test_parquet_shards_read_as_one_dataset_equal_to_one_process(cluster, tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    space, run = engine(cluster, "gemm", TINY, partitions=4)
    with run:
        manifest = run.enumerate(tmp_path / "out")
    names = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert names == [NAME] + [f"part-0000{i}.parquet" for i in range(4)]
    table = pq.read_table(tmp_path / "out")   # the directory is one dataset
    expected = space.to_array("c")
    assert table.num_rows == manifest["total"] == len(expected)
    for column in expected.dtype.names:
        assert table.column(column).to_pylist() == expected[column].tolist()
    assert [e["rows"] for e in manifest["partitions"]] == [pq.read_metadata(tmp_path / "out" / e["file"]).num_rows
                                                           for e in manifest["partitions"]]


@pytest.mark.parametrize("partitions", [1, 3, 8])
@pytest.mark.parametrize("replace", [False, True])
def test_a_sample_does_not_depend_on_partitions(cluster, partitions, replace):
    space, run = engine(cluster, "gemm", TINY, partitions=partitions)
    with run:
        rows, info = run.draw(40, seed=11, replace=replace)
    local_rows, local_info = space.draw(40, seed=11, replace=replace)
    assert rows.tolist() == local_rows.tolist() and info == local_info


def test_a_rerun_computes_only_the_missing_shards(cluster, tmp_path):
    out = tmp_path / "out"
    space, run = engine(cluster, "gemm", TINY, partitions=4)
    with run:
        run.enumerate(out, "npy")
    manifest = json.loads((out / NAME).read_text())
    files = [out / e["file"] for e in manifest["partitions"]]
    kept = files[0].stat()
    files[1].unlink()                                   # lost
    files[2].write_bytes(files[2].read_bytes()[:-8])    # truncated under its final name
    manifest["partitions"][3]["sha256"] = None           # an interrupted run had not finished it
    files[3].unlink()
    (out / NAME).write_text(json.dumps(manifest))
    space, run = engine(cluster, "gemm", TINY, partitions=7)   # the manifest's partitions win
    with run:
        again = run.enumerate(out, "npy")
    assert run.shards_written == 3 and again["complete"]
    assert (files[0].stat().st_ino, files[0].stat().st_mtime_ns) == (kept.st_ino, kept.st_mtime_ns)
    single = tmp_path / "single.npy"
    space.write(single, "c")
    assert shards_in_order(out).tobytes() == np.load(single).tobytes()


def test_a_manifest_of_another_run_is_refused(cluster, tmp_path):
    out = tmp_path / "out"
    _, run = engine(cluster, "gemm", TINY, partitions=2)
    with run:
        run.enumerate(out, "npy")
    others = [(dict(TINY, precision="single"), "npy")]
    if importlib.util.find_spec("pyarrow") is not None:
        others.append((TINY, "parquet"))
    for settings, fmt in others:
        _, run = engine(cluster, "gemm", settings)
        with run, pytest.raises(ManifestError, match="another run"):
            run.enumerate(out, fmt)


def test_a_space_file_given_by_a_relative_path(cluster, monkeypatch, capsys):
    """The workers load the file by its absolute path; the run's identity is the same."""
    monkeypatch.chdir(CORPUS)
    name = "crash-c-exact-division-in-integer-derived.py"
    assert main(["count", name, "--engine", "dask", "--scheduler", cluster.scheduler_address, "-q"]) == 0
    assert capsys.readouterr().out.startswith(f"{Space.load(name).count('c')} valid configurations")


def test_command_line(cluster, tmp_path, capsys):
    common = ["gemm", "--set", "device=tiny", "--engine", "dask", "--scheduler", cluster.scheduler_address]
    assert main(["count", *common, "--json"]) == 0
    assert json.loads(capsys.readouterr().out.splitlines()[-1])["count"] == 336
    assert main(["enumerate", *common, "-o", str(tmp_path / "out"), "--format", "npy", "--partitions", "3"]) == 0
    captured = capsys.readouterr()
    assert "wrote 336 configurations" in captured.err and "3/3 partitions done" in captured.err and not captured.out
    assert main(["sample", *common, "-n", "4", "--seed", "5", "-o", str(tmp_path / "s.csv")]) == 0
    assert main(["sample", "gemm", "--set", "device=tiny", "-n", "4", "--seed", "5", "-o", str(tmp_path / "l.csv")]) == 0
    assert (tmp_path / "s.csv").read_text() == (tmp_path / "l.csv").read_text()
    assert main(["enumerate", *common, "-o", str(tmp_path / "out"), "--backend", "reference"]) == 2
    assert "--engine dask runs the compiled enumerator" in capsys.readouterr().err
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "notes.txt").write_text("x")
    assert main(["enumerate", *common, "-o", str(tmp_path / "busy"), "--format", "npy"]) == 2
    assert "not empty" in capsys.readouterr().err


SLOW_SPACE = """
a = range(1200)
b = range(1200)
c = range(1000)
require((a * 7 + b * 13 + c * 17) % 1009 == 3)
"""


@pytest.mark.slow
def test_a_killed_worker_changes_nothing(tmp_path):
    """A worker process killed (SIGKILL) while it writes a shard: the nanny restarts it, the
    scheduler runs its partition again, and the output is still whole and correct."""
    import distributed
    path = tmp_path / "slow.py"
    path.write_text(SLOW_SPACE)
    out = tmp_path / "out"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SOLVERSPACE_CACHE", str(tmp_path / "cache"))
        with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                      dashboard_address=None) as local, distributed.Client(local) as client:
            space, run = engine(local, str(path), partitions=8)
            result = {}

            def enumerate_shards():
                with run:
                    result["manifest"] = run.enumerate(out, "npy")

            thread = threading.Thread(target=enumerate_shards)
            thread.start()
            victim, deadline = None, time.monotonic() + 120
            while victim is None and time.monotonic() < deadline:
                busy = [w for w, keys in client.processing().items() if any("write_task" in str(k) for k in keys)]
                victim = busy[0] if busy else None
                time.sleep(0.05)
            assert victim is not None, "no shard was being written"
            time.sleep(0.3)
            pid = client.run(os.getpid, workers=[victim])[victim]
            os.kill(pid, signal.SIGKILL)
            thread.join(300)
            assert not thread.is_alive()
            assert pid not in client.run(os.getpid).values()   # the worker did die (and was replaced)
    assert result["manifest"]["complete"]
    single = tmp_path / "single.npy"
    space.write(single, "c")
    assert shards_in_order(out).tobytes() == np.load(single).tobytes()
    assert not list(out.glob(".*partial"))


def test_a_malformed_scheduler_address_is_a_message(capsys):
    assert main(["count", "gemm", "--set", "device=tiny", "--engine", "dask", "--scheduler", "no port"]) == 2
    assert "--scheduler 'no port' is not a Dask scheduler address" in capsys.readouterr().err
