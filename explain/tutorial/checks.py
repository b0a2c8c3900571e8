"""Checking a stop's expectations against the step it shows: one small function per expectation kind, each
returning a line that says what held, or raising a located one-line error that says what did not and how to
fix it."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from explain.core.shape_rules import fmt_shape
from explain.ops.base import idx
from explain.ops.base import sig6 as num
from explain.trace import Step, Trace
from explain.tutorial.schema import Expect, Index, Stop

FLOAT_SLACK = 1e-12  # so that a number rounded to exactly half the last digit still passes at tol = 5e-5

Fail = Callable[..., Exception]  # fail(what, fix, field=...) -> a located TutorialError


@dataclass
class Check:
    """One expectation that held."""

    stop: int  # 1-based stop number
    step: str  # the step checked
    kind: str  # the expectation field, e.g. "values[1]"
    detail: str  # what was checked, for `explain tutorial check`


def select(output: Any, index: Index, step: Step, field: str, fail: Fail) -> Any:
    """``output[index]`` with ":" as a whole axis, or an error naming the index and the shape."""
    if len(index) > len(step.shape):
        raise fail(f"{idx(index) or '[]'} has {len(index)} indices but {step.name} has {len(step.shape)} axes "
                   f"(shape {fmt_shape(step.shape)})", f"give at most {len(step.shape)} indices", field=field)
    for axis, (i, n) in enumerate(zip(index, step.shape)):
        if i != ":" and i >= n:
            raise fail(f"{idx(index)} is outside {step.name}, whose shape is {fmt_shape(step.shape)}",
                       f"index {axis} must be below {n}", field=field)
    return output[tuple(slice(None) if i == ":" else i for i in index)]


def _compare(got: Any, want: Any, tol: float, what: str, field: str, fail: Fail) -> None:
    """Every element of ``got`` within ``tol`` of ``want`` (−inf equals −inf), or an error at the first that is
    not."""
    import numpy as np  # lazy: numpy off the shape path

    got = np.asarray(got, dtype=float)
    want = np.broadcast_to(np.asarray(want, dtype=float), got.shape)
    ok = np.isclose(got, want, rtol=0.0, atol=tol + FLOAT_SLACK)
    if ok.all():
        return
    pos = tuple(int(i) for i in np.argwhere(~ok)[0])
    g, w = float(got[pos]), float(want[pos])
    where = f"{what}{idx(pos)}" if pos else what
    off = abs(g - w)
    off_s = f"off by {off:.2g}, " if np.isfinite(off) else ""
    fix = f"correct the expected number (the run gives {num(g)})"
    if np.isfinite(off) and off <= 5e-3 * max(1.0, abs(w)):  # close: probably a rounded number
        fix += f", or set tol = {_suggest_tol(off)} if yours is rounded"
    raise fail(f"{where} is {num(g)} but the tutorial expects {num(w)} ({off_s}tol {tol:g})", fix, field=field)


def _suggest_tol(off: float) -> str:
    if off <= 0:
        return "1e-6"
    exp = math.ceil(math.log10(off))
    return f"{10 ** exp:g}" if 10 ** exp >= off * 1.0001 else f"{10 ** (exp + 1):g}"


def check_stop(trace: Trace, step: Step, stop: Stop, fail: Fail) -> list[Check]:
    """Check the stop's cell and every expectation it carries; a Check for each that held."""
    import numpy as np  # lazy: numpy off the shape path

    out: list[Check] = []
    add = lambda kind, detail: out.append(Check(stop.number, step.name, kind, detail))  # noqa: E731
    if stop.cell is not None:
        if len(stop.cell) != len(step.shape) or any(i >= n for i, n in zip(stop.cell, step.shape)):
            example = "[" + ", ".join("0" for _ in step.shape) + "]"
            raise fail(f"{idx(stop.cell)} is outside {step.name}, whose shape is {fmt_shape(step.shape)}",
                       f"give {len(step.shape)} indices, each below its axis size, e.g. cell = {example}", field="cell")
        add("cell", f"{idx(stop.cell)} is inside {fmt_shape(step.shape)}")
    e: Expect | None = stop.expect
    if e is None:
        return out
    x = np.asarray(step.output)
    tol = e.tol
    if e.shape is not None:
        if tuple(step.shape) != e.shape:
            raise fail(f"{step.name} has shape {fmt_shape(step.shape)} but the tutorial expects {fmt_shape(e.shape)}",
                       f"write shape = {list(step.shape)} if the model is right, else change its options",
                       field="expect.shape")
        add("shape", fmt_shape(e.shape))
    if e.value is not None:
        _compare(x[stop.cell], e.value, tol, f"{step.name}{idx(stop.cell)}", "expect.value", fail)
        add("value", f"{step.name}{idx(stop.cell)} = {num(e.value)} (tol {tol:g})")
    if e.values is not None:
        index = e.index or ()
        sel = select(x, index, step, "expect.index", fail) if index else x
        name = f"{step.name}{idx(index)}" if index else step.name
        want = np.asarray(e.values)
        if want.shape != np.shape(sel):
            raise fail(f"the tutorial gives {fmt_shape(want.shape)} numbers but {name} has shape "
                       f"{fmt_shape(np.shape(sel))}", f"give values of shape {list(np.shape(sel))}",
                       field="expect.values")
        _compare(sel, want, tol, name, "expect.values", fail)
        plural = "s" if want.size != 1 else ""
        add("values" + (idx(index) if index else ""), f"{want.size} number{plural} of {name} (tol {tol:g})")
    for kind, fn, label in (("row_sums", np.sum, "sums"), ("row_means", np.mean, "means"),
                            ("row_vars", np.var, "variances")):
        want = getattr(e, kind)
        if want is not None:
            _compare(fn(x, axis=-1), want, tol, f"the row {label} of {step.name}", f"expect.{kind}", fail)
            add(kind, f"every row of {step.name} has {label[:-1]} {num(want)} (tol {tol:g})")
    if e.min is not None:
        lo = float(np.min(x))
        if lo < e.min - tol:
            raise fail(f"{step.name} has a value {num(lo)}, below the expected min {num(e.min)}",
                       "correct min, or check the step", field="expect.min")
        add("min", f"no value of {step.name} is below {num(e.min)}")
    if e.max is not None:
        hi = float(np.max(x))
        if hi > e.max + tol:
            raise fail(f"{step.name} has a value {num(hi)}, above the expected max {num(e.max)}",
                       "correct max, or check the step", field="expect.max")
        add("max", f"no value of {step.name} is above {num(e.max)}")
    if e.above_diagonal is not None:
        if x.ndim < 2:
            raise fail(f"{step.name} has {x.ndim} axis/axes; above_diagonal needs a matrix",
                       "drop above_diagonal from this stop", field="expect.above_diagonal")
        upper = np.triu(np.ones(x.shape[-2:], dtype=bool), 1)
        _compare(x[..., upper], e.above_diagonal, tol, f"{step.name} above the diagonal", "expect.above_diagonal",
                 fail)
        add("above_diagonal", f"every entry of {step.name} above the diagonal is {num(e.above_diagonal)}")
    out.extend(_relations(trace, step, stop, e, x, fail))
    return out


def _relations(trace: Trace, step: Step, stop: Stop, e: Expect, x: Any, fail: Fail) -> list[Check]:
    """Expectations about slices of the output, the step's inputs and the parameter counts."""
    import numpy as np  # lazy: numpy off the shape path

    out: list[Check] = []
    tol = e.tol
    if e.equal_slices is not None:
        parts = [select(x, s, step, "expect.equal_slices", fail) for s in e.equal_slices]
        for s, p in zip(e.equal_slices[1:], parts[1:]):
            if np.shape(p) != np.shape(parts[0]) or not np.allclose(p, parts[0], rtol=0, atol=tol + FLOAT_SLACK):
                raise fail(f"{step.name}{idx(e.equal_slices[0])} and {step.name}{idx(s)} differ",
                           "list slices that the model makes equal, or move this to unequal_slices",
                           field="expect.equal_slices")
        names = " = ".join(idx(s) for s in e.equal_slices)
        out.append(Check(stop.number, step.name, "equal_slices", f"{step.name}{names} (tol {tol:g})"))
    if e.unequal_slices is not None:
        parts = [select(x, s, step, "expect.unequal_slices", fail) for s in e.unequal_slices]
        for i in range(len(parts)):
            for j in range(i + 1, len(parts)):
                if np.shape(parts[i]) == np.shape(parts[j]) and np.allclose(parts[i], parts[j], rtol=0,
                                                                             atol=tol + FLOAT_SLACK):
                    a, b = (idx(e.unequal_slices[k]) for k in (i, j))
                    raise fail(f"{step.name}{a} and {step.name}{b} are equal (within tol {tol:g})",
                               "list slices that differ, or move this to equal_slices", field="expect.unequal_slices")
        names = " ≠ ".join(idx(s) for s in e.unequal_slices)
        out.append(Check(stop.number, step.name, "unequal_slices", f"{step.name}{names}"))
    if e.inputs is not None:
        for name in e.inputs:
            if name not in step.inputs:
                raise fail(f"{step.name} reads {', '.join(step.inputs) or 'nothing'}, not '{name}'",
                           f"write inputs = {list(step.inputs)} or a part of it", field="expect.inputs")
        out.append(Check(stop.number, step.name, "inputs", f"{step.name} reads {', '.join(e.inputs)}"))
    if e.equals is not None:
        for name in e.equals:
            if name not in trace and name not in trace.params:
                raise fail(f"no step or parameter named '{name}' in this run", "name a step of the run (see "
                           "'explain run MODEL --plain')", field="expect.equals")
        total = sum(np.asarray(trace.value(n), dtype=float) for n in e.equals)
        if np.shape(total) != np.shape(x) or not np.allclose(x, total, rtol=0, atol=tol + FLOAT_SLACK):
            off = float(np.max(np.abs(x - total))) if np.shape(total) == np.shape(x) else float("nan")
            raise fail(f"{step.name} is not {' + '.join(e.equals)} (off by up to {off:.3g}, tol {tol:g})",
                       "name the steps whose sum this step is", field="expect.equals")
        out.append(Check(stop.number, step.name, "equals", f"{step.name} = {' + '.join(e.equals)} (tol {tol:g})"))
    if e.n_params is not None:
        if trace.n_params != e.n_params:
            raise fail(f"the run has {trace.n_params:,} parameters but the tutorial expects {e.n_params:,}",
                       f"correct the count (write n_params = {trace.n_params}) or the model's options",
                       field="expect.n_params")
        out.append(Check(stop.number, step.name, "n_params", f"{e.n_params:,} parameters in the run"))
    for prefix, want in (e.param_count or {}).items():
        names = [n for n in trace.specs if n.startswith(prefix)]
        if not names:
            raise fail(f"no parameter name starts with '{prefix}'",
                       f"use a prefix of: {', '.join(list(trace.specs)[:8])}", field="expect.param_count")
        got = sum(trace.specs[n].size for n in names)
        if got != want:
            raise fail(f"the parameters named '{prefix}…' ({', '.join(names[:6])}{', …' if len(names) > 6 else ''}) "
                       f"hold {got:,} values but the tutorial expects {want:,}",
                       f"correct the count (write \"{prefix}\" = {got}) or the model's options",
                       field="expect.param_count")
        out.append(Check(stop.number, step.name, "param_count", f"'{prefix}…': {want:,} values in {len(names)} "
                         "parameter(s)"))
    return out
