"""Parameters' domains in C: how many values a domain may hold (the count bound, buffer sizes),
the loop header of a range, the statements that fill a buffer with a domain's values (value
lists, iterator algebra, conditional domains, closures through lookup tables) and the check
of a solved parameter's value against its domain.
"""
from __future__ import annotations

import itertools

from solverspace.lang import ir
from solverspace.core.errors import ClosureTableError

from .expr import c_name
from .runtime import ERROR_STEP_ZERO
from ..errors import UnsupportedConstruct

MAX_BUFFER = 1 << 20
LOOP_LIMIT = 2 ** 63  # a loop count is an int64


class DomainSize(ir.DomainVisitor):
    """The most values a domain node can hold. With a `cap` (the count bound's sizes) no size
    exceeds it and an unbounded range holds `cap` values; without one (a buffer's size) the sum
    of a union's sides and the exact width of a range."""

    def __init__(self, bounds, closure_size, cap: int | None = None):
        self.bounds = bounds
        self.closure_size = closure_size
        self.cap = cap

    def of(self, node, parameter) -> int:
        return self.visit(node, parameter)

    def unsupported(self, node):
        raise TypeError(type(node).__name__)

    def _visit_Values(self, node, parameter):
        return len(node.items)

    def _visit_Range(self, node, parameter):
        interval = self.bounds.domain_node(node, parameter)
        if interval.empty:
            return 0
        if self.cap is None:
            return int(interval.hi - interval.lo + 1)
        return int(min(interval.hi - interval.lo + 1, self.cap)) if interval.finite else self.cap

    def _visit_Union(self, node, parameter):
        total = self.of(node.left, parameter) + self.of(node.right, parameter)
        return total if self.cap is None else min(total, self.cap)

    def _visit_SetOp(self, node, parameter):  # intersection, difference: at most the left side's values
        return self.of(node.left, parameter)

    def _visit_IfDomain(self, node, parameter):
        return max(self.of(node.then, parameter), self.of(node.orelse, parameter))

    def _visit_Closure(self, node, parameter):
        return self.closure_size(node, parameter)

    # order domains reach C as their slots (translators/order_slots.py)
    _visit_Permutation = _visit_Interleave = _visit_Sequence = ir.DomainVisitor.unhandled


class DomainCode(ir.DomainVisitor):
    """The C of parameters' domains in one build. Visiting a domain node writes the statements
    that append its values to a buffer: `visit(node, buf, count, parameter, ind, dedupe)`.
    `codes` are the categorical strings' codes, `item` numbers a name in the build's item list
    (messages name undefined items by number); closures' lookup tables collect in `tables`
    (static arrays, written before the walks)."""

    def __init__(self, model, bounds, printer, codes: dict[str, int], item):
        self.model = model
        self.bounds = bounds
        self.printer = printer
        self.codes = codes
        self.item = item
        self.scratch = itertools.count()   # names of the right sides' local arrays, unique per program
        self.tables: list[str] = []
        self.closure_sizes: dict[int, int] = {}
        self.size_bound = DomainSize(bounds, self.closure_size, cap=LOOP_LIMIT).of
        self.size = DomainSize(bounds, self.closure_size).of

    def unsupported(self, node):
        raise TypeError(type(node).__name__)

    # ------------------------------------------------------------------------------ sizes
    def closure_size(self, node: ir.Closure, parameter) -> int:
        """The most values the closure yields for one combination of its inputs."""
        if id(node) not in self.closure_sizes:
            self.closure_sizes[id(node)] = max((len(v) for v in self.closure_table(node, parameter).rows.values()),
                                               default=0)
        return self.closure_sizes[id(node)]

    def buffer_size(self, parameter) -> int:
        size = self.size(parameter.domain, parameter)
        if size > MAX_BUFFER:
            raise UnsupportedConstruct("C", parameter.domain, f"its value list may hold {size} values "
                                       f"(more than {MAX_BUFFER})", owner=parameter, model=self.model)
        return max(size, 1)

    # ------------------------------------------------------------------------------ loop headers
    def setup(self, i, parameter, solve, ind, count_only=False, tighten=(), count_undefined="",
              quotient: tuple[str, str] | None = None) -> list[str]:
        """Set n_i (and start_i/step_i or buf_i) for the parameter's domain at this point;
        `count_undefined`: a statement run when the domain is undefined (a funnel counter);
        `quotient`: (flag, value) C expressions: where the flag is set, the solve's `k` is known to
        divide `e` and `e / k` is the value (a divisor loop's, `LoopNest.divisor_checks`)."""
        item = self.item(f"domain of {parameter.name}")
        domain = parameter.domain
        lines = []
        count_level = f" {count_undefined}" if count_undefined else ""
        undefined = f"if (uflag) {{ uflag = 0; if (!st->undefined++) st->undef_item = {item};{count_level} n_{i} = 0; }}"
        if isinstance(domain, ir.Range):
            lines += self.range_setup(i, domain, parameter, ind, tighten)
        elif count_only and not isinstance(domain, ir.Values):
            lines.append(f"{ind}int64_t tmp_{i}[{self.buffer_size(parameter)}];")
            lines += self.fill_buffer(f"tmp_{i}", f"n_{i}", domain, parameter, ind)
        elif count_only:
            lines.append(f"{ind}int64_t tmp_{i}[{max(len(domain.items), 1)}];")
            lines += self.fill_buffer(f"tmp_{i}", f"n_{i}", domain, parameter, ind)
        else:
            lines += self.fill_buffer(f"buf_{i}", f"n_{i}", domain, parameter, ind)
        lines.append(f"{ind}{undefined}")
        if solve:
            coefficient, value, constraint = solve
            k = self.printer.print(coefficient, constraint) if coefficient is not None else "INT64_C(1)"
            e = self.printer.print(value, constraint)
            member = self.membership(i, domain)
            divides, quotient_ = ("e_ % k_ == 0", "e_ / k_") if quotient is None else (
                f"{quotient[0]} || e_ % k_ == 0", f"{quotient[0]} ? {quotient[1]} : e_ / k_")
            lines += [
                f"{ind}if (n_{i} > 0) {{",
                f"{ind}    int64_t e_ = {e}, k_ = {k}, c_ = 0; int ok_ = !uflag && ({divides});",
                f"{ind}    if (uflag) {{ uflag = 0; if (!st->undefined++) st->undef_item = {item}; }}",
                f"{ind}    if (ok_) {{ c_ = {quotient_}; ok_ = {member}; }}",
                f"{ind}    n_{i} = ok_ ? 1 : 0; buf_{i}[0] = c_;",
                f"{ind}}}",
            ]
        return lines

    def setup_may_fail(self, parameter) -> bool:
        """Whether setting up the parameter's domain (`setup` without a solve) may raise the
        undefined flag (a `//` or `%` helper given `u`: its divisor's bounds hold 0) or stop on a
        range step of 0 (a `range` whose step's bounds hold 0). Written by a scratch copy, so the
        build's item list and tables do not change. A `tighten` cap is left out: it divides by a
        coefficient proven >= 1, its operands free of division (`translators.c.optimize`)."""
        for node in ir.walk(parameter.domain):
            if isinstance(node, ir.Range):
                step = self.bounds.expr(node.step)
                if not step.empty and step.lo <= 0 <= step.hi:
                    return True
        scratch = DomainCode(self.model, self.bounds, self.printer, self.codes, lambda name: 0)
        return any(", u)" in line for line in scratch.setup(0, parameter, None, ""))

    def membership(self, i, domain) -> str:
        """The test that a solved value `c_` is among the domain's values (a range's, or the buffer's)."""
        if isinstance(domain, ir.Range):
            return (f"(step_{i} > 0 ? (c_ >= start_{i} && c_ < start_{i} + n_{i} * step_{i}) "
                    f": (c_ <= start_{i} && c_ > start_{i} + n_{i} * step_{i})) "
                    f"&& (step_{i} == 1 || (c_ - start_{i}) % step_{i} == 0)")
        return f"ss_member(c_, buf_{i}, n_{i})"

    def range_setup(self, i, domain: ir.Range, parameter, ind, tighten=()) -> list[str]:
        """A range loop's start, step and count (no buffer), its stop lowered by `tighten`."""
        for part in (domain.start, domain.stop, domain.step):
            interval = self.bounds.expr(part)
            if not (-(2 ** 62) <= interval.lo and interval.hi <= 2 ** 62):
                raise UnsupportedConstruct("C", part, f"range bound values {interval} are too large for 64-bit loops",
                                           owner=parameter, model=self.model)
        p = self.printer
        start, stop, step = (p.print(e, parameter) for e in (domain.start, domain.stop, domain.step))
        caps = []
        for coefficient, bound, strict, constraint in tighten:
            # v * k <= e  <=>  v <= e // k;  v * k < e  <=>  v <= (e - 1) // k   (k > 0), printed by
            # the printer's rules (C's own `/` where e is proven non-negative: no undefined flag)
            p.print(bound, constraint)   # refused as written, where its values do not fit 64 bits
            e = ir.BinOp("-", bound, ir.Const(1)) if strict else bound
            last = p.print(e if coefficient is None else ir.BinOp("//", e, coefficient), constraint)
            caps.append(f"{ind}{{ int64_t cap_ = {last} + 1; if (step_{i} > 0 && cap_ < stop_) stop_ = cap_; }}")
        return [
            f"{ind}start_{i} = {start}; {{ int64_t stop_ = {stop}; step_{i} = {step};",
            *caps,
            f"{ind}if (!uflag && step_{i} == 0) {{ st->error = {ERROR_STEP_ZERO}; st->undef_item = {self.item(parameter.name)}; return; /*abort*/ }}",
            f"{ind}if (step_{i} > 0) n_{i} = start_{i} < stop_ ? (stop_ - start_{i} + step_{i} - 1) / step_{i} : 0;",
            f"{ind}else if (step_{i} < 0) n_{i} = start_{i} > stop_ ? (start_{i} - stop_ - step_{i} - 1) / (-step_{i}) : 0; }}",
        ]

    # ------------------------------------------------------------------------------ buffers
    def fill_buffer(self, buf, count, node, parameter, ind) -> list[str]:
        """Code that sets `count` values of `node` into `buf` (ordered, duplicate-free)."""
        lines = [f"{ind}{count} = 0;"]
        lines += self.visit(node, buf, count, parameter, ind, not _dedupe_free(node))
        return lines

    @staticmethod
    def push(buf, count, dedupe) -> str:
        """Append `x_` to the buffer (unless already there, where values may repeat)."""
        return (f"if (!ss_member(x_, {buf}, {count})) {buf}[{count}++] = x_;" if dedupe
                else f"{buf}[{count}++] = x_;")

    def _visit_Values(self, node, buf, count, parameter, ind, dedupe):
        push = self.push(buf, count, dedupe)
        return [f"{ind}{{ int64_t x_ = {self.printer.print(item, parameter)}; {push} }}" for item in node.items]

    def _visit_Range(self, node, buf, count, parameter, ind, dedupe):
        push = self.push(buf, count, dedupe)
        start, stop, step = (self.printer.print(e, parameter) for e in (node.start, node.stop, node.step))
        return [f"{ind}{{ int64_t a_ = {start}, b_ = {stop}, s_ = {step};",
                f"{ind}  if (!uflag && s_ == 0) {{ st->error = {ERROR_STEP_ZERO}; st->undef_item = {self.item(parameter.name)}; return; /*abort*/ }}",
                f"{ind}  if (!uflag) for (int64_t x_ = a_; s_ > 0 ? x_ < b_ : x_ > b_; x_ += s_) {{ {push} }} }}"]

    def _visit_IfDomain(self, node, buf, count, parameter, ind, dedupe):
        return ([f"{ind}if ({self.printer.print(node.cond, parameter)}) {{"]
                + self.visit(node.then, buf, count, parameter, ind + "    ", dedupe)
                + [f"{ind}}} else {{"]
                + self.visit(node.orelse, buf, count, parameter, ind + "    ", dedupe)
                + [f"{ind}}}"])

    def both_sides(self, node, buf, count, parameter, ind):
        """The left side's values into `buf`, then an inner block with the right side's in a
        local array: (lines, the array's name, its count's name); the caller closes the block."""
        size = self.size(node.right, parameter)
        lines = self.visit(node.left, buf, count, parameter, ind, True)
        number = next(self.scratch)  # (named after id(node) before: differed between runs, could repeat)
        other, other_n = f"r{number}_", f"rn{number}_"
        lines += [f"{ind}{{ int64_t {other}[{max(size, 1)}]; int64_t {other_n} = 0;"]
        lines += self.visit(node.right, other, other_n, parameter, ind + "  ", True)
        return lines, other, other_n

    def _visit_Union(self, node, buf, count, parameter, ind, dedupe):
        lines, other, other_n = self.both_sides(node, buf, count, parameter, ind)
        lines.append(f"{ind}  for (int64_t j_ = 0; j_ < {other_n}; j_++) {{ int64_t x_ = {other}[j_]; "
                     f"if (!ss_member(x_, {buf}, {count})) {buf}[{count}++] = x_; }} }}")
        return lines

    def keep(self, node, buf, count, parameter, ind, keep: str):
        """The left side's values for which `keep`ss_member(value, right side) holds."""
        lines, other, other_n = self.both_sides(node, buf, count, parameter, ind)
        lines.append(f"{ind}  int64_t w_ = 0; for (int64_t j_ = 0; j_ < {count}; j_++) "
                     f"if ({keep}ss_member({buf}[j_], {other}, {other_n})) {buf}[w_++] = {buf}[j_];"
                     f" {count} = w_; }}")
        return lines

    def _visit_Intersection(self, node, buf, count, parameter, ind, dedupe):
        return self.keep(node, buf, count, parameter, ind, "")

    def _visit_Difference(self, node, buf, count, parameter, ind, dedupe):
        return self.keep(node, buf, count, parameter, ind, "!")

    # ------------------------------------------------------------------------------ closures
    def closure_table(self, node: ir.Closure, parameter):
        """The closure's shared table (`solverspace.lang.closures`), or a refusal naming why not."""
        try:
            return self.model.closures.table(node)
        except ClosureTableError as exc:
            raise UnsupportedConstruct("C", node, exc.message, owner=parameter, model=self.model, hint=exc.hint)

    def coded(self, value, node, parameter) -> int:
        """A value as the C code holds it (strings as their codes)."""
        if type(value) is str:
            return self.codes[value]
        if type(value) not in (int, bool):
            raise UnsupportedConstruct("C", node, f"an input of the closure takes the fraction {value}",
                                       owner=parameter, model=self.model)
        return int(value)

    def _visit_Closure(self, node, buf, count, parameter, ind, dedupe):
        """Look the values up: each input's position among its (sorted, coded) values, then the
        combination's slice of the flat table."""
        table = self.closure_table(node, parameter)
        tid = len(self.tables)
        lines = [f"{ind}{{ int64_t ix_ = 0, at_; int ok_ = 1;"]
        sorted_inputs, stride = [], 1
        for k, (dep, values) in reversed(list(enumerate(zip(node.deps, table.inputs)))):
            pairs = sorted((self.coded(v, node, parameter), v) for v in values)
            sorted_inputs.insert(0, [v for _, v in pairs])
            codes = [c for c, _ in pairs]
            var = c_name(dep)
            if codes and codes == list(range(codes[0], codes[0] + len(codes))):  # dense: arithmetic
                lines.append(f"{ind}  at_ = {var} - ({codes[0]}); if (at_ < 0 || at_ >= {len(codes)}) ok_ = 0;"
                             f" else ix_ += at_ * {stride};")
            else:
                self.tables.append(f"static const int64_t tab{tid}_in{k}[] = {{{', '.join(map(str, codes or [0]))}}};")
                lines.append(f"{ind}  at_ = ss_find({var}, tab{tid}_in{k}, {len(codes)}); if (at_ < 0) ok_ = 0;"
                             f" else ix_ += at_ * {stride};")
            stride *= len(codes)
        offsets, flat = [0], []
        for combo in itertools.product(*sorted_inputs):
            flat += [self.coded(v, node, parameter) for v in table.rows.get(combo, ())]
            offsets.append(len(flat))
        self.tables.append(f"static const int64_t tab{tid}_values[] = {{{', '.join(map(str, flat or [0]))}}};")
        self.tables.append(f"static const int64_t tab{tid}_offsets[] = {{{', '.join(map(str, offsets))}}};")
        lines.append(f"{ind}  if (ok_) for (int64_t j_ = tab{tid}_offsets[ix_]; j_ < tab{tid}_offsets[ix_ + 1]; j_++) "
                     f"{buf}[{count}++] = tab{tid}_values[j_]; }}")
        return lines

    # order domains reach C as their slots (translators/order_slots.py)
    _visit_Permutation = _visit_Interleave = _visit_Sequence = ir.DomainVisitor.unhandled


def _dedupe_free(node) -> bool:
    """Domains whose values cannot repeat (so no duplicate check is needed)."""
    return isinstance(node, ir.Range) or (isinstance(node, ir.IfDomain) and _dedupe_free(node.then)
                                          and _dedupe_free(node.orelse))
