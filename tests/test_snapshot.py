"""Behaviour is unchanged by refactoring: every count, refusal, output file (CSV, JSON Lines,
.npy), seeded sample, position and generated C program of a set of spaces equals the snapshot
`tests/data/snapshot.json`, recorded on the code before issue 12's restructuring (commit 5081ed0,
with `python -m solverspace.validation.snapshot write`). The default run compares the test corpus
and the generated spaces stored in the snapshot; `-m slow` adds the 16 K40c GEMM variants and the
T1 files of tests/data/peer_spaces.

A deliberate change of behaviour updates the snapshot (`write --generated-from` keeps the same
generated spaces) in the same commit, and says why.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from solverspace.validation import snapshot

SNAPSHOT = Path(__file__).parent / "data" / "snapshot.json"

pytestmark = [pytest.mark.needs_cc, pytest.mark.needs_cpsat]


def _compare(kinds) -> list[str]:
    document = json.loads(SNAPSHOT.read_text(encoding="utf-8"))
    actual = snapshot.record(False, document["generated"], kinds=kinds)
    assert actual, "no spaces to compare"
    expected = {key: value for key, value in document["entries"].items() if key in actual}
    return snapshot.differences(expected, actual)


def test_corpus_and_generated_spaces_answer_as_in_the_snapshot():
    assert _compare(("corpus", "generated")) == []


@pytest.mark.slow
def test_gemm_variants_and_t1_files_answer_as_in_the_snapshot():
    if not snapshot.PEER.is_dir():
        pytest.skip(f"no peer spaces at {snapshot.PEER}")
    assert _compare(("gemm", "t1")) == []
