"""Exact counting with CP-SAT, using the structure of the model instead of listing everything.

A counting *problem* is a set of parameters and a list of *factors*, each a condition over the
parameters in its scope: a parameter's domain (it lies in its domain, which is defined), a
derived value being defined, a constraint accepting. The count is the number of assignments of
the parameters that satisfy every factor. Five steps, read from the model's DAG (the fifth with
proofs by CP-SAT):

1. **Free parameters are summed out in Python, not enumerated.** A parameter whose only factor is
   its own domain (no constraint, no derived value, no other domain uses it) contributes the size
   of its domain, evaluated for the values of its inputs. Peeling repeats, so a parameter whose
   only users were peeled becomes free too: its weight sums its children's weights over its
   values (variable elimination). Weights are memoised per assignment of their scope: in GEMM,
   `vec_mul` is a weight of `dim_vec` (1 or 2) and the four switches are a constant factor 16.
2. **Independent components multiply.** What remains splits into connected components of the
   factor graph; each is counted separately.
3. **Each component is enumerated by CP-SAT** (a fixed search over its parameters in plan order,
   no LP, no inprocessing: thousands of solutions per second where the default search gives
   hundreds), with the weights of its peeled parameters multiplied in the solution callback.
4. **Groups that become independent given their separator are counted once per separator
   assignment** when that pays. A group is a set of sink parameters of a component (no other
   parameter depends on them) linked by shared conditions; its separator is the other parameters
   those conditions read (GEMM's A-reader pair `dim_m_a, dim_n_a` given `dim_m, dim_n, blk_m,
   blk_k, dim_vec`). The component's outer part (without its groups) is enumerated, aggregated by
   separator assignment, and each group is counted (recursively, by this same procedure) once per
   distinct assignment, memoised. CP-SAT cannot project an enumeration onto some variables, so
   the outer part loses the groups' pruning: on the README's tour that costs nothing (25 thousand
   solutions instead of 344 thousand), but the K40c GEMM space's outer part has 1.18 million
   solutions (6.1 million in single precision) where the joint enumeration has 59,166 (324,036).
   So the outer part is tried with a cap (`SEPARATE_SOLUTIONS`, and `SEPARATE_KEYS` separator
   assignments per group); then the most frequent assignments are counted and the time the rest
   would take is compared with the joint enumeration's, estimated from the mean group count. The
   component falls back to the joint enumeration when that is cheaper (GEMM on every device: the
   outer solutions barely share separator assignments and most have no reader pair at all).
5. **Sinks with a default are counted in Python** (`Counter.sinks`, `translators.cpsat.sinks`):
   a parameter with a small constant domain, read by constraints only (no other parameter or
   weight), one of whose values CP-SAT proves accepted whatever the others are, leaves the
   enumeration; each solution of the rest is weighed by the number of its accepted values,
   memoised on the values of the sub-expressions of its conditions that do not read it. The
   enumeration then lists the projection of the solutions onto the rest, never more: T1
   Hotspot's `blocks_per_sm` (default 0) and `loop_unroll_factor_t` (default 1) take its
   141,271 CP-SAT solutions to 33,216. Not while sampling (its tables list every parameter).

One module per strategy over a shared base (Hypothesis' `internal/conjecture/shrinking/` pattern):
`count.problem` (factors, problems, weights, components, results; `post`), `count.base` (`CounterBase`:
facts, structure, weights, building, the `count` template), and the strategies `count.residues`,
`count.separated`, `count.sinks`, `count.conditioned` and `count.joint`, each a mixin over the base.
This facade joins them into `Counter`, holds the tuning limits below (read through `Counter.limits`,
this module, so that they stand in one place and a test can lower them) and keeps the names other
modules import.

Layering: cpsat.lower (`Lowering`) -> cpsat.solver (`Options`, `new_solver`), cpsat.sinks -> **cpsat.count** ->
cpsat.run / cpsat.best / cpsat.explain / cpsat.sample / cpsat.hashing -> cpsat.backend (the facade).

CP-SAT's enumeration slows down as the solutions of one solve accumulate (quadratically: 40,000
solutions of a single free variable take 40 times as long as 5,000), so a component with more
than `PROBE_SOLUTIONS` solutions is counted as many small sub-problems: the first parameter's
values one at a time, and a sub-problem that turns out to have more than `CHUNK_SOLUTIONS`
solutions is split on the next parameter and counted again. With several workers the sub-problems run in parallel (each its own solver, so no
solution is reported twice).

A time limit stops the search; the count found so far is then a lower bound and `exact` is False.
"""
from __future__ import annotations

import sys

from ..sinks import SINK_VALUES  # a limit too (a sink's most values), read through `Counter.limits`
from ..solver import Options
from .base import CounterBase
from .conditioned import Conditioned
from .joint import Joint
from .problem import (Component, CountResult, Factor, Group, Problem, Structure, Table, Weight, peeled_params,
                      post, rest_at)
from .residues import Residues
from .separated import Separated
from .sinks import Sinks

__all__ = ["Component", "CountResult", "Counter", "Factor", "Group", "Problem", "Structure", "Table", "Weight",
           "describe", "peeled_params", "post", "rest_at"]


#: Separated counting of a component's groups is tried when its outer part has at most this many
#: solutions, and each group at most `SEPARATE_KEYS` distinct separator assignments.
SEPARATE_SOLUTIONS = 5_000
SEPARATE_KEYS = 2_000

#: Separator assignments counted first to decide whether separated counting pays, and the cost
#: of one solution of a joint enumeration assumed in that decision (measured: 60-150 us).
SAMPLE_KEYS = 16
JOINT_SECONDS_PER_SOLUTION = 60e-6

#: Conditioning on an articulation parameter (`Counter._count_conditioned`): at most this many
#: values, and only for a component whose constant domains span at least this many candidates.
CONDITION_MAX_VALUES = 64
CONDITION_MIN_SPACE = 100_000

#: Sinks (`Counter.sinks`): the search for them in a component ends after this many candidates
#: without a default value.
SINK_FAILURES = 3

#: A sub-problem with more solutions than this is split and counted again in parts: CP-SAT's
#: enumeration slows down as the solutions of one solve accumulate (40,000 solutions of one free
#: variable take 40 times as long as 5,000), so many small solves beat one large one.
CHUNK_SOLUTIONS = 10_000

#: A component is first solved whole, stopping at this many solutions; only a larger one is split.
PROBE_SOLUTIONS = 2_000



class Counter(Residues, Separated, Sinks, Conditioned, Joint, CounterBase):
    """Counts problems over one model (with a shared analysis lowering): the base's template with
    every strategy."""

    limits = sys.modules[__name__]


def describe(plan) -> str:
    """How the CP-SAT backend counts a plan: peeled parameters, components, groups."""
    counter = Counter(plan.model, plan, Options(workers=1))
    s = counter.structure(counter.full_problem())
    lines = []
    for w in s.weights:
        inputs = f"per value of ({', '.join(w.scope)})" if w.scope else "a constant factor"
        inner = f" (with {', '.join(_peeled_names(w.children))})" if w.children else ""
        lines.append(f"summed out in Python: {w.param}{inner}, {inputs}")
    for c in s.components:
        split = counter.residue_split(c, {})
        if split is not None:
            lines.append(f"counted by residue classes: {split[0]} (a wide range read only modulo "
                         f"{abs(split[3]) // abs(counter.model.parameter[split[0]].domain.step.value)}): "
                         f"{len(split[1])} sub-counts of {', '.join(split[2].params) or 'nothing else'}")
            continue
        lines.append(f"enumerated by CP-SAT: {', '.join(c.params)} ({len(c.factors)} conditions"
                     + (f", weights of {', '.join(w.param for w in c.weights)}" if c.weights else "") + ")")
        for g in c.groups:
            lines.append(f"  group {', '.join(g.params)} is independent given {', '.join(g.separator)}: "
                         f"counted once per separator assignment when the rest has at most "
                         f"{SEPARATE_SOLUTIONS} solutions, else enumerated with the component")
    return "\n".join(lines)


def _peeled_names(weights) -> list[str]:
    names = []
    for w in weights:
        names.append(w.param)
        names.extend(_peeled_names(w.children))
    return names

