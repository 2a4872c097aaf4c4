"""The loop nests of the enumerator: `walk_list` (rows, in the plan's order), `walk_count`
(counts: hoisted parameters multiplied in, independent groups counted apart and memoised,
int64 or wide counts) and, in a funnel build, `walk_funnel`. Each walk runs from a prefix (the
first `plen` loops fixed) or stops at depth `stop` writing prefixes; derived values and
constraints are placed after the loop of their last input, with the undefined-value tally and
looks at the cancel flag. The domains' C comes from `translators.c.domains`.
"""
from __future__ import annotations

from solverspace.lang import ir
from solverspace.lang.dag import connected_groups
from solverspace.lang.printing import to_source

from .domains import DomainCode
from .expr import CExpressionPrinter, c_name
from .funnel import FunnelCounters
from .rational import rational_pair
from .runtime import CANCEL_EVERY, ERROR_COUNT_OVERFLOW


def divisors_declaration(level: int) -> str:
    """The C declaring a divisor loop's kept divisors (`LoopNest.divisor_checks`), empty, for one
    walk call: every walk with divisor loops (the plain walks, the sweep's lane walk) writes it."""
    return f"ss_divs dl_{level}; dl_{level}.m = dl_{level}.pm = 0; dl_{level}.nd = 0;"


class LoopNest:
    """Writes the walks of one build. `item` numbers a name in the build's item list (messages
    name undefined items by number); `levels` and `hoisted` come from `translators.c.optimize`;
    `columns` are the row's fields (for `walk_list`); counts are int64 (`count_words` 1, checked
    for overflow when `checked`) or `count_words` 64-bit words."""

    def __init__(self, plan, options, printer: CExpressionPrinter, domains: DomainCode, item, *, levels,
                 hoisted, max_prefix_depth: int, count_words: int, checked: bool, columns):
        self.plan = plan
        self.model = plan.model
        self.options = options
        self.bounds = plan.analysis.bounds
        self.rational = plan.analysis.rational
        self.inputs = plan.analysis.dag.parameter_inputs
        self.printer = printer
        self.domains = domains
        self.item = item
        self.levels = levels
        self.hoisted = hoisted
        self.max_prefix_depth = max_prefix_depth
        self.count_words = count_words
        self.checked = checked
        self.columns = columns
        self.memo_widths: list[int] = []   # key widths of the independent groups' memos (walk_count)
        self.funnel: FunnelCounters | None = None  # the walk being written counts into these
        self.wide_walk = False             # the walk being written sums wide counts

    def walk(self, fname: str, order: list[str], listing: bool, funnel: FunnelCounters | None = None) -> str:
        """The C function `fname`: loops over `order`, writing rows (`listing`), counting, or
        counting into a funnel's counters (`funnel`)."""
        self.funnel = funnel
        slots = self.slots(order)
        decls = [self.declarations()]
        extra = ", int64_t *fc" if funnel is not None else ""
        self.wide_walk = self.count_words > 1 and not listing and funnel is None
        if self.wide_walk:  # counts that may pass 63 bits: summed in total_, stored into *acc
            extra = ", ss_count *acc"
            decls.append("ss_count total_; memset(&total_, 0, sizeof total_);")
        lines = [f"static void {fname}(const int64_t *prefix, int plen, int stop, int mode, ss_row *out,",
                 f"                      int64_t *prefix_out, int64_t cap, ss_stats *st, ss_cmemo *memo{extra}) {{",
                 "    int uflag = 0; int *u = &uflag; (void)u; (void)out; (void)prefix_out; (void)cap; (void)mode;",
                 "    uint64_t tick_ = 0; (void)tick_;",
                 "    " + " ".join(decls)]
        buffers: list[tuple[int, int]] = []
        lines += self.derived_and_constraints(slots[-1], None, "    ", on_reject="return;", prelude=True)
        split = None if listing else self.component_split(order)
        early = None if listing or split is not None or funnel is not None else self.early_split(order)
        outer = list(range(len(order))) if split is None else list(range(split[0]))
        if listing:
            fields = ", ".join(f"({c.ctype}){c_name(c.name)}" for c in self.columns)
            leaf = [f"out[st->count++] = (ss_row){{ {fields} }};"]
        elif split is None:
            leaf = self.hoisted_multiplier("")
        else:
            leaf = self.split_leaf(order, split, slots, buffers)
        body = self.nest(outer, order, slots, buffers, leaf)
        if early is not None and self.may_fail(lines + body):
            early = None
        if early is not None:   # counting: the groups apart; the prefix walk (stop >= 0): the whole nest
            counted = self.nest(list(range(early[0])), order, slots, buffers,
                                self.split_leaf(order, early, slots, buffers, fixed=True))
            body = ["if (stop < 0) {", *("    " + x for x in counted), "} else {", *("    " + x for x in body), "}"]
        lines += ["    " + x for x in body]
        lines.append("    done: ;")
        if self.wide_walk:
            lines.append("    if (acc) *acc = total_;")
        return self.close_walk(lines, buffers, order)

    def split_leaf(self, order, split, slots, buffers, fixed: bool = False) -> list[str]:
        """The counting leaf under the loops before `split[0]`: each independent group of
        `split[1]` counted by its own nest (memoised per group by the values from outside it that
        it reads) and the counts multiplied, with the hoisted parameters' sizes. `fixed`: a split
        of `early_split`, where a group may hold loops a work unit's prefix fixes: its memo key
        also holds `plen` and, for each such loop, the prefix's value there (0 where the prefix
        is shorter), so a count is reused only under the same prefix values; and a hoisted
        parameter whose domain reads a group's loops (`split[2]`) is multiplied in at that
        group's leaf (the group's count sums the products), the others at the leaf of the split."""
        attached = split[2] if fixed else [[] for _ in split[1]]
        inside = {h for names in attached for h in names}
        leaf = self.hoisted_multiplier("", into="prod_", names=[h for h in self.hoisted if h not in inside])
        keys = self.component_keys(order, split[1], slots, attached if fixed else None)
        widths = []
        for number, (component, key) in enumerate(zip(split[1], keys)):
            inner = self.nest(component, order, slots, buffers, self.group_leaf(attached[number]))
            names = [c_name(k) for k in key]
            if fixed:
                names += ["plen", *(f"(plen > {i} ? prefix[{i}] : 0)" for i in component if i < self.max_prefix_depth)]
            widths.append(max(len(names), 1))
            leaf += [f"if ({self.count_op('nonzero', 'prod_')}) {{ int64_t cnt_ = 0, key_[{max(len(names), 1)}] = "
                     f"{{{', '.join(names) or '0'}}};",
                     f"    int64_t *hit_ = memo ? ss_cmemo_find(&memo[{number}], key_) : NULL;",
                     "    if (hit_) cnt_ = *hit_; else {"]
            leaf += ["        " + x for x in inner]
            leaf += [f"        if (memo) ss_cmemo_put(&memo[{number}], key_, cnt_); }}", f"    {self.count_op('mul', 'prod_', 'cnt_')} }}"]
        leaf += [self.count_op("add", "prod_") + " }"]
        self.memo_widths = widths
        return leaf

    def group_leaf(self, hoisted: list[str]) -> list[str]:
        """An independent group's leaf: one configuration, times the domain sizes of the hoisted
        parameters attached to the group (int64: `early_split` proved the group's count fits)."""
        if not hoisted:
            return ["cnt_++;"]
        lines = ["{ int64_t m_ = 1;"]
        for name in hoisted:
            i = f"h_{name}"
            lines.append(f"  {{ int64_t n_{i} = 0, start_{i} = 0, step_{i} = 1; (void)start_{i}; (void)step_{i};")
            lines += self.domains.setup(i, self.model.parameter[name], None, "    ", count_only=True)
            lines.append(f"    m_ *= n_{i}; }}")
        lines.append("  cnt_ += m_; }")
        return lines

    def close_walk(self, lines: list[str], buffers: list[tuple[int, int]], order) -> str:
        """A walk's C text from its lines (header of 4 lines, body, `done:` label): the domain
        buffers allocated after the header and freed at the end, one-value buffers of solved
        levels, and aborts as jumps to `done`."""
        for i, size in dict(buffers).items():   # a level written in two nests (early_split) has one buffer
            if isinstance(i, tuple):   # a divisor loop's kept divisors (`divisor_checks`)
                lines.insert(4, "    " + divisors_declaration(i[1]))
                continue
            lines.insert(4, f"    int64_t *buf_{i} = (int64_t *)malloc(sizeof(int64_t) * {size});")
            lines.append(f"    free(buf_{i});")
        for i in self.solved_levels(order):
            if i not in dict(buffers):
                lines.insert(4, f"    int64_t buf_{i}[1] = {{0}};")
        lines.append("}")
        return "\n".join(lines).replace("return; /*abort*/", "goto done;")

    def whole_walk(self, header: list[str], order, slots, buffers: list[tuple[int, int]], body: list[str]) -> str:
        """A walk's C function from its signature (`header`, ending in `{`) and its loops
        (`body`, from `nest`): the locals every walk has (the undefined flag, the cancel tick,
        the variables), the prelude's derived values and constraints (a rejection returns), the
        loops, the `done:` label that aborts jump to; closed by `close_walk`."""
        lines = [*header, "    int uflag = 0; int *u = &uflag; (void)u;", "    uint64_t tick_ = 0; (void)tick_;",
                 "    " + self.declarations()]
        lines += self.derived_and_constraints(slots[-1], None, "    ", on_reject="return;", prelude=True)
        lines += ["    " + x for x in body]
        lines.append("    done: ;")
        return self.close_walk(lines, buffers, order)

    def slots(self, order: list[str]) -> dict[int, tuple[list, list]]:
        """Per loop position (-1: before the loops), the derived values and constraints placed
        there: after the loop of their last input *in this order*."""
        position = {p: i for i, p in enumerate(order)}
        slots: dict[int, tuple[list, list]] = {i: ([], []) for i in range(-1, len(order))}
        dag_inputs = self.inputs
        for d in [*self.plan.prelude_derived, *(d for lv in self.plan.levels for d in lv.derived)]:
            slots[max((position[q] for q in dag_inputs[d.name]), default=-1)][0].append(d)
        for c in [*self.plan.prelude_constraints, *(c for lv in self.plan.levels for c in lv.constraints)]:
            slots[max((position[q] for q in dag_inputs[c.name]), default=-1)][1].append(c)
        return slots

    def declarations(self) -> str:
        """The C variables of every parameter and derived value (fractions have none)."""
        model = self.model
        return " ".join(f"int64_t {c_name(n)} = 0;" for n in (*model.parameter_names, *(d.name for d in model.derived))
                        if n not in self.rational)

    def nest(self, indices: list[int], order, slots, buffers, leaf: list[str],
             after: dict[int, list[str]] | None = None) -> list[str]:
        """Nested loops over `order[i]` for i in `indices`, `leaf` innermost; `after[i]`: lines
        placed in loop i after its derived values and constraints (the branch and bound's
        tests, `translators.c.best`)."""
        by_name = {level.parameter.name: (i, level) for i, level in enumerate(self.plan.levels)}
        lines, closes = [], []
        quotient = None   # where the loop before is a divisor loop over a range: its quotient e / v
        for depth, i in enumerate(indices):
            name = order[i]
            index, level = by_name[name]
            lp = self.levels[index]
            ind = "    " * depth
            parameter = level.parameter
            lines.append(f"{ind}/* level {i}: {name} */")
            lines.append(f"{ind}{{")
            lines.append(f"{ind}    int64_t n_{i} = 0, start_{i} = 0, step_{i} = 1; (void)start_{i}; (void)step_{i};")
            lines.append(f"{ind}    if (plen > {i}) {{ n_{i} = 1; }} else {{")
            solve = lp.solve if "solve" in self.options else None
            buffered = not isinstance(parameter.domain, ir.Range)
            if buffered:
                buffers.append((i, self.domains.buffer_size(parameter)))
            lines += self.domains.setup(i, parameter, solve, ind + "        ",
                                        tighten=lp.tighten if "tighten" in self.options else (),
                                        count_undefined=self.funnel.level_undefined(i) if self.funnel else "",
                                        quotient=quotient)
            lines.append(f"{ind}    }}")
            value = f"buf_{i}[k_{i}]" if buffered or solve else f"start_{i} + k_{i} * step_{i}"
            body = [f"{ind}        {c_name(name)} = (plen > {i}) ? prefix[{i}] : {value};"]
            if self.funnel:
                body.append(f"{ind}        if (plen <= {i}) {self.funnel.candidate(i)}")
            body += self.derived_and_constraints(slots[i], {c.name for c in lp.breaks}, ind + "        ",
                                                 guard_prefix=i, level=i)
            body += [f"{ind}        {x}" for x in (after or {}).get(i, ())]
            if i < self.max_prefix_depth:
                body.append(f"{ind}        if (stop == {i + 1}) {{")
                body.append(f"{ind}            if (st->count < cap) {{ " +
                            " ".join(f"prefix_out[st->count * {i + 1} + {j}] = {c_name(order[j])};"
                                     for j in range(i + 1)) + " }")
                body.append(f"{ind}            st->count++; continue;")
                body.append(f"{ind}        }}")
            following = indices[depth + 1] if depth + 1 < len(indices) else None
            divisor = self.divisor_loop(i, following, order, body, bool((after or {}).get(i)))
            quotient = None if divisor is None or buffered else (f"dz_{i}", f"ds_{i}.q")
            if divisor is None:
                lines += self.cancel_checks(i, name, ind)
            else:
                if not buffered:
                    buffers.append((("divisors", i), 0))
                lines += self.divisor_checks(i, name, ind, buffered, divisor)
            lines += body
            closes.append(ind)
        ind = "    " * len(indices)
        lines += [f"{ind}    {x}" for x in leaf]
        for ind in reversed(closes):
            lines.append(f"{ind}    }}")
            lines.append(f"{ind}}}")
        return lines

    def cancel_checks(self, i: int, name: str, ind: str) -> list[str]:
        """The loop header of level i with its looks at the cancel flag: on entry, the loop's
        length is added to `tick_` (so nests of short loops look once per CANCEL_EVERY iterations
        in all); a loop that may itself run longer also looks every CANCEL_EVERY of its own
        iterations. No per-iteration cost where the bounds prove a loop short."""
        return self.loop_head(i, name, ind, f"for (int64_t k_{i} = 0; k_{i} < n_{i}; k_{i}++) {{")

    def loop_head(self, i: int, name: str, ind: str, loop: str) -> list[str]:
        """`cancel_checks` around the loop statement `loop` (which opens the body)."""
        lines = [f"{ind}    tick_ += (uint64_t)n_{i};",
                 f"{ind}    if (__builtin_expect(tick_ >= {CANCEL_EVERY}u, 0)) {{ tick_ = 0; if (ss_cancelled()) goto done; }}",
                 f"{ind}    {loop}"]
        interval = self.bounds.of(name)
        if not interval.hi - interval.lo < CANCEL_EVERY:
            lines.append(f"{ind}        if (__builtin_expect(!(k_{i} & {CANCEL_EVERY - 1}) && k_{i}, 0) && ss_cancelled()) "
                         "goto done;")
        return lines

    def divisor_loop(self, i: int, following: int | None, order, body: list[str], tested: bool) -> str | None:
        """The C of `e` where loop i may visit only the values that divide `e`, else
        None. That is where the next loop of the nest (`following`) solves `v * w == e` with v
        this loop's parameter itself as the coefficient: a value v not dividing e gives that loop
        no value, so nothing is counted or listed under it. Skipping such a v must change
        nothing else, so the optimisation applies only where, for every value, neither this
        loop's body (`body`: its derived values and constraints) nor the next loop's domain may
        tally an undefined operation or stop on a zero step, `e` reads nothing this loop sets
        (it is computed once before the loop, and may not be undefined either), there is no
        funnel (it counts candidates), nothing runs after the constraints (`tested`: the branch
        and bound's visit counts and cuts), and no subclass writes its own loop header (the
        nearest search's key order). A loop written at the prefix depth keeps its prefixes
        (`divisor_checks`: the plain loop where `stop` makes units there). A `break` ending the
        loop at a skipped value ends it at the next divisor too (the rejection is monotone)."""
        if ("solve" not in self.options or following is None or self.funnel is not None or tested
                or type(self).cancel_checks is not LoopNest.cancel_checks):
            return None
        by_name = {level.parameter.name: k for k, level in enumerate(self.plan.levels)}
        name, after = order[i], order[following]
        if self.levels[by_name[name]].solve is not None:
            return None
        solve = self.levels[by_name[after]].solve
        if solve is None or solve[0] != ir.Ref(name):
            return None
        value, constraint = solve[1], solve[2]
        if any(ref == name or name in self.inputs.get(ref, ()) for ref in ir.refs(value)):
            return None
        e = self.printer.print(value, constraint)
        if ", u)" in e or any(", u)" in line for line in body):
            return None
        if self.domains.setup_may_fail(self.model.parameter[after]):
            return None
        return e

    def divisor_checks(self, i: int, name: str, ind: str, buffered: bool, e: str) -> list[str]:
        """The head of a divisor loop (`divisor_loop`): `cancel_checks` around a loop whose k
        steps through the divisors of `e` (a range: `ss_dscan` over the walk's kept divisors
        `dl_i`, declared by `close_walk`; a value list: `ss_dfilter`), or by 1 where the run
        time prefers the plain loop or a prefix fixes the loop or makes units at its depth."""
        guard = f"plen <= {i}" + (f" && stop != {i + 1}" if i < self.max_prefix_depth else "")
        if buffered:
            lines = [f"{ind}    uint64_t dm_{i} = 0; int dz_{i} = 0;",
                     f"{ind}    if ({guard}) {{ dm_{i} = ss_uabs({e}); dz_{i} = dm_{i} != 0; }}"]
            first, step = f"ss_dfilter(buf_{i}, 0, n_{i}, dm_{i})", f"ss_dfilter(buf_{i}, k_{i} + 1, n_{i}, dm_{i})"
        else:
            lines = [f"{ind}    ss_dscan ds_{i}; int dz_{i} = 0;",
                     f"{ind}    if ({guard}) {{ dz_{i} = ss_dscan_init(&ds_{i}, &dl_{i}, {e}, start_{i}, step_{i}, n_{i});"
                     f" if (dz_{i} < 0) goto done; }}"]
            first = step = f"ss_dscan_next(&ds_{i}, n_{i})"
        loop = (f"for (int64_t k_{i} = dz_{i} ? {first} : 0; k_{i} < n_{i}; "
                f"k_{i} = dz_{i} ? {step} : k_{i} + 1) {{")
        return lines + self.loop_head(i, name, ind, loop)

    def component_keys(self, order, components, slots, attached=None) -> list[list[str]]:
        """For each independent group, the values from outside it that its count depends on
        (its memo key): the outer parameters and derived values its domains and rules read, and
        the domains of the hoisted parameters `attached` to it."""
        keys = []
        for number, component in enumerate(components):
            inside = {order[i] for i in component} | {d.name for i in component for d in slots[i][0]}
            read = set()
            for name in (attached[number] if attached else ()):
                read |= ir.refs(self.model.parameter[name].domain)
            for i in component:
                read |= ir.refs(self.model.parameter[order[i]].domain)
                for item in (*slots[i][0], *slots[i][1]):
                    read |= ir.refs(item.expr)
            outside = read - inside
            while outside & self.rational:  # fractions have no C variable: key on their inputs
                name = next(iter(outside & self.rational))
                outside = (outside - {name}) | ir.refs(self.model.derived_value[name].expr)
            keys.append(sorted(outside))
        return keys

    def component_split(self, order: list[str]):
        """(k, components): the first loop position k from which the remaining loops fall into
        independent groups (no parameter, derived value or constraint links two groups); each
        group is counted on its own and the counts multiply. None when there is no such k."""
        if "split" not in self.options:
            return None
        inputs = self.inputs
        items = [*self.model.derived, *self.model.constraints]
        position = {p: i for i, p in enumerate(order)}
        for k in range(self.max_prefix_depth, len(order) - 1):
            rest = set(order[k:])
            if any(inputs[h] & rest for h in self.hoisted):
                continue
            scopes = [(inputs[p] | {p}) & rest for p in rest] + [inputs[i.name] & rest for i in items]
            groups = connected_groups(rest, scopes, order)
            if len(groups) >= 2:
                return k, [[position[p] for p in group] for group in groups]
        return None

    def early_split(self, order: list[str]):
        """(k, components, attached) like `component_split`, where that finds none:
        the first loop position k, above the prefix depth too, from which the remaining loops fall
        into independent groups, a hoisted parameter whose domain reads some of them linking those
        (it is `attached` to their group, multiplied in at the group's leaf). Four pairs
        `y_i % x_i == 0` walked 64**8 candidates, ten stages `w_i = range(t_i, 65537, t_i)` (w_i
        hoisted) 32**10: each group now counts its own. Only for counting: the prefix walk that
        makes the work units still runs the whole nest in the plan's order. A group with hoisted
        parameters attached is counted in int64, so its bound (the product of its domains' size
        bounds) must be below 2**63, else that k is not taken."""
        if "split" not in self.options:
            return None
        inputs = self.inputs
        items = [*self.model.derived, *self.model.constraints]
        position = {p: i for i, p in enumerate(order)}
        for k in range(0, len(order) - 1):
            rest = set(order[k:])
            reading = [h for h in self.hoisted if inputs[h] & rest]
            scopes = [(inputs[p] | {p}) & rest for p in rest] + [inputs[i.name] & rest for i in items]
            groups = connected_groups(rest, scopes + [inputs[h] & rest for h in reading], order)
            if len(groups) < 2:
                continue
            attached = [[h for h in reading if inputs[h] & rest <= set(group)] for group in groups]
            if attached and not all(self.fits(group + names) for group, names in zip(groups, attached) if names):
                continue
            return k, [[position[p] for p in group] for group in groups], attached
        return None

    def may_fail(self, lines: list[str]) -> bool:
        """Whether a walk's C may raise the undefined flag (a helper given `u`: a division or
        modulo whose divisor may be 0) or stop on a range step of 0 (a `range` whose step's
        bounds hold 0). Counted apart and memoised, independent groups would tally undefined
        operations, and meet a zero step, differently from the whole nest, so `early_split` is
        not taken there: answers, the tally and the errors included, stay those of the nest."""
        if any(", u)" in line for line in lines):
            return True
        for parameter in self.model.parameters:
            for node in ir.walk(parameter.domain):
                if isinstance(node, ir.Range):
                    step = self.bounds.expr(node.step)
                    if not step.empty and step.lo <= 0 <= step.hi:
                        return True
        return False

    def fits(self, names: list[str]) -> bool:
        """Whether the product of these parameters' domain size bounds is below 2**63."""
        bound = 1
        for name in names:
            parameter = self.model.parameter[name]
            bound *= self.domains.size_bound(parameter.domain, parameter)
        return bound < 2 ** 63

    def solved_levels(self, order):
        by_name = {level.parameter.name: i for i, level in enumerate(self.plan.levels)}
        return [i for i, name in enumerate(order) if self.levels[by_name[name]].solve and "solve" in self.options]

    def derived_and_constraints(self, slot, breaks, ind, on_reject="continue;", guard_prefix=None, prelude=False,
                                level=None):
        derived, constraints = slot
        breaks = breaks or set()
        lines = []
        for d in derived:
            item = self.item(f"{d.name} = {to_source(d.expr)}")
            if d.name in self.rational:
                # a fraction-valued derived value has no C variable, but it is eager: evaluating its
                # integer pair raises the undefined flag exactly where one of its divisions would
                num, den = rational_pair(d.expr, self.model, self.rational)
                text = f"(void)({self.printer.print(num, d)}); (void)({self.printer.print(den, d)});"
            else:
                text = f"{c_name(d.name)} = {self.printer.print(d.expr, d)};"
            lines.append(f"{ind}{text}")
            count_level = f" if (plen <= {level}) {self.funnel.level_undefined(level)}" \
                if self.funnel and level is not None else ""
            lines.append(f"{ind}if (uflag) {{ uflag = 0; if (!st->undefined++) st->undef_item = {item};{count_level} {on_reject} }}")
        if self.funnel:
            if not constraints:
                return lines
            tests = self.funnel.tests(constraints, ind + ("    " if guard_prefix is not None or prelude else ""), on_reject)
            guard = "plen == 0" if prelude else f"plen <= {guard_prefix}" if guard_prefix is not None else None
            if guard is None:
                return lines + tests
            return lines + [f"{ind}if ({guard}) {{"] + tests + [f"{ind}}}"]
        ordered = [c for c in constraints if c.name in breaks] + [c for c in constraints if c.name not in breaks]
        tests = []
        for c in ordered:
            item = self.item(f"{c.name}: {to_source(c.expr)}")
            rejection = self.printer.print(c.expr if c.rejects else ir.Not(c.expr), c)
            action = "break;" if c.name in breaks else on_reject
            tests.append(f"{ind}{{ int r = ({rejection}) != 0;")
            tests.append(f"{ind}  if (uflag) {{ uflag = 0; if (!st->undefined++) st->undef_item = {item}; {on_reject} }}")
            tests.append(f"{ind}  if (r) {action} }}")
        if tests and guard_prefix is not None:
            lines.append(f"{ind}if (plen <= {guard_prefix}) {{")
            lines += ["    " + t for t in tests]
            lines.append(f"{ind}}}")
        else:
            lines += tests
        return lines

    def hoisted_multiplier(self, ind, into: str | None = None, declare: bool = False, names=None) -> list[str]:
        """Count one configuration times the product of the hoisted parameters' domain sizes
        (`names`: of these hoisted parameters only)."""
        target = into or "mult"
        lines = [f"{ind}{{ {self.count_op('one', target)}"]
        for name in self.hoisted if names is None else names:
            p = self.model.parameter[name]
            i = f"h_{name}"
            lines.append(f"{ind}  {{ int64_t n_{i} = 0, start_{i} = 0, step_{i} = 1; (void)start_{i}; (void)step_{i};")
            lines += self.domains.setup(i, p, None, ind + "    ", count_only=True)
            lines.append(f"{ind}    {self.count_op('mul', target, f'n_{i}')} }}")
        if into is None:
            lines.append(f"{ind}  {self.count_op('add', 'mult')} }}")
        return lines

    def count_op(self, op: str, a: str, b: str = "") -> str:
        """A statement (or, for 'nonzero', a test) on counting-nest products: int64 arithmetic,
        or `ss_count` (wide_count_c) in a walk whose counts may pass 63 bits."""
        if not self.wide_walk:
            overflow = f"{{ st->error = {ERROR_COUNT_OVERFLOW}; return; /*abort*/ }}"
            if self.checked and not self.funnel and op in ("mul", "add"):
                target = a if op == "mul" else "st->count"
                return f"if (__builtin_{op}_overflow({target}, {b or a}, &{target})) {overflow}"
            return {"one": f"int64_t {a} = 1;", "mul": f"{a} *= {b};", "add": f"st->count += {a};",
                    "nonzero": a}[op]
        return {"one": f"ss_count {a} = ss_cone();", "mul": f"{a} = ss_cmul({a}, {b});",
                "add": f"total_ = ss_cadd(total_, {a});", "nonzero": f"ss_cnonzero({a})"}[op]
