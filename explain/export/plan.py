"""What an export contains, independent of its format: the steps to compute (each with its op's numpy source),
the values they start from, the helpers they call, what is checked, and where each array is stored.

Both the script (:mod:`explain.export.script`) and the notebook (:mod:`explain.export.notebook`) are written
from one :class:`Export`; neither computes anything itself. The numpy code of a step is always its op's own
``source()``, and helpers are the op's ``helpers`` copied from :mod:`explain.ops.kernels`.
"""

from __future__ import annotations

import builtins
import inspect
import keyword
import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from explain import ops
from explain.core.errors import UsageError
from explain.export.values import LITERAL_LIMIT, is_int_array
from explain.ops import kernels
from explain.trace import Step, Trace

# Names the generated code uses for itself; a step or parameter variable never takes one of them.
RESERVED = {"np", "Path", "data", "expected", "computed", "step_name", "got", "RTOL", "ATOL"}
RTOL, ATOL = 1e-9, 1e-12


@dataclass
class Given:
    """A value the exported code starts from rather than computes: a parameter, a recorded output of a step
    before the exported ones, or the value of an input step (token ids, targets, embeddings)."""

    name: str  # the name in the trace (and the key in the sidecar)
    var: str
    kind: str  # "param", "recorded" or "input"
    value: Any
    literal: bool  # written into the code; else loaded from the sidecar
    note: str = ""

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(np.shape(self.value))


@dataclass
class StepCode:
    """One exported step: the values first needed here, then one statement (none for an input step, whose
    value is its single :class:`Given`)."""

    step: Step
    var: str
    given: list[Given] = field(default_factory=list)
    expr: str | None = None


@dataclass
class Export:
    """Everything the writers need; ``arrays`` is the sidecar's content (empty when every value is a
    literal), keyed by trace name."""

    trace: Trace
    steps: list[StepCode]
    helpers: list[str]
    checked: list[StepCode]
    sidecar: bool
    arrays: dict[str, Any]
    title: str
    narration: dict[str, str]

    @property
    def model(self) -> str:
        return self.trace.config.model

    def helper_sources(self) -> list[str]:
        """The helpers' source text, copied from explain/kernels.py."""
        return [inspect.getsource(getattr(kernels, h)).rstrip() for h in self.helpers]


def var_names(trace: Trace) -> dict[str, str]:
    """A Python name for every step and parameter: dots (and anything else) become underscores
    (``blocks.0.attn.W_Q`` → ``blocks_0_attn_W_Q``); a clash with a keyword, a builtin, a helper or another
    name gets a suffix."""
    helpers = {n for op in ops.REGISTRY.values() for n in op.helpers}
    taken = set(RESERVED) | helpers | set(dir(builtins)) | set(keyword.kwlist)
    out: dict[str, str] = {}
    for name in [*trace.params, *trace.names()]:
        base = re.sub(r"\W", "_", name, flags=re.ASCII)
        if not base or base[0].isdigit():
            base = "_" + base
        var, n = base, 2
        if var in taken:
            var = base + "_"
        while var in taken:
            var, n = f"{base}_{n}", n + 1
        taken.add(var)
        out[name] = var
    return out


def select(trace: Trace, steps: list[str] | None) -> list[Step]:
    """The steps to export, in trace order: all of them, or the named ones (unknown names raise
    StepNotFound with the nearest names)."""
    if trace.shape_only:
        raise UsageError("a shape-only trace has no values to export; export a trace from explain.run()")
    if steps is None:
        return list(trace)
    if isinstance(steps, str):
        steps = [steps]
    if not steps:
        raise UsageError("no steps to export; name at least one step, or export the whole run")
    found = {trace.find(name).index for name in steps}
    return [trace[i] for i in sorted(found)]


def describe(trace: Trace, chosen: list[Step]) -> str:
    """``every step of a gpt run``, ``the step blocks.0.attn.scores of …``, ``steps a … b (10 steps) of …``."""
    model = trace.config.model
    run = f"{'an' if model[0] in 'aeiou' else 'a'} {model} run"
    if len(chosen) == len(trace):
        return f"Every step of {run}"
    if len(chosen) == 1:
        return f"The step {chosen[0].name} of {run}"
    contiguous = chosen[-1].index - chosen[0].index + 1 == len(chosen)
    joiner = " … " if contiguous else ", …, "
    return f"The steps {chosen[0].name}{joiner}{chosen[-1].name} ({len(chosen)} steps) of {run}"


def default_filename(trace: Trace, steps: list[str] | None, suffix: str = ".py") -> str:
    """A file name for an export: ``gpt.py``, ``gpt_blocks_0_attn_scores.py``, ``gpt_a_to_b.py``."""
    chosen = select(trace, steps)
    stem = trace.config.model
    if len(chosen) < len(trace):
        names = [chosen[0].name] + ([chosen[-1].name] if len(chosen) > 1 else [])
        stem += "_" + "_to_".join(re.sub(r"\W", "_", n, flags=re.ASCII) for n in names)
    return stem + suffix


def build(trace: Trace, steps: list[str] | None = None, narration: dict[str, str] | None = None,
          literal_limit: int = LITERAL_LIMIT) -> Export:
    """The :class:`Export` of the chosen steps."""
    chosen = select(trace, steps)
    names = var_names(trace)
    inside = {s.name for s in chosen}
    codes: list[StepCode] = []
    defined: set[str] = set()
    for step in chosen:
        code = StepCode(step, names[step.name])
        if step.op == "input":
            code.given.append(Given(step.name, code.var, "input", step.output, True, step.note))
        else:
            for name in step.inputs:
                if name in defined or name in inside:
                    continue  # computed by an exported step (earlier, since the trace is in order)
                defined.add(name)
                if name in trace:
                    earlier = trace[name]
                    kind = "input" if earlier.op == "input" else "recorded"
                    code.given.append(Given(name, names[name], kind, earlier.output, True, earlier.note))
                else:
                    code.given.append(Given(name, names[name], "param", trace.params[name], True))
            op = ops.get(step.op)
            code.expr = op.source(code.var, [names[n] for n in step.inputs], **step.attrs)
        defined.add(step.name)
        codes.append(code)

    checked = [c for c in codes if c.step.op != "input"]
    givens = [g for c in codes for g in c.given]
    floats = [g for g in givens if not is_int_array(g.value)]
    n_values = sum(np.size(g.value) for g in floats) + sum(np.size(c.step.output) for c in checked)
    sidecar = n_values > literal_limit
    arrays: dict[str, Any] = {}
    if sidecar:  # every float goes to the sidecar; token ids and targets stay literals
        for g in floats:
            g.literal = False
            arrays[g.name] = np.asarray(g.value)
        for c in checked:
            arrays[c.step.name] = np.asarray(c.step.output)

    used = {h for c in checked for h in ops.get(c.step.op).helpers}
    order = [name for name, f in inspect.getmembers(kernels, inspect.isfunction) if f.__module__ in kernels.MODULES]
    order.sort(key=lambda n: (kernels.MODULES.index(getattr(kernels, n).__module__),
                              inspect.getsourcelines(getattr(kernels, n))[1]))
    helpers = [h for h in order if h in used]
    return Export(trace, codes, helpers, checked, sidecar, arrays, describe(trace, chosen), dict(narration or {}))
