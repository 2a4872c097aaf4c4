"""Model, DAG level sets, loop plan and placement, explain output."""
import pytest

from solverspace import Space, SpaceDefinitionError
from solverspace.analysis.explain import explain
from solverspace.analysis.plan import make_plan

GEMM_PARAMETERS = ("dim_m dim_n blk_m blk_n blk_k dim_vec vec_mul dim_m_a dim_n_a dim_m_b dim_n_b "
                   "tex_a tex_b shmem_l1 shmem_banks").split()
GEMM_CONSTRAINTS = ["over_max_threads", "over_max_regs_per_thread", "over_max_regs_per_block", "over_max_shmem",
                    "low_occupancy_regs", "low_occupancy_shmem", "low_fmas", "partial_warps",
                    "cant_reshape_a1", "cant_reshape_b1", "cant_reshape_a2", "cant_reshape_b2"]


@pytest.fixture(scope="module")
def gemm():
    return Space.load("gemm")


def test_gemm_has_the_papers_parameters_and_constraints(gemm):
    assert list(gemm.parameters) == GEMM_PARAMETERS
    assert [c.name for c in gemm.model.constraints] == GEMM_CONSTRAINTS
    assert all(c.rejects for c in gemm.model.constraints)


def test_gemm_level_sets(gemm):
    levels = gemm.dag.level_sets
    assert levels[0]["parameters"] == ["dim_m", "dim_n", "blk_k", "dim_vec", "tex_a", "tex_b", "shmem_l1", "shmem_banks"]
    assert levels[1]["parameters"] == ["blk_m", "blk_n", "vec_mul", "dim_n_a", "dim_m_b"]
    assert levels[2]["parameters"] == ["dim_m_a", "dim_n_b"]
    assert sorted(c for level in levels for c in level["constraints"]) == sorted(GEMM_CONSTRAINTS)


def test_gemm_constraints_are_placed_at_the_earliest_loop(gemm):
    plan = gemm.plan
    assert plan.order == tuple(GEMM_PARAMETERS)  # definition order is already topological
    placed = {c.name: level.parameter.name for level in plan.levels for c in level.constraints}
    assert placed == {
        "over_max_threads": "dim_n", "partial_warps": "dim_n",
        "over_max_regs_per_thread": "blk_n", "over_max_regs_per_block": "blk_n", "low_occupancy_regs": "blk_n",
        "over_max_shmem": "blk_k", "low_occupancy_shmem": "blk_k", "low_fmas": "dim_vec",
        "cant_reshape_a1": "dim_n_a", "cant_reshape_a2": "dim_n_a",
        "cant_reshape_b1": "dim_n_b", "cant_reshape_b2": "dim_n_b",
    }


def test_every_input_is_bound_before_use(gemm):
    plan = gemm.plan
    bound = set()
    for level in plan.levels:
        assert level.parameter.depends_on <= bound, level.parameter.name
        bound.add(level.parameter.name)
        for item in (*level.derived, *level.constraints):
            assert item.depends_on <= bound, item.name
            bound.add(item.name)


def test_settings_are_overridable_and_explicit_values_win():
    space = Space.load("gemm", {"device": "a100", "max_threads_per_block": "512"})
    assert space.settings["max_threads_per_block"] == 512
    assert space.settings["max_registers_per_multi_processor"] == 65536
    assert space.model.setting["max_threads_per_block"].overridden
    opt_in = Space.load("gemm", {"device": "h100", "shared_memory": "opt-in"})
    assert opt_in.settings["max_shared_mem_per_block"] == 232448


def test_explain_shows_parameters_levels_and_placement(gemm):
    text = explain(gemm.plan)
    for name in GEMM_PARAMETERS:
        assert f"for {name} in " in text
    for name in GEMM_CONSTRAINTS:
        assert f"test {name}" in text and f"reject_if {name}:" in text
    assert "L0: parameters dim_m, dim_n, blk_k" in text
    assert "for blk_m in range(dim_m, 1025, dim_m):" in text


def test_deferred_definition_order_does_not_change_the_plan():
    a = Space.from_source("@iterator\ndef y(x):\n    return range(x)\nx = range(4)\n")
    b = Space.from_source("x = range(4)\n@iterator\ndef y(x):\n    return range(x)\n")
    assert a.plan.order == b.plan.order == ("x", "y")
    as_dicts = lambda space: [dict(zip(space.parameters, row)) for row in space.rows("reference")]
    assert a.parameters == ("y", "x") and b.parameters == ("x", "y")  # columns: definition order
    assert as_dicts(a) == as_dicts(b)  # rows: the same, in the same (plan) order


def test_a_legal_alternative_loop_order_gives_the_same_set():
    space = Space.from_source("a = range(1, 6)\nb = range(1, 6)\nc = range(a, 8)\nrequire(a * b < c + 4)\n")
    other = Space(space.model, make_plan(space.model, ["b", "a", "c"]))
    assert sorted(space.rows("reference")) == sorted(other.rows("reference"))
    with pytest.raises(ValueError, match="before its input"):
        make_plan(space.model, ["c", "a", "b"])


def test_reassigned_derived_value_used_in_between_keeps_the_old_value():
    space = Space.from_source("x = range(1, 4)\nd = x * 2\ne = d + 1\nd = d * 10\nrequire(e < d)\n")
    env = {"x": 1}
    result = space.check(env)
    assert result.valid and result.derived["e"] == 3 and result.derived["d"] == 20


def test_redefining_a_parameter_is_refused():
    with pytest.raises(SpaceDefinitionError, match="already a parameter"):
        Space.from_source("x = range(3)\nx = range(4)\n")
