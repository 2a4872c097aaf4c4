"""Performance models with float constants, drawn for tests: Hypothesis strategies.

`float_models()` takes a space drawn by `generate.spaces` (without a model of its own) and adds
what a kernel engineer writes in a roofline model: float module constants (`F0 = 1.43e3`), a
float Python computes from them when the file is loaded (`F1 = F0 * 3 / 7`, a double with a
17-digit decimal text), float literals inline, and a performance model over the space's integer
parameters that uses them: `cost(expr)`, a `@cost` function with a local name and an `if`, or a
derived value the model reads. Every division is by a float constant or by a positive integer
expression, so the model is defined everywhere.

Each draw carries its oracle: the same model as a Python expression in which every float is
`Fraction(repr(x))`, which is what the language says a float in a model is
(`solverspace.lang.decimals`). A test compares every engine of `best` with the oracle.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from fractions import Fraction

from hypothesis import strategies as st

from solverspace.lang import ir
from solverspace.lang.kinds import INT
from solverspace.io.loader import load_source
from solverspace.validation.generate import spaces

#: Floats with few significant digits (what a datasheet gives: 1.43e3, 288.0, 0.025).
FLOATS = st.builds(lambda m, e: float(f"{m}e{e}"), st.integers(1, 9999), st.integers(-3, 3))


@dataclass
class FloatModel:
    """A space file with a float model, and the model as an exact Python expression."""

    source: str
    oracle: str                                     # a Python expression over the parameters
    constants: dict = field(default_factory=dict)   # float constant name -> its (float) value
    form: str = "expression"                        # "expression", "function" or "derived"
    names: list = field(default_factory=list)       # the integer parameters the model may read

    def value(self, configuration: dict) -> Fraction:
        """The model's exact value at `configuration` (parameter name -> value)."""
        env = {name: Fraction(repr(v)) for name, v in self.constants.items()}
        return eval(self.oracle, {"Fraction": Fraction, "max": max, "min": min}, {**configuration, **env})


def _integer_parameters(source: str) -> list[str]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = load_source(source, "generated.py")
    return [p.name for p in model.parameters if model.kinds.expr(ir.Ref(p.name)) == INT]


@st.composite
def _term(draw, names: list[str], constants: list[str]) -> tuple[str, str]:
    """One term of a model: (space text, oracle text)."""
    name = draw(st.sampled_from(names))
    if constants and draw(st.booleans()):
        const = draw(st.sampled_from(constants))
        text = oracle = const
    else:
        literal = repr(draw(FLOATS))
        text, oracle = literal, f"Fraction({literal!r})"
    shape = draw(st.integers(0, 3))
    if shape == 0:
        return f"{name} * {text}", f"{name} * {oracle}"
    if shape == 1:
        return f"{name} / {text}", f"{name} / {oracle}"
    if shape == 2:
        return f"{text} / ({name} * {name} + 1)", f"{oracle} / ({name} * {name} + 1)"
    return f"({name} + {text})", f"({name} + {oracle})"


@st.composite
def _combined(draw, names, constants) -> tuple[str, str]:
    terms = draw(st.lists(_term(names, constants), min_size=1, max_size=3))
    how = draw(st.sampled_from(["+", "max", "min"]))
    if how == "+" or len(terms) == 1:
        return " + ".join(t for t, _ in terms), " + ".join(o for _, o in terms)
    return f"{how}({', '.join(t for t, _ in terms)})", f"{how}({', '.join(o for _, o in terms)})"


@st.composite
def float_models(draw, **space_options) -> FloatModel:
    """A generated space (`space_options` go to `generate.spaces`) with a float performance model."""
    source = draw(spaces(**space_options))
    names = _integer_parameters(source)
    lines = []
    if not names:
        lines.append("fq = range(1, 4)")
        names = ["fq"]
    constants: dict[str, float] = {}
    for index in range(draw(st.integers(0, 2))):
        constants[f"F{index}"] = draw(FLOATS)
        lines.append(f"F{index} = {constants[f'F{index}']!r}")
    if constants and draw(st.booleans()):   # a float Python computes when the file is loaded
        base = draw(st.sampled_from(sorted(constants)))
        constants["FC"] = constants[base] * 3 / 7
        lines.append(f"FC = {base} * 3 / 7")
    known = sorted(constants)
    form = draw(st.sampled_from(["expression", "function", "derived"]))
    text, oracle = draw(_combined(names, known))
    if form == "expression":
        lines.append(f"cost({text})")
    elif form == "derived":
        more, more_oracle = draw(_combined(names, known))
        lines += [f"fd = {text}", f"cost(fd + {more})"]
        oracle = f"({oracle}) + {more_oracle}"
    else:
        other, other_oracle = draw(_combined(names, known))
        test, threshold = draw(st.sampled_from(names)), draw(st.integers(-2, 4))
        scale = repr(draw(FLOATS))
        lines += ["@cost", f"def model({', '.join(names)}):", f"    t = {text}",
                  f"    if {test} > {threshold}:", f"        return t + {other}", f"    return t * {scale}"]
        oracle = f"(({oracle}) + {other_oracle}) if {test} > {threshold} else ({oracle}) * Fraction({scale!r})"
    return FloatModel(source + "\n".join(lines) + "\n", oracle, constants, form, names)
