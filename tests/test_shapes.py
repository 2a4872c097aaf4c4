"""Settings as runtime inputs (translators.c_shapes): programs that differ only in `INT64_C`
literals share one compiled module, and the shared module run with a program's own constants
gives exactly that program's answers."""
from __future__ import annotations

import numpy as np
import pytest

from solverspace import Space
from solverspace.translators.c import shapes as c_shapes
from solverspace.translators.c.backend import CBackend, CEnumerator
from solverspace.translators.c.build import CompilerError
from solverspace.translators.c.codegen import CDEF, CGenerator
from solverspace.translators.c.optimize import Options

from tests.helpers import SHAPES_SPACE as SPACE

pytestmark = [pytest.mark.needs_cc, pytest.mark.usefixtures("cache")]


def _modules(cache):
    return sorted(p.name for p in cache.glob("_ss_*.so"))


def _load(tmp_path, extra="", **settings):
    path = tmp_path / "space.py"
    path.write_text(SPACE + extra)
    return Space.load(str(path), {k: str(v) for k, v in settings.items()})


def _agree(space):
    c, reference = CBackend().count(space.plan).count, space.count("reference")
    assert c == reference
    assert np.array_equal(CBackend().array(space.plan), space.to_array("reference"))
    return c


def test_values_of_one_shape_compile_twice_and_agree_with_the_reference(tmp_path, cache):
    counts = []
    for limit in (9, 12, 17, 23, 31):
        counts.append(_agree(_load(tmp_path, LIMIT=limit)))
        assert len(_modules(cache)) == min(len(counts), 2)   # the first exact, then one shared module
    assert len(set(counts)) == len(counts)                    # the values really changed the answer
    entry = next(cache.glob("shape_*.json"))
    assert '"places": [' in entry.read_text()


def test_interleaved_programs_of_one_module_each_run_with_their_own_constants(tmp_path, cache):
    spaces = [_load(tmp_path, LIMIT=limit) for limit in (9, 12, 17)]
    expected = [s.count("reference") for s in spaces]
    backend = CBackend()
    for _ in range(2):
        for space, want in zip(spaces, expected):
            assert backend.count(space.plan).count == want
    shared = [CEnumerator.get(s.plan) for s in spaces]
    assert shared[1].module is shared[2].module and shared[1].shaped.constants != shared[2].shaped.constants


def test_positions_of_a_shared_module_are_the_programs_own(tmp_path, cache):
    for limit in (9, 14, 20):
        space = _load(tmp_path, LIMIT=limit)
        rows = space.to_array("reference")
        positions = CBackend().positions(space.plan)
        picked = [0, len(rows) // 2, len(rows) - 1]
        assert np.array_equal(positions.rows_at(picked), CBackend().array(space.plan)[picked])


def test_a_different_structure_is_a_different_shape(tmp_path, cache):
    for step in (1, 2, 3):   # the step changes the loop's code, not only a literal
        _agree(_load(tmp_path, STEP=step))
    texts_a, _ = c_shapes.split_literals("static const int64_t t[] = {1, 2}; x = INT64_C(4);")
    texts_b, literals_b = c_shapes.split_literals("static const int64_t t[] = {1, 3}; x = INT64_C(5);")
    assert texts_a != texts_b and literals_b == [5]


def test_a_shape_that_cannot_share_compiles_each_program_on_its_own(tmp_path, cache, monkeypatch):
    real_build = c_shapes.build

    def refuse_shared(source, cdef, **flags):
        if c_shapes.SET_CONSTANTS_CDEF in cdef:
            raise CompilerError("error: initializer element is not constant")
        return real_build(source, cdef, **flags)

    monkeypatch.setattr(c_shapes, "build", refuse_shared)
    for limit in (9, 12, 17):
        _agree(_load(tmp_path, LIMIT=limit))
    assert len(_modules(cache)) == 3
    assert '"places": "never"' in next(cache.glob("shape_*.json")).read_text()


def test_a_program_whose_shape_module_is_built_is_reported_built(tmp_path, cache):
    """`auto` asks whether C would compile: not for a program its shape's module serves."""
    extra = "require(x != 5)\n"    # programs no other test compiled in this process
    backend = CBackend()
    for limit in (9, 12):
        backend.count(_load(tmp_path, extra, LIMIT=limit).plan)

    def source(space):
        return CGenerator(space.plan, Options()).generate().source

    assert c_shapes.is_built_shaped(source(_load(tmp_path, extra, LIMIT=17)), CDEF)   # differs where 12 did
    assert not c_shapes.is_built_shaped(source(_load(tmp_path, extra + "require(y != 4)\n")), CDEF)
