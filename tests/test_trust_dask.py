"""Issue 23, item 6 and the Dask lines of "Weak": a sharded output directory's manifest is trusted
only as far as it is checked, and a --scheduler that cannot be reached fails at once.

- A rerun over a manifest with a partition missing reported success ("wrote 336 configurations"
  with 272 rows on disk); an entry's `file` of "../victim.npy" or an absolute path was written to.
  Now the partitions must be the writer's: listed in order, named `shard_name(...)`, covering the
  units contiguously, with rows that are this space's and add up to the total.
- `--scheduler tcp://127.0.0.1:1` (nothing listening) or a port past 65535 waited 10 s for Dask's
  connect timeout; now it is refused with what is wrong.

The cluster here is in this process (threads, TCP): its worker computes the run's identity from
the same loaded code as the driver, and starting it takes a fraction of a second.
"""
from __future__ import annotations

import copy
import json
import shutil
import socket
from pathlib import Path

import pytest

pytest.importorskip("distributed", reason="Dask's distributed scheduler (the `dask` extra) is not installed")

from solverspace.cli import main  # noqa: E402
from solverspace.core import manifest as shards  # noqa: E402
from solverspace.core.manifest import NAME, ManifestError, shard_name  # noqa: E402

TINY = ["gemm", "--set", "device=tiny"]


@pytest.fixture(scope="module")
def scheduler(tmp_path_factory):
    """The TCP address of a one-worker cluster running in this process."""
    import distributed
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SOLVERSPACE_CACHE", str(tmp_path_factory.mktemp("c-cache")))
        with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False, protocol="tcp://",
                                      dashboard_address=None) as local:
            yield local.scheduler_address


def enumerate_command(scheduler, out: Path, *more) -> list[str]:
    return ["enumerate", *TINY, "--engine", "dask", "--scheduler", scheduler, "-q", "--format", "npy",
            "-o", str(out), *more]


@pytest.fixture(scope="module")
def written(scheduler, tmp_path_factory) -> Path:
    """A complete output directory of 3 .npy shards (copied by each test that edits it)."""
    out = tmp_path_factory.mktemp("written") / "out"
    assert main(enumerate_command(scheduler, out, "--partitions", "3")) == 0
    return out


def copy_of(written: Path, tmp_path: Path) -> tuple[Path, dict]:
    out = tmp_path / "out"
    shutil.copytree(written, out)
    return out, json.loads((out / NAME).read_text())


def save(out: Path, manifest: dict) -> None:
    (out / NAME).write_text(json.dumps(manifest))


pytestmark = pytest.mark.needs_cc


# ------------------------------------------------------------------------------------ the reported cases
def test_a_missing_partition_is_refused_not_reported_as_written(scheduler, written, tmp_path, capsys):
    out, manifest = copy_of(written, tmp_path)
    assert len(manifest["partitions"]) == 3 and manifest["total"] == 336
    lost = manifest["partitions"].pop(1)
    (out / lost["file"]).unlink()
    save(out, manifest)
    capsys.readouterr()
    assert main(enumerate_command(scheduler, out)) == 2
    captured = capsys.readouterr()
    assert "wrote" not in captured.out + captured.err
    assert "partition entry 1" in captured.err and "delete the directory" in captured.err
    assert sorted(p.name for p in out.iterdir()) == sorted([NAME, manifest["partitions"][0]["file"],
                                                            manifest["partitions"][1]["file"]])


@pytest.mark.parametrize("where", ["../victim.npy", "absolute"])
def test_an_entry_never_writes_outside_the_directory(scheduler, written, tmp_path, capsys, where):
    out, manifest = copy_of(written, tmp_path)
    victim = tmp_path / "victim.npy"
    victim.write_bytes(b"precious")
    entry = manifest["partitions"][1]
    entry["file"] = str(victim) if where == "absolute" else where
    entry["bytes"] = entry["sha256"] = None            # "not written yet": the rerun would write it
    save(out, manifest)
    capsys.readouterr()
    assert main(enumerate_command(scheduler, out)) == 2
    err = capsys.readouterr().err
    assert victim.read_bytes() == b"precious"
    assert f"partition 1 names the file {entry['file']!r}" in err and "'part-00001.npy'" in err


# ------------------------------------------------------------------------------------ every other edit
def drop_last(m):
    """Units and total shortened consistently with the partitions: only this space's counts tell."""
    gone = m["partitions"].pop()
    m["units"], m["total"] = m["partitions"][-1]["units"][1], m["total"] - gone["rows"]


def shift_cut(m):
    m["partitions"][0]["units"][1] -= 1
    m["partitions"][1]["units"][0] -= 1


def gap(m):
    m["partitions"][1]["units"][0] += 1


def overlap(m):
    m["partitions"][1]["units"][0] -= 1


def move_rows(m):
    m["partitions"][0]["rows"] += 1
    m["partitions"][1]["rows"] -= 1


EDITS = {
    "renamed": (lambda m: m["partitions"][2].update(file="part-2.npy"), "partition 2 names the file"),
    "other format": (lambda m: m["partitions"][0].update(file="part-00000.parquet"), "partition 0 names the file"),
    "subdirectory": (lambda m: m["partitions"][0].update(file="sub/part-00000.npy"), "partition 0 names the file"),
    "reindexed": (lambda m: m["partitions"][0].update(index=1), "partition entry 0 has index 1"),
    "bool index": (lambda m: m["partitions"][1].update(index=True), "partition entry 1 has index True"),
    "gap": (gap, "partition 1 covers units"),
    "overlap": (overlap, "partition 1 covers units"),
    "short of the units": (lambda m: m.update(units=m["units"] + 1), "are in no partition"),
    "rows off the total": (lambda m: m.update(total=m["total"] + 1), "the manifest's total is 337"),
    "negative rows": (lambda m: m["partitions"][0].update(rows=-1), "partition 0 has rows -1"),
    "units not a pair": (lambda m: m["partitions"][0].update(units=[0]), "partition 0 has units [0]"),
    "digest without size": (lambda m: m["partitions"][0].update(bytes=None), "partition 0 records bytes None"),
    "digest not hex": (lambda m: m["partitions"][0].update(sha256="../x"), "partition 0 records bytes"),
    "no partitions": (lambda m: m.update(partitions=[]), "'partitions' is []"),
    "depth a string": (lambda m: m.update(depth="2"), "'depth' is '2'"),
    # consistent in themselves: refused by this space's counts
    "dropped last": (drop_last, "the manifest has"),
    "cut shifted": (shift_cut, "partition 0 holds"),
    "rows moved": (move_rows, "partition 0 holds"),
}


@pytest.mark.parametrize("edit", list(EDITS))
def test_an_edited_manifest_is_refused_naming_what(scheduler, written, tmp_path, capsys, edit):
    change, expected = EDITS[edit]
    out, manifest = copy_of(written, tmp_path)
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.name != NAME}
    change(manifest)
    save(out, manifest)
    capsys.readouterr()
    assert main(enumerate_command(scheduler, out)) == 2
    err = capsys.readouterr().err
    assert expected in err and str(out / NAME) in err and "delete the directory" in err, err
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.name != NAME} == before


def test_the_writers_own_manifest_passes_every_check(written):
    """The checks accept what the writer makes, also with a shard not yet written."""
    manifest = json.loads((written / NAME).read_text())
    shards.check_layout(manifest, written, "npy")
    counts = [0] * manifest["units"]
    for entry in manifest["partitions"]:
        counts[entry["units"][0]] = entry["rows"]        # any counts with these partition sums
    shards.check_counts(manifest, written, counts)
    unwritten = copy.deepcopy(manifest)
    unwritten["partitions"][1].update(bytes=None, sha256=None)
    shards.check_layout(unwritten, written, "npy")
    moved = counts[:-1] + [counts[-1] + 1]
    moved[0] -= 1                                        # same total, one row in another partition
    with pytest.raises(ManifestError, match="partition 0 holds"):
        shards.check_counts(manifest, written, moved)


def test_a_manifest_of_another_run_with_a_damaged_description_is_refused(tmp_path):
    with pytest.raises(ManifestError, match="describes another run"):
        shards.check_same_run({"version": shards.VERSION, "identity": "other", "run": "x"}, "mine", tmp_path,
                              {"space": "gemm", "settings": {"device": "tiny"}})


def test_shard_names_are_the_writers_whatever_the_partition_count():
    assert [shard_name(i, 3, "npy") for i in range(3)] == ["part-00000.npy", "part-00001.npy", "part-00002.npy"]
    assert shard_name(123456, 200000, "parquet") == "part-123456.parquet"


# ------------------------------------------------------------------------------------ --scheduler
def closed_loopback_port() -> int:
    """A loopback port nothing listens on (bound by the system, then closed)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.mark.parametrize("address, expected", [
    (f"tcp://127.0.0.1:{closed_loopback_port()}", "connection refused (nothing listens on port"),
    ("tcp://127.0.0.1:99999", "port 99999 is not a TCP port (1 to 65535)"),
    ("127.0.0.1:0", "port 0 is not a TCP port"),
    ("tcp://127.0.0.1:abc", "is not a Dask scheduler address"),
    ("tcp://127.0.0.1", "is not a Dask scheduler address (missing port number"),
])
def test_a_scheduler_that_cannot_be_reached_is_refused_at_once(capsys, address, expected):
    assert main(["count", *TINY, "--engine", "dask", "--scheduler", address]) == 2
    err = capsys.readouterr().err
    assert expected in err and repr(address) in err and "Traceback" not in err, err
    assert "tcp://HOST:8786" in err


@pytest.mark.parametrize("listener", ["silent", "closes"])
def test_a_listener_that_is_no_scheduler_is_refused(monkeypatch, capsys, listener):
    """Dask's client waits forever for the handshake of a listener that never sends one (at
    5b00030 this command did not return); here it is refused after HANDSHAKE_TIMEOUT."""
    import threading

    from solverspace.scale import dask_engine
    monkeypatch.setattr(dask_engine, "HANDSHAKE_TIMEOUT", 0.5)
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)    # the kernel accepts the connection; nothing here ever writes to it
        if listener == "closes":
            threading.Thread(target=lambda: server.accept()[0].close(), daemon=True).start()
        address = f"tcp://127.0.0.1:{server.getsockname()[1]}"
        assert main(["count", *TINY, "--engine", "dask", "--scheduler", address]) == 2
    err = capsys.readouterr().err
    expected = "sent no Dask handshake within 0.5 s" if listener == "silent" else "closed the connection without"
    assert expected in err and "is it a Dask scheduler?" in err, err
