"""Benchmark: import and count every T1 file of tests/data/peer_spaces with the C backend (issue 7).

For each file, in a fresh process: the import time (JSON, Values and Expression parsing,
lowering), then the count with the compiled C backend, first with an empty module cache (C
generation and compilation included: what a first `solverspace count FILE.json` costs) and then
with the module cached (what every later run costs). Files the C backend refuses (exact `/`
inside `%` or a sum) are counted with CP-SAT instead, and the line says so. Counts are checked
against the published ones (peer-spaces/README.md) and, for willemsen2025, against the counts
the reference enumerator and CP-SAT agree on.

    python bench/t1_peer_spaces.py [PEER_DIR]
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

DEFAULT_PEER = ROOT / "tests" / "data" / "peer_spaces"
EXPECTED = {
    "benchmark_hub_T1/gemm_milo.json": 116_928, "benchmark_hub_T1/dedispersion_milo.json": 11_130,
    "benchmark_hub_T1/hotspot_milo.json": 82_984, "benchmark_hub_T1/convolution_milo.json": 4_362,
    "benchmark_hub_T1/unused_convolution.json": 6_768, "benchmark_hub_T1/unused_pnpoly.json": 4_092,
    "kernel_tuner_paper_T1/gemm.json": 116_928, "kernel_tuner_paper_T1/hotspot.json": 349_853,
    "willemsen2025/atf_prl.json": 48_720, "willemsen2025/atf_prl2.json": 1_200,
    "willemsen2025/atf_prl4.json": 10_800, "willemsen2025/dedispersion.json": 11_130,
    "willemsen2025/expdist.json": 504_000, "willemsen2025/gemm.json": 116_928,
    "willemsen2025/hotspot.json": 349_853, "willemsen2025/microhh.json": 138_600,
}


def child(path: str) -> None:
    start = time.perf_counter()
    from solverspace.space import Space
    from solverspace.io.t1 import load_t1
    from solverspace.translators.c.backend import CEnumerator
    from solverspace.translators.errors import UnsupportedConstruct
    begin = time.perf_counter()
    space = Space(load_t1(path))
    imported = time.perf_counter() - begin
    result = {"import": imported, "startup": begin - start, "parameters": len(space.parameters)}
    try:
        begin = time.perf_counter()
        result["count"] = space.count("c")
        result["cold"] = time.perf_counter() - begin
        CEnumerator.clear_cache()
        space = Space(load_t1(path))
        begin = time.perf_counter()
        space.count("c")
        result["warm"] = time.perf_counter() - begin
        result["backend"] = "c"
    except UnsupportedConstruct as exc:
        result["refused"] = str(exc).splitlines()[0]
        begin = time.perf_counter()
        result["count"] = space.count("cpsat")
        result["cold"] = result["warm"] = time.perf_counter() - begin
        result["backend"] = "cpsat"
    print(json.dumps(result))


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        return child(sys.argv[2])
    peer = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_PEER
    print(f"machine: {os.cpu_count()} cores; C backend (all cores); times in seconds")
    print(f"{'file':44} {'params':>6} {'count':>9}  {'import':>6}  {'count, cold':>11}  {'count, cached':>13}"
          f"  {'import+count':>12}")
    for path in sorted(peer.glob("*/*.json")):
        name = str(path.relative_to(peer))
        with tempfile.TemporaryDirectory() as cache:
            env = dict(os.environ, SOLVERSPACE_CACHE=cache)
            proc = subprocess.run([sys.executable, __file__, "--child", str(path)], capture_output=True, text=True,
                                  env=env)
        if proc.returncode:
            print(f"{name:44} failed: {proc.stderr.strip().splitlines()[-1]}")
            continue
        r = json.loads(proc.stdout.strip().splitlines()[-1])
        check = "" if EXPECTED.get(name) in (None, r["count"]) else f"  MISMATCH (expected {EXPECTED[name]})"
        note = f"  [{r['backend']}: C refuses: {r['refused'].split(': ', 1)[-1][:70]}]" if "refused" in r else ""
        print(f"{name:44} {r['parameters']:>6} {r['count']:>9}  {r['import']:>6.3f}  {r['cold']:>11.2f}  "
              f"{r['warm']:>13.3f}  {r['import'] + r['warm']:>12.3f}{check}{note}")


if __name__ == "__main__":
    main()
