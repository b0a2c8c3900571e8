"""The non-interactive outputs of a run: ``--plain`` (every step, one after another, rich and readable) and
``--json`` (one JSON document with the config and every step's name, op, inputs, shape, formula, statistics and
values, the values of a step of more than :data:`JSON_VALUES` left out with a note saying how to get them). Both
take a :class:`~explain.report.pick.Pick` (``--match``, ``--slice``, ``--cell``): only its steps, its slice, its cell."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

from rich.console import Console
from rich.rule import Rule
from rich.text import Text

from explain.engine.api import generated_ids
from explain.render.predictions import generation_view, predictions_view
from explain.render.step import explanation_view, step_header, step_output
from explain.report.pick import Pick
from explain.report.predict import all_predictions
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


def print_cell(console: Console, trace: Trace, step: Step, cell: tuple[int, ...], precision: int = 4) -> None:
    """One step's header and one cell's drill-down, its table of terms whole (printed to be read or diffed)."""
    console.print(Rule(Text(f"{step.index + 1}/{len(trace)}  {step.name}", style="bold"), align="left"))
    console.print(step_header(step))
    if step.inputs:
        console.print(Text("inputs: " + ", ".join(step.inputs), style="dim"))
    ex = trace.explain(step, cell)
    console.print(Text(f"cell {list(cell)}", style="dim"))
    console.print(explanation_view(ex, precision, max_rows=len(ex.rows)))
    console.print()


def print_trace(console: Console, trace: Trace, precision: int = 4, pick: Pick | None = None) -> None:
    """Every step of the trace (or those ``pick`` chooses, its slice or cell), after a one-line summary."""
    cfg = trace.config
    command = "run" if trace.generation is None else "generate"
    weights = f"; {trace.weights}" if trace.weights else ""
    console.print(Text(f"explain {command} {cfg.model}: {len(trace)} steps, {trace.n_params:,} parameters{weights}; "
                       f"tokens: {trace.tokens_text()}", style="bold"))
    if trace.unknown_words:
        words = ", ".join(f"'{w}'" for w in trace.unknown_words)
        console.print(Text(f"note: not in the vocabulary, read as <unk>: {words}", style="yellow"))
    console.print()
    pick = pick or Pick(list(trace))
    for step in pick.steps:
        if pick.cell is not None:
            print_cell(console, trace, step, pick.cell, precision)
        else:
            print_step(console, trace, step, precision, lead=pick.lead(step))
    if not pick.whole:  # a chosen step or cell, to be read or diffed: nothing after it
        return

    preds = all_predictions(trace)
    if preds:
        console.print(Rule(Text("next-token predictions", style="bold"), align="left"))
        for p in preds:
            console.print(predictions_view(p))
            console.print()
    if trace.generation is not None:
        console.print(Rule(Text("generation", style="bold"), align="left"))
        console.print(generation_view(trace))
    if "loss_after" in trace and "loss" in trace:  # the SGD step's outcome last, where `| tail` finds it
        before, after = float(trace["loss"].output), float(trace["loss_after"].output)
        step = "AdamW" if any(s.op == "adamw" for s in trace) else "SGD"
        console.print(Text(f"loss {before:.4f} → loss_after {after:.4f} after one {step} step "
                           f"({'falls' if after < before else 'does not fall'})", style="bold"))


def _jsonable(value: Any) -> Any:
    """Nested lists of numbers; ±inf as the strings "-inf"/"inf" (JSON has no infinity), NaN as null."""
    import numpy as np  # lazy: numpy off the shape path

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


def _write_values(value: Any, write: Callable[[str], Any]) -> None:
    """``_jsonable(value)`` written piece by piece: one row of the last axis at a time, so a (256, 50257)
    logits step costs one row of Python floats, not 12.9 million of them at once."""
    import numpy as np  # lazy: numpy off the shape path

    arr = np.asarray(value)
    if arr.ndim <= 1:
        write(json.dumps(_jsonable(arr), ensure_ascii=False))
        return
    write("[")
    for i in range(arr.shape[0]):
        if i:
            write(", ")
        _write_values(arr[i], write)
    write("]")


JSON_VALUES = 100_000  # a step with more values gets "values": null and a note: --save holds them all


def _stats(value: Any) -> dict[str, Any]:
    """min, max, mean and standard deviation of the finite values, and how many are ±inf or NaN."""
    import numpy as np  # lazy: numpy loads only when values are computed (test_shapes_imports, bench_check_startup)

    arr = np.asarray(value)
    if arr.dtype.kind not in "biuf" or arr.size == 0:
        return {}
    arr = arr.astype(np.float64, copy=False)
    finite = np.isfinite(arr)
    n_finite = int(np.count_nonzero(finite))
    vals = arr if n_finite == arr.size else arr[finite]
    out: dict[str, Any] = {"min": None, "max": None, "mean": None, "std": None}
    if n_finite:
        with np.errstate(over="ignore", invalid="ignore"):
            out.update(min=float(vals.min()), max=float(vals.max()), mean=float(vals.mean()), std=float(vals.std()))
        out = {k: (None if v is None or not math.isfinite(v) else v) for k, v in out.items()}
    out["n_inf"] = int(np.count_nonzero(np.isinf(arr)))
    out["n_nan"] = int(np.count_nonzero(np.isnan(arr)))
    return out


def ran_config(trace: Trace) -> dict[str, Any]:
    """The config as it ran: a model that is always causal says ``"causal": true`` though its switch was off."""
    cfg = trace.config.to_dict()
    if not cfg.get("causal") and "always causal" in trace.config.spec.masking:
        cfg["causal"] = True
    return cfg


def _cell_doc(trace: Trace, step: Step, cell: tuple[int, ...]) -> dict[str, Any]:
    """One cell's drill-down as JSON: the cell, its value, the table of terms and the arithmetic lines."""
    ex = trace.explain(step, cell)

    def term(v: Any) -> Any:
        return _jsonable(v) if isinstance(v, (int, float)) or hasattr(v, "dtype") else str(v)

    origin = None if ex.origin is None else {  # a GGUF run: where the weight the cell reads came from in the file
        "title": ex.origin.title, "value": _jsonable(ex.origin.value), "lines": list(ex.origin.lines)}
    return {"cell": list(cell), "value": _jsonable(ex.value), "explanation": {
        "title": ex.title, "columns": list(ex.columns), "rows": [[term(v) for v in row] for row in ex.rows],
        "lines": list(ex.lines), "shown": ex.shown, "origin": origin}}


def _picked(s: Step, pick: Pick) -> tuple[Any, dict[str, int]]:
    """The values ``pick`` keeps of step ``s`` (its --slice axes indexed, the others whole) and those axes."""
    sliced = pick.sliced(s)
    if not sliced or s.output is None:
        return s.output, {}
    index = tuple(sliced.get(a, slice(None)) for a in s.axes[:len(s.shape) - 2])
    return s.output[index], sliced


def write_trace_json(trace: Trace, write: Callable[[str], Any], pick: Pick | None = None) -> None:
    """The whole run as one JSON document, written step by step through ``write`` (the same text
    :func:`trace_json` returns): its memory is one row at a time on top of the trace's, however big the run.
    Given a ``pick``: its steps only, each step's values its slice (``"slice"`` says which) or, for a cell, the
    cell's drill-down in place of the values."""
    head = {
        "config": ran_config(trace),
        "tokens": list(trace.labels.get("pos", [])),
        "labels": {k: list(v) for k, v in trace.labels.items() if k != "vocab"},
        "n_params": trace.n_params,
    }
    write(json.dumps(head, ensure_ascii=False)[:-1] + ', "steps": [')
    pick = pick or Pick(list(trace))
    for n, s in enumerate(pick.steps):
        meta = {"index": s.index, "name": s.name, "op": s.op, "inputs": list(s.inputs), "shape": list(s.shape),
                "axes": list(s.axes), "formula": s.formula, "signature": s.signature, "note": s.note,
                "group": list(s.group)}
        if pick.cell is not None:
            write((", " if n else "") + json.dumps({**meta, **_cell_doc(trace, s, pick.cell)}, ensure_ascii=False))
            continue
        value, sliced = _picked(s, pick)
        if sliced:
            meta["slice"] = sliced  # the values and the stats are this slice's; "shape" stays the step's
        meta["stats"] = _stats(value)
        size = int(getattr(value, "size", 0))
        if size > JSON_VALUES:  # 1,024 × 50,257 logits as text is gigabytes nobody reads: say where they are
            meta["values"] = None
            meta["omitted"] = (f"{size:,} values, more than the {JSON_VALUES:,} --json writes; all of them: add "
                               f"--save FILE.npz, then np.load(FILE)['{s.name}']")
            write((", " if n else "") + json.dumps(meta, ensure_ascii=False))
            continue
        write((", " if n else "") + json.dumps(meta, ensure_ascii=False)[:-1] + ', "values": ')
        _write_values(value, write)
        write("}")
    write("]")
    tail = _predictions_and_generation(trace) if pick.whole else {}
    if tail:
        write(", " + json.dumps(tail, ensure_ascii=False)[1:-1])
    write("}")


def _predictions_and_generation(trace: Trace) -> dict[str, Any]:
    """The next-token predictions (where there are logits) and what a generation drew, for the JSON document."""
    out: dict[str, Any] = {}
    preds = all_predictions(trace)
    if preds:
        out["predictions"] = [p.to_dict() for p in preds]
    gen = trace.generation
    if gen is not None:
        s = gen.sampling
        out["generation"] = {"max_new_tokens": s.max_new_tokens, "greedy": s.greedy, "temperature": s.temperature,
                             "top_k": s.top_k, "top_p": s.top_p, "seed": s.seed,
                             "prompt": [list(ids) for ids in gen.prompt], "new_tokens": generated_ids(trace),
                             "steps": list(gen.steps)}
    return out


def trace_json(trace: Trace) -> str:
    """The whole run as one JSON document (for a small run; the CLI streams it with :func:`write_trace_json`)."""
    parts: list[str] = []
    write_trace_json(trace, parts.append)
    return "".join(parts)
