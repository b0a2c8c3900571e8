"""The exported Python script: a docstring, the helpers copied from :mod:`explain.ops.kernels`, one statement per
step under a comment with its name, shape, formula and note, and the checks against the recorded values.

The pieces (:func:`header`, :func:`given_lines`, :func:`step_lines`, :func:`check_lines`) are shared with the
notebook writer, so a notebook cell holds exactly the code of the script.
"""

from __future__ import annotations

import json
import textwrap
import unicodedata

from explain import __version__
from explain.core.options import OPTIONS, flag
from explain.core.shape_rules import fmt_shape
from explain.export.layout import comment, statement
from explain.export.plan import ATOL, RTOL, Export, Given, StepCode
from explain.export.values import INDENT, WIDTH, literal

SIDECAR_LOAD = 'data = np.load(Path(__file__).with_suffix(".npz"), allow_pickle=False)'


def clean(text: str) -> str:
    """Text safe in a comment or markdown: control characters (a stray carriage return would end a comment
    and start code) are written as escapes."""
    return "".join(c if c in "\n\t" or unicodedata.category(c) != "Cc" else repr(c)[1:-1] for c in text)


def docstring_safe(text: str) -> str:
    """Text safe inside a triple-quoted docstring: cleaned, with backslashes and triple quotes escaped."""
    return clean(text).replace("\\", "\\\\").replace('"""', '\\"\\"\\"')


def run_summary(export: Export) -> list[str]:
    """What run the values come from: the model, its dimensions and its tokens."""
    trace = export.trace
    cfg = trace.config.to_dict()
    dims = ", ".join(f"{o.name}={cfg[o.name]}" for o in OPTIONS if o.summary and cfg.get(o.name) is not None)
    lines = [f"Model: {export.model} ({dims})."]
    raw = trace.config
    variants = [flag(o.name, getattr(raw, o.name)) if o.type == "bool" else f"{o.flag} {getattr(raw, o.name)}"
                for o in OPTIONS if o.group == "config" and not o.summary and o.type in ("bool", "int")
                and o.used_by(raw.spec) and getattr(raw, o.name) != o.default]
    if variants:  # the model options this run changed (the book's causal, bias-free attention: --causal …)
        lines.append(f"Options: {' '.join(variants)}.")
    labels = trace.labels
    items = trace.batch_labels.get("pos") or []
    for axis, what in (("src", "Source tokens"), ("tgt", "Target tokens"), ("pos", "Tokens")):
        if axis == "pos" and len(items) > 1:  # a batch: each sequence's own words, by its batch index
            lines.extend(f"Tokens of batch item {b}: {' '.join(words)}" for b, words in enumerate(items))
        elif labels.get(axis) and (axis != "pos" or "src" not in labels):
            lines.append(f"{what}: {' '.join(labels[axis])}")
    return lines


def header(export: Export, sidecar_name: str | None, how: str) -> list[str]:
    """The module docstring: what this is, the run it comes from, how to run it and what it checks."""
    body = [f"{export.title}, as plain numpy.", ""] + about(export, sidecar_name, how)
    out: list[str] = []
    for para in "\n".join(docstring_safe(b) for b in body).split("\n"):
        out.extend(textwrap.wrap(para, WIDTH - 3, break_on_hyphens=False) or [""])
    out[0] = '"""' + out[0]
    out.append('"""')
    return out


def about(export: Export, sidecar_name: str | None, how: str) -> list[str]:
    """The run the values come from; ``how`` to run it ("Run it with `python foo.py`"), what that needs,
    what it computes and checks."""
    where = f"{sidecar_name} beside it" if sidecar_name else "the .npz file of the same name beside it"
    needs = f"numpy and {where}" if export.sidecar else "only numpy"
    starts = "the parameters and the given inputs"
    if any(g.kind == "recorded" for c in export.steps for g in c.given):
        starts = "the parameters and the recorded outputs of the steps before them"
    return run_summary(export) + [
        "", f"{how}: it needs {needs}. It computes each step from {starts}, with the "
        "numpy code explain itself ran, then checks every result against the value explain recorded. "
        f"Exported by explain {__version__}."]


def _what(g: Given) -> str:
    if g.kind == "param":
        return "parameter"
    if g.kind == "recorded":
        return "recorded output of a step before this export"
    return g.note or "given as input"


def given_lines(g: Given) -> list[str]:
    """One given value: a literal under a comment naming it, or one load from the sidecar with its shape."""
    shape = fmt_shape(g.shape)
    if g.literal:
        return [*comment(clean(f"{g.name}  {shape}: {_what(g)}")), *literal(g.value, f"{g.var} = ")]
    load = statement(g.var, f"data[{json.dumps(g.name)}]")
    tail = f"  # {shape} {_what(g)}"
    if len(load) == 1 and len(load[0]) + len(tail) <= WIDTH:
        return [load[0] + tail]
    return [*comment(clean(f"{g.name}  {shape}: {_what(g)}")), *load]


def step_comment(code: StepCode, narration: str | None = None) -> list[str]:
    """Name and shape, formula, shape signature, note: the comment above a step's statement."""
    s = code.step
    lines = []
    if narration:
        lines += comment(clean(narration)) + ["#"]
    lines += comment(clean(f"{s.name}  {fmt_shape(s.shape)}"))
    lines += comment(clean(s.formula))
    if s.signature and s.op != "input":
        lines += comment(clean(s.signature))
    if s.note:
        lines += comment(clean(s.note))
    return lines


def step_lines(code: StepCode, with_comment: bool = True, narration: str | None = None) -> list[str]:
    """The given values first needed by this step, then its comment and its one statement."""
    out: list[str] = []
    for g in code.given if code.expr is not None else []:
        out += given_lines(g) + ([""] if g.literal else [])
    if out and out[-1]:
        out.append("")
    if with_comment:
        out += step_comment(code, narration)
    if code.expr is None:  # an input step: its value, written out
        g = code.given[0]
        out += literal(g.value, f"{g.var} = ") if g.literal else statement(g.var, f"data[{json.dumps(g.name)}]")
    else:
        out += statement(code.var, code.expr)
    return out


def check_lines(export: Export) -> list[str]:
    """Compare every computed step with its recorded value and print a one-line summary."""
    if not export.checked:
        given = ", ".join(clean(c.step.name) for c in export.steps)
        return [f"print({json.dumps(f'nothing to check: {given} given as input, not computed')})"]
    tol = f"rtol={RTOL!r}, atol={ATOL!r}"
    out = comment(f"Check: every step computed above against the value explain recorded for it, to "
                  f"{tol}. assert_allclose counts equal infinities as equal, so a masked score must be "
                  "-inf here too.")
    if export.sidecar:
        out.append("expected = data")
    else:
        out.append("expected = {")
        for c in export.checked:
            entry = literal(c.step.output, f"{INDENT}{json.dumps(c.step.name)}: ", indent=INDENT)
            entry[-1] += ","
            out += entry
        out.append("}")
    out.append("computed = {")
    out += [f"{INDENT}{json.dumps(c.step.name)}: {c.var}," for c in export.checked]
    out.append("}")
    out += ["for step_name, got in computed.items():",
            f"{INDENT}np.testing.assert_allclose(",
            f"{INDENT * 2}got, expected[step_name], {tol}, err_msg=step_name",
            f"{INDENT})"]
    if len(export.checked) == 1:  # after the loop, step_name is that one step's
        out.append(f'print(f"ok: {{step_name}} matches the recorded value ({tol})")')
    else:
        out.append(f'print(f"ok: {{len(computed)}} steps match the recorded values ({tol})")')
        # '45 steps match' of a 47-step run: the others are its given inputs, said so (in a line under 88)
        given = [c.step.name for c in export.steps if c not in export.checked]
        rest = f"the other {len(given)} of the {len(export.steps)} steps are given: {', '.join(given)}"
        rest = rest if len(rest) <= 72 else f"the other {len(given)} of the {len(export.steps)} steps are given inputs"
        out += [f"print({json.dumps(rest)})"] if given else []
    return out


def imports(export: Export) -> list[str]:
    return (["from pathlib import Path", ""] if export.sidecar else []) + ["import numpy as np"]


def script_text(export: Export, file_name: str | None = None) -> str:
    """The whole script; ``file_name`` (``foo.py``) names it in the docstring, and its sidecar."""
    sidecar_name = file_name.rsplit(".", 1)[0] + ".npz" if file_name else None
    how = f"Run it with `python {file_name or 'SCRIPT.py'}`"
    out = header(export, sidecar_name, how) + [""] + imports(export)
    for src in export.helper_sources():
        out += ["", "", *src.splitlines()]
    out += ["", ""]
    if export.sidecar:
        out += comment("The values too big to write here, by their names in the trace "
                       '("blocks.0.attn.W_Q"); allow_pickle=False: only plain arrays are read.')
        out += [SIDECAR_LOAD, ""]
    for code in export.steps:
        out += step_lines(code, narration=export.narration.get(code.step.name)) + [""]
    out += [""] + check_lines(export)
    return "\n".join(out) + "\n"
