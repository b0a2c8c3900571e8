"""The non-interactive outputs of a run: ``--plain`` (every step, one after another, rich and readable) and
``--json`` (one JSON document with the config and every step's name, op, inputs, shape, formula and values)."""

from __future__ import annotations

import json
import math
from typing import Any

from rich.console import Console
from rich.rule import Rule
from rich.text import Text

from explain.render.step import step_header, step_output
from explain.trace import Step, Trace


def print_step(console: Console, trace: Trace, step: Step, precision: int = 4,
               lead: tuple[int, ...] | None = None) -> None:
    """One step: a rule with its index and name, the header, then its output (the slice ``lead`` of a 3- or 4-D
    output; the first by default)."""
    console.print(Rule(Text(f"{step.index + 1}/{len(trace)}  {step.name}", style="bold"), align="left"))
    console.print(step_header(step))
    if step.inputs:
        console.print(Text("inputs: " + ", ".join(step.inputs), style="dim"))
    console.print(step_output(trace, step, precision=precision, heat=console.color_system is not None, lead=lead))
    console.print()


def print_trace(console: Console, trace: Trace, precision: int = 4) -> None:
    """Every step of the trace, after a one-line summary of the run."""
    cfg = trace.config
    tokens = trace.labels.get("pos") or []
    console.print(Text(f"explain run {cfg.model}: {len(trace)} steps, {trace.n_params:,} parameters; "
                       f"tokens: {' '.join(tokens)}", style="bold"))
    console.print()
    for step in trace:
        print_step(console, trace, step, precision)


def _jsonable(value: Any) -> Any:
    """Nested lists of numbers; ±inf as the strings "-inf"/"inf" (JSON has no infinity), NaN as null."""
    import numpy as np

    arr = np.asarray(value)
    if arr.dtype.kind in "iu":
        return arr.tolist()

    def conv(x: float) -> Any:
        if math.isinf(x):
            return "-inf" if x < 0 else "inf"
        return None if math.isnan(x) else x

    if arr.ndim == 0:
        return conv(float(arr))
    flat = [conv(float(x)) for x in arr.reshape(-1)]
    # rebuild the nesting from the flat list, axis by axis
    for n in reversed(arr.shape[1:]):
        flat = [flat[i:i + n] for i in range(0, len(flat), n)]
    return flat


def trace_json(trace: Trace) -> str:
    """The whole run as one JSON document."""
    doc = {
        "config": trace.config.to_dict(),
        "tokens": trace.labels.get("pos", []),
        "labels": {k: v for k, v in trace.labels.items() if k != "vocab"},
        "n_params": trace.n_params,
        "steps": [
            {"index": s.index, "name": s.name, "op": s.op, "inputs": list(s.inputs), "shape": list(s.shape),
             "axes": list(s.axes), "formula": s.formula, "signature": s.signature, "note": s.note,
             "group": list(s.group), "values": _jsonable(s.output)}
            for s in trace
        ],
    }
    return json.dumps(doc, ensure_ascii=False)
