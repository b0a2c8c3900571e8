"""Plain-text and JSON output for ``explain check``: the shape tree of an expression, the bindings of an einsum.

Plain strings (no rich) so the command stays within its startup budget; the ``check`` command echoes them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from explain.check.names import fmt_names
from explain.core.shape_rules import fmt_shape

if TYPE_CHECKING:  # types only: the command imports just the checker for the form it runs
    from explain.check.einsum import EinsumResult
    from explain.check.expr import Node
    from explain.check.function import FunctionCheck
    from explain.check.parse import Bindings

TEXT_WIDTH = 56  # sub-expression text beyond this is cut with …, so the shape column stays on screen


def _rows(node: Node, lead: str, branch: str, rows: list[tuple[str, str, str]]) -> None:
    text = node.text if len(node.text) <= TEXT_WIDTH else node.text[: TEXT_WIDTH - 1] + "…"
    op = node.op if not node.detail else f"{node.op} {node.detail}" if node.op != "input" else node.detail
    names = fmt_names(node.names)
    rows.append((lead + branch + text, fmt_shape(node.shape) + (f" {names}" if names else ""), op))
    # Children indent under this node; the connector column continues only if more siblings follow.
    child_lead = lead + ("" if not branch else "│  " if branch == "├─ " else "   ")
    for i, child in enumerate(node.children):
        _rows(child, child_lead, "└─ " if i == len(node.children) - 1 else "├─ ", rows)


def render_tree(node: Node, bindings: Bindings) -> list[str]:
    """The expression as a tree, every sub-expression with its shape and operation, then the result."""
    rows: list[tuple[str, str, str]] = []
    _rows(node, "", "", rows)
    w_text = max(len(r[0]) for r in rows)
    w_shape = max(len(r[1]) for r in rows)
    lines = [f"  {t:<{w_text}}  {s:<{w_shape}}  {o}".rstrip() for t, s, o in rows]
    lines += ["", f"shape: {fmt_shape(node.shape)}"]
    if bindings.dims:
        lines.append("dims:  " + "  ".join(f"{k}={v}" for k, v in bindings.dims.items()))
    return lines


def render_einsum(result: EinsumResult) -> list[str]:
    """The einsum, then each name's size, whether it is kept or summed over, and where its size came from."""
    lines = [f"  {result.spec}", ""]
    w_name = max(len(n) for n in result.bindings)
    w_size = max(len(str(s)) for s in result.bindings.values())
    for name, size in result.bindings.items():
        role = "summed" if name in result.contracted else "kept"
        lines.append(f"  {name:<{w_name}}  {size:>{w_size}}  {role:<6}  from {result.sources[name]}")
    lines += ["", f"shape: {fmt_shape(result.shape)}"]
    return lines


def node_json(node: Node) -> dict[str, Any]:
    """One node and its sub-expressions as plain JSON values."""
    return {"text": node.text, "op": node.op, "shape": list(node.shape), "detail": node.detail,
            "names": [None if a is None else list(a) for a in node.names],
            "children": [node_json(c) for c in node.children]}


def tree_document(node: Node, bindings: Bindings) -> dict[str, Any]:
    """The ``--json`` document for an expression."""
    return {
        "form": "expression",
        "expression": node.text,
        "shape": list(node.shape),
        "bindings": dict(bindings.dims),
        "inputs": {k: {"shape": list(v), "dims": list(bindings.written.get(k, v))} for k, v in bindings.arrays.items()},
        "tree": node_json(node),
    }


def einsum_document(result: EinsumResult) -> dict[str, Any]:
    """The ``--json`` document for an einsum."""
    return {
        "form": "einsum",
        "expression": result.spec,
        "shape": list(result.shape),
        "bindings": dict(result.bindings),
        "dims": [{"name": n, "size": s, "role": "summed" if n in result.contracted else "kept",
                  "source": result.sources[n]} for n, s in result.bindings.items()],
        "inputs": [{"label": t.label, "names": [n for n, _ in t.names]} for t in result.inputs],
        "output": [n for n, _ in result.output],
    }


def render_function(run: FunctionCheck) -> list[str]:
    """Each statement with the shape and axis names it produced, the skipped ones with why, then the result."""
    rows = []
    for row in run.rows:
        text = row.text if len(row.text) <= TEXT_WIDTH else row.text[: TEXT_WIDTH - 1] + "…"
        if row.node is None:
            rows.append((f"line {row.line}", text, row.note, ""))
        else:
            names = fmt_names(row.node.names)
            rows.append((f"line {row.line}", text, fmt_shape(row.node.shape) + (f" {names}" if names else ""),
                         row.note))
    w_line = max(len(r[0]) for r in rows)
    w_text = max(len(r[1]) for r in rows)
    lines = [f"  {run.path}::{run.label}"]
    for where, text, shape, note in rows:
        if shape.startswith("skipped"):
            lines.append(f"  {where:<{w_line}}  {text}\n  {'':<{w_line}}    {shape}")
        else:
            lines.append(f"  {where:<{w_line}}  {text:<{w_text}}  {shape}  {note}".rstrip())
    result = run.result
    lines += ["", f"shape: {fmt_shape(result.shape)}" if result else "shape: (the function returns no checked value)"]
    if result is None and run.ck.missing:
        lines.append("give: " + " ".join(f"--dim {m}=N" for m in run.ck.missing) + "  (config fields __init__ reads)")
    return lines


def function_document(run: FunctionCheck) -> dict[str, Any]:
    """The ``--json`` document for a function check."""
    return {
        "form": "function",
        "function": f"{run.path}::{run.label}",
        "shape": list(run.result.shape) if run.result else None,
        "statements": [{"line": r.line, "text": r.text, "note": r.note,
                        "shape": list(r.node.shape) if r.node else None,
                        "names": [None if a is None else list(a) for a in r.node.names] if r.node else None}
                       for r in run.rows],
    }
