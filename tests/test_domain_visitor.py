"""Domains are walked by visitors that handle every domain node (`ir.DomainVisitor`), and tree
rewrites rebuild nodes with one `ir.map_children`."""
from __future__ import annotations

import importlib
import pytest

from tests.helpers import project_modules
from solverspace.lang import ir


def _all_subclasses(cls):
    found, stack = [], [cls]
    while stack:
        for sub in stack.pop().__subclasses__():
            if sub not in found:
                found.append(sub)
                stack.append(sub)
    return found


def _domain_visitors():
    for name, path in project_modules().items():
        if "DomainVisitor" not in path.read_text(encoding="utf-8"):
            continue   # (space files such as gemm/space.py are not importable modules)
        try:
            importlib.import_module(name)
        except ImportError:   # an optional dependency (ortools, dask, optuna) is not installed
            continue
    return [cls for cls in _all_subclasses(ir.DomainVisitor) if cls.__module__ != __name__]


def test_every_domain_visitor_handles_every_domain_node():
    visitors = _domain_visitors()
    assert len(visitors) >= 8, [v.__qualname__ for v in visitors]   # the walks converted from ladders
    missing = {f"{v.__module__}.{v.__qualname__}": ir.missing_domain_methods(v) for v in visitors}
    assert {k: m for k, m in missing.items() if m} == {}


def test_domain_nodes_are_the_domain_classes():
    assert set(ir.domain_nodes()) == {ir.Range, ir.Values, ir.SetOp, ir.IfDomain, ir.Closure,
                                      ir.Permutation, ir.Interleave, ir.Sequence}


def test_a_visitor_that_misses_a_node_is_refused_when_defined():
    with pytest.raises(TypeError, match=r"lacks _size_Closure, .*_size_Sequence"):
        class Sizes(ir.DomainVisitor):
            domain_walks = ("_size_",)

            def _size_Range(self, node):
                return 0
            _size_Values = _size_SetOp = _size_IfDomain = _size_Range


def test_a_new_domain_node_is_refused_by_the_visitors_that_do_not_know_it(monkeypatch):
    class Walk(ir.DomainVisitor):
        domain_walks = ("_w_",)

        def _w_node(self, node):
            return type(node).__name__
        _w_Range = _w_Values = _w_SetOp = _w_IfDomain = _w_Closure = _w_node
        _w_Permutation = _w_Interleave = _w_Sequence = _w_node

    assert Walk().dispatch("_w_", ir.Values((ir.Const(1),))) == "Values"

    class Cycle:   # a hypothetical new domain node (not made a subclass: it would stay one)
        pass
    known = ir.domain_nodes()
    monkeypatch.setattr(ir, "domain_nodes", lambda: (*known, Cycle))
    assert ir.missing_domain_methods(Walk) == ["_w_Cycle"]
    with pytest.raises(TypeError, match="lacks _w_Cycle"):
        class Again(Walk):
            pass
    monkeypatch.undo()
    assert ir.missing_domain_methods(Walk) == []


def test_set_operators_may_have_one_method_each():
    class PerOperator(ir.DomainVisitor):
        domain_walks = ("_p_",)

        def _p_node(self, node):
            return "node"

        def _p_Union(self, node):
            return "union"
        _p_Range = _p_Values = _p_IfDomain = _p_Closure = _p_Permutation = _p_Interleave = _p_Sequence = _p_node
        _p_Intersection = _p_Difference = _p_node

    r = ir.Values((ir.Const(1),))
    assert PerOperator().dispatch("_p_", ir.SetOp("union", r, r)) == "union"
    assert PerOperator().dispatch("_p_", ir.SetOp("difference", r, r)) == "node"
    with pytest.raises(TypeError, match="_q_SetOp"):
        class Partly(ir.DomainVisitor):
            domain_walks = ("_q_",)
            _q_Range = _q_Values = _q_IfDomain = _q_Closure = _q_Permutation = _q_Interleave = _q_Sequence = None
            _q_Union = _q_Intersection = None


def _closure():
    def gen(a):
        yield a
    return ir.Closure("gen", gen, ("a",), 3)


TREES = [
    ir.BinOp("+", ir.Ref("a"), ir.Const(2)),
    ir.IfExp(ir.Compare("<", ir.Ref("a"), ir.Ref("b")), ir.Neg(ir.Ref("a")), ir.Abs(ir.Ref("b"))),
    ir.And((ir.Ref("a"), ir.Not(ir.Ref("b")), ir.Or((ir.Ref("c"),)))),
    ir.Min((ir.Ref("a"), ir.Const(1))),
    ir.Range(ir.Const(0), ir.Ref("n"), ir.Const(2)),
    ir.Values((ir.Const("x"), ir.Ref("a"))),
    ir.Values(()),
    ir.SetOp("union", ir.Values((ir.Const(1),)), ir.Range(ir.Const(0), ir.Ref("a"), ir.Const(1))),
    ir.IfDomain(ir.Ref("c"), ir.Values((ir.Const(1),)), ir.Range(ir.Ref("a"), ir.Const(9), ir.Const(1))),
    ir.Permutation((ir.Const(1), ir.Ref("a"))),
    ir.Interleave((ir.Values((ir.Const(1),)), ir.Values((ir.Ref("a"),)))),
    ir.Sequence((ir.Const(1), ir.Const(2)), ir.Const(0), ir.Ref("n")),
    ir.OrderFn("position", (ir.Ref("o"), ir.Const(1))),
]


@pytest.mark.parametrize("tree", TREES, ids=lambda t: type(t).__name__)
def test_map_children_round_trip(tree):
    assert ir.map_children(tree, lambda c: c) is tree     # nothing changed: the same object
    copied = ir.map_children(tree, lambda c: ir.map_children(c, lambda g: g) if c.children() else
                             type(c)(*(getattr(c, f) for f in c.__match_args__)))
    assert copied == tree
    renamed = ir.substitute(tree, {"a": ir.Ref("z")})
    assert ir.substitute(renamed, {"z": ir.Ref("a")}) == tree
    if "a" in ir.refs(tree):
        assert renamed != tree and "a" not in ir.refs(renamed)


def test_map_children_maps_each_child_left_to_right():
    seen = []

    def fn(child):
        seen.append(child)
        return ir.Const(len(seen)) if isinstance(child, ir.Ref) else child
    tree = ir.Sequence((ir.Ref("a"), ir.Const(7)), ir.Ref("b"), ir.Ref("c"))
    assert ir.map_children(tree, fn) == ir.Sequence((ir.Const(1), ir.Const(7)), ir.Const(3), ir.Const(4))
    assert seen == [ir.Ref("a"), ir.Const(7), ir.Ref("b"), ir.Ref("c")]


def test_map_children_leaves_a_closure_and_its_input_names():
    closure = _closure()
    assert ir.map_children(closure, lambda c: ir.Const(0)) is closure
    assert ir.substitute(closure, {"a": ir.Ref("z")}) is closure
    assert ir.map_children(ir.Const(3), lambda c: ir.Const(0)) == ir.Const(3)


def test_rebuild_is_iterative_and_substitutes_deep_trees():
    tree = ir.Ref("a")
    for _ in range(5000):
        tree = ir.BinOp("-", tree, ir.Ref("b"))
    out = ir.substitute(tree, {"b": ir.Const(1)})
    assert ir.refs(out) == {"a"}
    assert sum(1 for n in ir.walk(out) if n == ir.Const(1)) == 5000
