"""``if``/``else``, ``with`` and ``try`` in a checked function: followed, not skipped.

A ``with`` block's and a ``try`` block's bodies run in order (``with torch.no_grad():``), so they are checked in
order. An ``if`` is checked both ways from the same state: its body, then its ``else`` (none: the state before
it). After it a name holds what the branches agree on; where one branch could not be followed (a call the
checker does not know, an optional argument with no shape, as in ``if attention_mask is not None:``), the other
branch's value is kept, since in correct code both give the same shape; where both give a value and the shapes
differ, the note says so and the body's is kept. nanoGPT's ``if self.flash: … else: …`` checks both attentions.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Any

from explain.check.source import Row
from explain.check.supported import dotted
from explain.core.shape_rules import fmt_shape

if TYPE_CHECKING:
    from collections.abc import Callable

    from explain.check.body import FunctionCheck


def _state(run: FunctionCheck) -> tuple[dict[str, Any], ...]:
    ck = run.ck
    return dict(ck.env), dict(ck.unknown), dict(ck.b.dims), dict(ck.sizes), dict(ck.aliases)


def _restore(run: FunctionCheck, state: tuple[dict[str, Any], ...]) -> None:
    ck = run.ck
    for live, saved in zip((ck.env, ck.unknown, ck.b.dims, ck.sizes, ck.aliases), state):
        live.clear()
        live.update(saved)


def _assigned(body: list[ast.stmt]) -> list[str]:
    return list(dict.fromkeys(n.id for s in body for n in ast.walk(s)
                              if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)))


def _bind_loop(run: FunctionCheck, stmt: ast.For) -> bool:
    """``for block in self.h:`` over a ModuleList of one kind of module: the body is checked once with ``block``
    that module (each layer keeps the shape, so once stands for them all)."""
    cls = run.ck.cls
    path = dotted(stmt.iter) or ""
    if cls is None or not isinstance(stmt.target, ast.Name) or not path.startswith("self."):
        return False
    made = cls.modules.get(path[len("self."):])
    if made is None or made.kind != "list":
        return False
    cls.loop_modules[stmt.target.id] = made.parts[0]
    run.ck.unknown.pop(stmt.target.id, None)
    return True


def follow(run: FunctionCheck, stmt: ast.If | ast.With | ast.Try | ast.For,
           run_body: Callable[[FunctionCheck, list[ast.stmt]], None]) -> None:
    """An if (both branches, then what they agree on), a with or try block (its body), a for loop over a list of
    modules (its body once). ``run_body`` is the body walker's, passed in: it imports this module."""

    if isinstance(stmt, (ast.With, ast.Try)):
        run_body(run, stmt.body)
        return
    loop = isinstance(stmt, ast.For)
    if loop:
        if not _bind_loop(run, stmt):
            run.skip(stmt, "a for loop over anything but a list of modules is not followed")
            return
        stmt = ast.If(test=ast.Constant(True), body=stmt.body, orelse=[], lineno=stmt.lineno)  # once, or never
    before = _state(run)
    result = run.result
    run_body(run, stmt.body)
    body, body_result = _state(run), run.result
    _restore(run, before)
    run.result = result
    run_body(run, stmt.orelse)
    other, other_result = _state(run), run.result
    run.result = body_result or other_result
    notes = []
    env, unknown = dict(before[0]), dict(before[1])
    for name in _assigned(stmt.body + stmt.orelse):
        a, b = body[0].get(name), other[0].get(name)
        if a is not None and b is not None and a.shape != b.shape:
            notes.append(f"{name} is {fmt_shape(a.shape)} after the if's body and {fmt_shape(b.shape)} after "
                         "its else")
        kept = a if a is not None else b
        if kept is not None:
            env[name] = kept
            unknown.pop(name, None)
        elif name in body[1] or name in other[1]:
            env.pop(name, None)
            unknown[name] = body[1].get(name) or other[1][name]
    dims = {**other[2], **body[2]}
    sizes = {**other[3], **body[3]}
    aliases = {**other[4], **body[4]}
    _restore(run, (env, unknown, dims, sizes, aliases))
    if notes:
        run.rows.append(Row(stmt.lineno, f"if {run.snippet(stmt.test)}:", note="; ".join(notes)))
