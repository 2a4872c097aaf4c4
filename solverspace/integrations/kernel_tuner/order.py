"""The order of Kernel Tuner 1.5's `Searchspace.list`, without building that list.

Kernel Tuner builds its list with python-constraint's `OptimizedBacktrackingSolver(forwardcheck=False)`
(`Problem.getSolutionsAsListDict`). That solver assigns the variables in one fixed order,
`getSortedVariables`: most constraints first, then smallest domain, ties in `tune_params` order (a
stable sort); and it takes each variable's values by `list.pop()`, so the *last* value of its list
first. Constraints only prune; they never reorder. So the list is the valid set in lexicographic
order over that variable order, each parameter's values from the last of its `tune_params` list to
the first (checked against Kernel Tuner's own list on the 16 peer T1 spaces and the toy space of the
tests: identical).

The variable order depends on how python-constraint *counts* constraints: its parser splits a
restriction string into several constraints (`a*b <= 8 and c != 2` is two), specialised ones
(`MaxProdConstraint`, ...) are preprocessed and those on one variable removed after narrowing its
domain, which changes both keys. `variable_order` therefore asks python-constraint itself: the
same `Problem` Kernel Tuner makes (its own `Searchspace` code adds the restrictions, then the
block-size `MaxProdConstraint` last, as Kernel Tuner does), parsed and preprocessed (`_getArgs`),
never solved: a few milliseconds. Without python-constraint (or if a later Kernel Tuner renames
what is used here) the same rule is applied to our own count: per parameter, the restrictions that
name it, plus the block-size rule; logged as a warning, since it may differ from python-constraint's split.
"""
from __future__ import annotations

import logging

_log = logging.getLogger(__name__)


def _python_constraint_order(tune_params: dict, restrictions: list, max_threads, block_size_names) -> list:
    from constraint import MaxProdConstraint, OptimizedBacktrackingSolver, Problem
    from kernel_tuner.searchspace import Searchspace as KernelTunerSearchspace
    from kernel_tuner.util import convert_constraint_lambdas
    from constraint import Constraint, FunctionConstraint
    theirs = KernelTunerSearchspace(tune_params, list(restrictions), max_threads if max_threads is not None else 1,
                                    block_size_names=list(block_size_names), defer_construction=True)
    solver = OptimizedBacktrackingSolver(forwardcheck=False)
    problem = Problem(solver=solver)
    for name, values in tune_params.items():
        problem.addVariable(str(name), list(values))
    if any(not isinstance(r, (Constraint, FunctionConstraint, str)) for r in theirs.restrictions):
        theirs.restrictions = convert_constraint_lambdas(theirs.restrictions)
    problem = theirs._Searchspace__add_restrictions(problem)
    used = [n for n in block_size_names if n in theirs.param_names]
    if used and max_threads is not None:
        problem.addConstraint(MaxProdConstraint(max_threads), used)
    domains, _, vconstraints = problem._getArgs()
    if domains is None:         # an empty domain after preprocessing: no configuration, any order
        return [str(n) for n in tune_params]
    return list(solver.getSortedVariables(domains, vconstraints))


def _counted_order(tune_params: dict, texts: list, uses: list, max_threads, block_size_names) -> list:
    names = [str(n) for n in tune_params]
    count = {n: sum(n in used for used in uses) for n in names}
    if max_threads is not None:
        for n in block_size_names:
            if n in count:
                count[n] += 1
    return sorted(names, key=lambda n: (-count[n], len(tune_params[n])))


def variable_order(tune_params: dict, restrictions: list, max_threads, block_size_names, uses: list) -> list:
    """The parameter names in the order python-constraint assigns them when Kernel Tuner builds its
    list (see the module's documentation); `uses` (the parameters each restriction names, for the
    fallback without python-constraint)."""
    try:
        order = _python_constraint_order(tune_params, restrictions, max_threads, block_size_names)
        if sorted(order) == sorted(str(n) for n in tune_params):
            return order
        reason = f"python-constraint gave the variables {order}"
    except Exception as exc:        # noqa: BLE001 - no python-constraint, another Kernel Tuner: said, not hidden
        reason = f"{type(exc).__name__}: {exc}"
    _log.warning(f"Kernel Tuner's list order taken from our own count of the restrictions per parameter, not "
                 f"python-constraint's ({reason}); it may differ where python-constraint splits or drops a restriction")
    return _counted_order(tune_params, restrictions, uses, max_threads, block_size_names)
