"""Kernel Tuner cache files as records (issue 26): `tune` writing a cache as it measures (read back
by Kernel Tuner's own reader), `tune` measuring from a complete cache (the cache's true best,
proven), failed entries, open (still being written) caches, caches of other parameters refused,
`check_cache`, and T4 results validated against the T4 results schema (odgaard/TuningSchema,
branch T4, commit a559a08, `results-schema.json`, copied to tests/data/t4-results-schema.json)."""
from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from solverspace import Space
from solverspace.core.errors import OptionError, OutputError
from solverspace.integrations.kernel_tuner.cache import CacheMeasure, CacheWriter, T4Writer, cache_key, check_cache, read_cache

SPACE = """
a = range(1, 9)
b = iterator([1, 2, 4, 8, 16])
c = range(0, 3)
require(a * b <= 64)
require((a + c) % 2 == 0)
"""
MODEL = "a * b / 100 + c / 50 + 1 / 100"


def model_time(config) -> float:
    return config["a"] * config["b"] / 100 + config["c"] / 50 + 0.01 + 1e-9   # above the exact model


def write_cache(path: Path, space: Space, *, noise_seed=0, drop=(), add=(), failed=(), close=True,
                names=None) -> dict:
    """A complete Kernel Tuner cache of `space` in Kernel Tuner's own layout: time = the model plus
    seeded non-negative noise (ms). Returns {key: seconds} of the entries that ran."""
    rng = random.Random(noise_seed)
    names = list(names or space.parameters)
    header = {"device_name": "Simulation", "kernel_name": "toy", "problem_size": [1], "tune_params_keys": names,
              "tune_params": {n: list(v) for n, v in space.value_lists().items()}, "objective": "time", "cache": {}}
    text = json.dumps(header, indent="")[:-3]
    times = {}
    rows = [dict(zip(space.parameters, row)) for row in space.rows("reference")] + [dict(x) for x in add]
    for config in rows:
        key = cache_key(config[n] for n in names)
        if key in drop:
            continue
        entry = {n: config[n] for n in names}
        if key in failed:
            entry["time"] = "CompilationFailedConfig"
        else:
            seconds = model_time(config) * (1 + rng.random() * 0.5)
            entry["time"] = seconds * 1000
            entry["times"] = [seconds * 1000]
            times[key] = seconds
        text += "\n" + json.dumps({key: entry})[1:-1] + ","
    if close:
        text = text[:-1] + "}\n}"
    path.write_text(text)
    return times


def test_measure_from_a_complete_cache_finds_its_true_best_proven(tmp_path):
    space = Space.from_source(SPACE)
    cache = tmp_path / "toy.json"
    times = write_cache(cache, space, noise_seed=3)
    best_key = min(times, key=times.get)
    result = space.tune(CacheMeasure(space, cache), MODEL)
    assert result.proven
    assert cache_key(result.best.values()) == best_key
    assert result.time == pytest.approx(times[best_key])
    assert result.measured < len(times)


def test_failed_entries_are_failed_measurements_and_a_missing_one_stops(tmp_path):
    space = Space.from_source(SPACE)
    cache = tmp_path / "toy.json"
    rows = [dict(zip(space.parameters, r)) for r in space.rows("reference")]
    cheapest = min(rows, key=model_time)
    key = cache_key(cheapest.values())
    times = write_cache(cache, space, failed={key})
    result = space.tune(CacheMeasure(space, cache), MODEL)
    assert any(cache_key(m.configuration.values()) == key and m.status == "failed" for m in result.failed)
    assert cache_key(result.best.values()) == min(times, key=times.get)
    write_cache(cache, space, drop={key})
    with pytest.raises(OptionError, match="not in the cache"):
        space.tune(CacheMeasure(space, cache), MODEL)


def test_a_cache_of_other_parameters_or_order_is_refused_naming_the_difference(tmp_path):
    space = Space.from_source(SPACE)
    cache = tmp_path / "toy.json"
    write_cache(cache, space, names=["b", "a", "c"])
    with pytest.raises(OptionError, match="another order"):
        CacheMeasure(space, cache)
    write_cache(cache, space, names=["a", "b"])
    with pytest.raises(OptionError, match=r"lacks \['c'\]"):
        CacheMeasure(space, cache)
    write_cache(cache, space)
    with pytest.raises(OptionError, match="another kernel"):
        CacheMeasure(space, cache, kernel_name="other")
    with pytest.raises(OptionError, match=r"another device: 'Simulation', not 'A100'"):
        CacheMeasure(space, cache, device_name="A100")
    CacheMeasure(space, cache, kernel_name="toy", device_name="Simulation")     # its own: taken
    cache.write_text('{"results": {"x": 1}\n}')
    with pytest.raises(OutputError, match="not a Kernel Tuner cache"):
        CacheMeasure(space, cache)


def test_an_open_cache_is_read_as_kernel_tuner_reads_it(tmp_path):
    space = Space.from_source(SPACE)
    cache = tmp_path / "toy.json"
    times = write_cache(cache, space, close=False)
    data = read_cache(cache)
    assert len(data["cache"]) == len(times) and cache.read_text().endswith(",")   # never changed
    kt_util = pytest.importorskip("kernel_tuner.util")
    theirs = kt_util.read_cache(str(cache), open_cache=False)
    assert set(theirs["cache"]) == set(data["cache"])
    cut = cache.read_text()
    for complete in (cut[:-1], cut[:cut.index('"cache": {') + len('"cache": {')]):   # no comma yet; no entry yet
        cache.write_text(complete)
        ours, theirs = read_cache(cache), kt_util.read_cache(str(cache), open_cache=False)
        assert ours["cache"] == {k: v for k, v in theirs["cache"].items()} and ours["tune_params_keys"] == \
            theirs["tune_params_keys"]
    assert len(ours["cache"]) == 0 and cache.read_text() == complete     # the header alone; the file unchanged
    cache.write_text(cut[:-20])    # cut inside the last line: Kernel Tuner cannot read it either
    with pytest.raises(OutputError, match="not readable"):
        read_cache(cache)
    with pytest.raises(ValueError):
        kt_util.read_cache(str(cache), open_cache=False)


def test_tune_writes_a_cache_kernel_tuner_reads_while_running_and_after(tmp_path):
    kt_util = pytest.importorskip("kernel_tuner.util")
    space = Space.from_source(SPACE)
    out = tmp_path / "run.json"
    writer = CacheWriter(space, out, kernel_name="toy", device_name="Simulation")
    seen = []

    class Peek:
        def add(self, m):
            seen.append(len(kt_util.read_cache(str(out), open_cache=False)["cache"]))

        def close(self):
            pass

    def failing(config):
        if config["a"] == 2 and config["c"] == 0:
            raise RuntimeError("kernel crashed")
        return model_time(config)

    result = space.tune(failing, MODEL, top=3, sinks=[writer, Peek()])
    assert seen == list(range(1, len(seen) + 1))          # readable after every measurement
    data = kt_util.read_cache(str(out), open_cache=False)
    json.loads(out.read_text())                            # closed: plain JSON
    assert data["tune_params_keys"] == list(space.parameters)
    assert len(data["cache"]) == result.measured
    for m in result.top:
        entry = data["cache"][cache_key(m.configuration.values())]
        assert entry["time"] == pytest.approx(m.time * 1000)
    failed = [e for e in data["cache"].values() if "__error__" in e]
    assert len(failed) == len(result.failed) >= 1 and all(str(e["__error__"]) == "RuntimeFailedConfig" for e in failed)
    # the written cache replays: measuring from it gives the same best
    again = space.tune(CacheMeasure(space, out), MODEL, top=3, max_measurements=len(data["cache"]))
    assert again.best == result.best
    # continuing the same cache writes nothing twice; another kernel's cache is refused
    CacheWriter(space, out, kernel_name="toy", device_name="Simulation").close()
    assert len(kt_util.read_cache(str(out), open_cache=False)["cache"]) == len(data["cache"])
    with pytest.raises(OptionError, match="another kernel"):
        CacheWriter(space, out, kernel_name="other", device_name="Simulation")


def test_check_cache_finds_a_removed_entry_and_an_added_invalid_one(tmp_path):
    space = Space.from_source(SPACE)
    cache = tmp_path / "toy.json"
    write_cache(cache, space)
    assert check_cache(space, cache).ok
    removed = next(iter(space.rows("reference")))
    invalid = {"a": 8, "b": 16, "c": 0}
    assert not space.check(invalid).valid
    write_cache(cache, space, drop={cache_key(removed)}, add=[invalid])
    found = check_cache(space, cache)
    assert not found.ok
    assert found.missing == [tuple(removed)]
    assert [key for key, _ in found.invalid] == [cache_key(invalid.values())]


def test_t4_output_follows_the_t4_results_schema(tmp_path):
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((Path(__file__).parent / "data" / "t4-results-schema.json").read_text())
    space = Space.from_source(SPACE)
    out = tmp_path / "t4.json"

    def failing(config):
        if config["a"] == 1:
            raise RuntimeError("no")
        return model_time(config)
    result = space.tune(failing, MODEL, top=2, sinks=[T4Writer(space, out)])
    document = json.loads(out.read_text())
    jsonschema.validate(document, schema)
    assert len(document["results"]) == result.measured
    assert {r["invalidity"] for r in document["results"]} == {"correct", "runtime"}
    bad = {"schema_version": "1.0.0", "results": [{"configuration": {}, "times": {}, "invalidity": "fine",
                                                   "correctness": 1}]}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, schema)


# ---------------------------------------------------------------------------------- the command line
def run_cli(capsys, *argv) -> tuple[int, str, str]:
    from solverspace.cli import main
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_tune_measure_from_kt_cache_t4_and_cache_check(tmp_path, capsys):
    source = tmp_path / "toy.py"
    source.write_text(SPACE)
    space = Space.load(source)
    cache = tmp_path / "brute.json"
    times = write_cache(cache, space, noise_seed=5)
    out_cache, t4 = tmp_path / "replay.json", tmp_path / "t4.json"
    code, out, err = run_cli(capsys, "tune", str(source), "--measure-from", str(cache), "--bound", MODEL,
                             "--db", str(tmp_path / "t.sqlite"), "--kt-cache", str(out_cache), "--t4", str(t4),
                             "--kt-kernel-name", "toy", "--json")
    assert code == 0, err
    result = json.loads(out)
    assert result["proven"] and cache_key(result["best"].values()) == min(times, key=times.get)
    written = read_cache(out_cache)
    assert written["kernel_name"] == "toy" and len(written["cache"]) == result["measured"]
    assert len(json.loads(t4.read_text())["results"]) == result["measured"]
    assert run_cli(capsys, "cache-check", str(source), str(cache))[0] == 0
    removed = next(iter(space.rows("reference")))
    write_cache(cache, space, drop={cache_key(removed)}, add=[{"a": 8, "b": 16, "c": 0}])
    code, out, _ = run_cli(capsys, "cache-check", str(source), str(cache))
    assert code == 1 and f"missing: {cache_key(removed)}" in out and "invalid: 8,16,0" in out
    code, out, _ = run_cli(capsys, "cache-check", str(source), str(cache), "--json")
    assert code == 1 and json.loads(out)["missing"] == [list(removed)]
    # bad input: exit 2 with a message
    code, _, err = run_cli(capsys, "tune", str(source), "--bound", MODEL)
    assert code == 2 and "exactly one of --measure" in err
    write_cache(cache, space, names=["c", "b", "a"])
    code, _, err = run_cli(capsys, "tune", str(source), "--measure-from", str(cache), "--bound", MODEL,
                           "--db", str(tmp_path / "t.sqlite"))
    assert code == 2 and "another order" in err


def test_a_gzip_compressed_cache_is_read_as_its_text(tmp_path, monkeypatch):
    """The benchmark hub ships its caches as .json.gz: measuring from one (and `check_cache`) reads
    the decompressed text; a cut stream, a bomb past the read limit and appending to one are refused."""
    import gzip
    space = Space.from_source(SPACE)
    plain = tmp_path / "cache.json"
    times = write_cache(plain, space)
    packed = tmp_path / "cache.json.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    assert read_cache(packed)["cache"] == read_cache(plain)["cache"]
    measure = CacheMeasure(space, packed)
    key, seconds = next(iter(times.items()))
    config = dict(zip(space.parameters, (int(v) for v in key.split(","))))
    assert measure.once(config) == pytest.approx(seconds)
    assert measure.identity == CacheMeasure(space, plain).identity     # the same measurements, reused
    assert check_cache(space, packed).ok
    cut = tmp_path / "cut.json.gz"
    cut.write_bytes(packed.read_bytes()[:-20])
    with pytest.raises(OutputError, match="cut short"):
        read_cache(cut)
    monkeypatch.setenv("SOLVERSPACE_MAX_READ_BYTES", str(packed.stat().st_size + 1))
    with pytest.raises(OutputError, match="decompresses to more than"):
        read_cache(packed)
    monkeypatch.delenv("SOLVERSPACE_MAX_READ_BYTES")
    for target in (packed, tmp_path / "new.json.gz"):
        with pytest.raises(OutputError, match="gzip-compressed|plain cache"):
            CacheWriter(space, target)
