"""Every registered backend has, for each capability it declares, the methods of that
capability's protocol (`solverspace.core.protocols`, named by `backends.PROTOCOLS`) with the
protocol's parameters: names, positional or keyword-only, defaults. A backend may take more
parameters, each optional; a protocol parameter without a default may have one in the backend.
"""
from __future__ import annotations

import inspect

import pytest

from solverspace.registry import backends
from solverspace.registry.backends import CAPABILITIES, PROTOCOLS, REGISTRY, BackendEntry, get_backend
from solverspace.core.errors import BackendUnavailableError

POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
VARIADIC = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)


def protocol_methods(protocol) -> dict[str, inspect.Signature]:
    """The methods a protocol declares, with their signatures less `self`."""
    found = {}
    for name, member in vars(protocol).items():
        if inspect.isfunction(member) and not name.startswith("_"):
            signature = inspect.signature(member)
            found[name] = signature.replace(parameters=list(signature.parameters.values())[1:])
    return found


def problems(obj, protocol) -> list[str]:
    """What `obj` lacks or has otherwise than `protocol` (empty: it conforms)."""
    found = []
    for name, wanted in protocol_methods(protocol).items():
        method = getattr(obj, name, None)
        if method is None or not callable(method):
            found.append(f"no method {name}")
            continue
        have = inspect.signature(method).parameters
        wanted_positional = [p.name for p in wanted.parameters.values() if p.kind in POSITIONAL]
        have_positional = [p.name for p in have.values() if p.kind in POSITIONAL]
        if have_positional[:len(wanted_positional)] != wanted_positional:
            found.append(f"{name}: positional parameters {have_positional}, the protocol's {wanted_positional}")
        for p in wanted.parameters.values():
            q = have.get(p.name)
            if q is None:
                found.append(f"{name}: no parameter {p.name!r}")
            elif (q.kind in POSITIONAL) != (p.kind in POSITIONAL):
                found.append(f"{name}: {p.name!r} is {q.kind.description}, the protocol's is {p.kind.description}")
            elif p.default is not inspect.Parameter.empty and q.default != p.default:
                found.append(f"{name}: {p.name!r} defaults to {q.default!r}, the protocol's to {p.default!r}")
        for q in have.values():
            if q.name not in wanted.parameters and q.kind not in VARIADIC and q.default is inspect.Parameter.empty:
                found.append(f"{name}: parameter {q.name!r} is not the protocol's and has no default")
    return found


def made(name: str):
    try:
        return REGISTRY[name].make()
    except BackendUnavailableError as exc:   # e.g. OR-Tools not installed: nothing to check here
        pytest.skip(f"{name}: {exc}")


def test_every_capability_has_a_protocol():
    assert set(PROTOCOLS) == set(CAPABILITIES)
    assert all(protocol_methods(protocol) for protocol in PROTOCOLS.values())


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_every_registered_backend_has_its_capabilities_methods(name):
    backend = made(name)
    for capability in sorted(REGISTRY[name].capabilities):
        assert problems(backend, PROTOCOLS[capability]) == [], (name, capability)
        assert isinstance(backend, PROTOCOLS[capability])   # the runtime check agrees on the names


class WrongCounter:
    """`strict` positional, `progress` missing, an extra parameter without a default."""

    name = "wrong"

    def count(self, plan, strict=False, *, verbose):
        return None


class NoSampler:
    name = "nosampler"

    def count(self, plan, *, strict=False, progress=None):
        return None


class RightCounter:
    name = "right"

    def count(self, plan, *, strict=False, progress=None, undefined=True):   # one more, optional: conforms
        return None


def test_a_wrong_backend_is_found_out(monkeypatch):
    monkeypatch.setitem(REGISTRY, "wrong", BackendEntry("wrong", "a test's wrong backend", frozenset({"count"}), (),
                                                        WrongCounter))
    monkeypatch.setitem(REGISTRY, "nosampler", BackendEntry("nosampler", "declares sample, has no sampler",
                                                            frozenset({"count", "sample"}), (), NoSampler))
    monkeypatch.setitem(REGISTRY, "right", BackendEntry("right", "a test's right backend", frozenset({"count"}), (),
                                                        RightCounter))
    wrong = problems(get_backend("wrong", "count"), PROTOCOLS["count"])
    assert "count: 'strict' is positional or keyword, the protocol's is keyword-only" in wrong
    assert "count: no parameter 'progress'" in wrong
    assert "count: parameter 'verbose' is not the protocol's and has no default" in wrong
    assert problems(NoSampler(), PROTOCOLS["sample"]) == ["no method sampler"]
    assert problems(RightCounter(), PROTOCOLS["count"]) == []
    with pytest.raises(AssertionError):   # the registry-wide test fails on them
        test_every_registered_backend_has_its_capabilities_methods("wrong")
    with pytest.raises(AssertionError):
        test_every_registered_backend_has_its_capabilities_methods("nosampler")
    test_every_registered_backend_has_its_capabilities_methods("right")
    assert backends.REGISTRY is REGISTRY


def test_a_wrong_default_is_found_out():
    class WrongDefault:
        def write(self, plan, path, fmt="npy", *, strict=False, with_derived=(), progress=None, sep=","):
            return 0

    assert problems(WrongDefault(), PROTOCOLS["write"]) == ["write: 'fmt' defaults to 'npy', the protocol's to 'csv'"]
