"""Calls of ``self.X(…)`` in a checked method: a module of ``__init__`` applied with its shape rule (torch.nn's
Linear, Embedding, LayerNorm, RMSNorm, Dropout, the activations, Softmax, Sequential), or a class of the same file
or another method of the class checked by checking its body with the arguments it is given. What ``self.X`` is
comes from :mod:`explain.check.classes`.

The expression checker reaches these through :data:`explain.check.calls.SELF_CALLS` (:func:`register`): this
module checks a submodule's forward as a function, so it sits above the checker and the checker cannot import it.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Any

from explain.check.body import FunctionCheck, run_body
from explain.check.calls import SELF_CALLS
from explain.check.classes import MAX_NESTING, ClassContext, Module, missing_fields, module_size, read_init
from explain.check.names import fmt_names
from explain.check.node import Node
from explain.check.source import tag
from explain.core.errors import ExplainError, ShapeError, UsageError
from explain.core.shape_rules import fmt_shape

if TYPE_CHECKING:
    from explain.check.expr import Checker

Span = tuple[int, int]


def call_self(ck: Checker, call: ast.Call, attr: str, span: Span) -> Node:
    """``self.X(…)``: a module of ``__init__`` applied, or another method of the class checked with these
    arguments."""
    ctx = ck.cls
    if attr in ctx.modules:
        if not call.args:
            raise UsageError(f"self.{attr}() needs its input")
        return apply(ck, call, ctx.modules[attr], ck.visit(call.args[0]), span, f"self.{attr}")
    if attr in ctx.methods and attr != "__init__":
        given = _arguments(ck, ctx.methods[attr], call, skip_self=True)
        return _checked(ck, call, ctx, ctx.methods[attr], given, ck.b.dims, f"{ctx.cls.name}.{attr}")
    if f"self.{attr}" in ck.unknown:
        raise UsageError(ck.unknown[f"self.{attr}"])
    raise UsageError(f"self.{attr} is not a module made in {ctx.cls.name}.__init__ nor a method of it")


def apply(ck: Checker, call: ast.Call, m: Module, x: Node, span: Span, label: str) -> Node:
    if m.kind == "identity":
        return ck.make(call, "dropout" if "Dropout" in m.text else "module", x.shape, [x], m.text, names=x.names)
    if m.kind == "linear":
        (n_in, in_name), (n_out, out_name) = m.sizes
        if x.shape and x.shape[-1] != n_in and n_in in x.shape:  # the features are elsewhere: a transpose
            from explain.check.repair import moved_last  # lazy: only a mismatch

            raise moved_last(ck, x, x.shape.index(n_in), f"{label} is {m.text}, which maps a last axis of {n_in}",
                             span)
        if not x.shape or x.shape[-1] != n_in:
            raise _linear_mismatch(ck, m, x, label, span)
        return ck.make(call, "linear", x.shape[:-1] + (n_out,), [x], m.text, names=x.names[:-1] + (out_name,))
    if m.kind == "embedding":
        (_, _), (d, d_name) = m.sizes
        return ck.make(call, "embedding", x.shape + (d,), [x], m.text, names=x.names + (d_name,))
    if m.kind == "norm":
        sizes = tuple(s for s, _ in m.sizes)
        if x.shape[len(x.shape) - len(sizes):] != sizes:
            raise ck.fail(ShapeError(f"{label} is {m.text}: it normalises trailing axes of {fmt_shape(sizes)}, but "
                                     f"its input {x.text} is {fmt_shape(x.shape)} {fmt_names(x.names)}".rstrip()),
                          span[0], span[1], [x])
        return ck.make(call, "layer_norm", x.shape, [x], m.text, names=x.names)
    if m.kind == "softmax":
        from explain.check.shaping import softmax_over  # lazy: only an nn.Softmax loads it

        dim = m.sizes[0][0] if m.sizes else -1
        node = ck.make(call, "softmax", x.shape, [x], f"dim={dim}", names=x.names)
        before = len(ck.advice)
        softmax_over(ck, node, dim, None, span)
        if len(ck.advice) > before and m.arg_texts:  # the fix is in __init__: nn.Softmax(dim=-1)
            ck.advice[-1].message += f"; in line {m.line}: nn.Softmax(dim=-1)"
            ck.advice[-1].edits.append((m.line, m.text, "nn.Softmax(dim=-1)"))
        return node
    if m.kind == "sequential":
        for part in m.parts:
            x = apply(ck, call, part, x, span, label)
        return x
    ctx = ck.cls
    if ctx.depth >= MAX_NESTING:
        raise UsageError(f"{label}: modules nest deeper than {MAX_NESTING} levels")
    sub = ClassContext(m.cls, ctx.tree, ctx.source, ctx.path, ctx.depth + 1)  # type: ignore[arg-type]
    forward = sub.methods.get("forward")
    if forward is None:
        raise UsageError(f"{label}: class {m.cls.name} has no forward")  # type: ignore[union-attr]
    init_args = _init_arguments(ck, sub, m.call)  # type: ignore[arg-type]
    given = _arguments(ck, forward, call, skip_self=True, first=x)
    return _checked(ck, call, sub, forward, given, ck.b.dims, f"{m.cls.name}.forward", init_args)  # type: ignore[union-attr]


def _linear_mismatch(ck: Checker, m: Module, x: Node, label: str, span: Span) -> Exception:
    """``self.fc(x)`` where x's last axis is not the Linear's in_features: the arguments the other way round (the
    input's axis is its out_features), or in_features to change, on the line that made it."""
    (n_in, _), (n_out, out_name) = m.sizes
    have = x.shape[-1] if x.shape else 1
    texts = m.arg_texts[:2]
    swapped = have == n_out and len(texts) == 2 and (out_name is None or x.names[-1] in (None, out_name))
    if swapped:
        fix = f"{texts[1]}, {texts[0]}"
        how = f"the sizes are the other way round (nn.Linear takes in_features, then out_features): {fix}"
        edits = [(m.line, f"{texts[0]}, {texts[1]}", fix)]
    else:
        fix = str(have)
        how = f"its in_features must be {have}: nn.Linear({fix}, …)"
        edits = [(m.line, texts[0], fix)] if texts else []
    err = ck.fail(ShapeError(f"{label} is {m.text} (line {m.line}): it maps a last axis of {n_in} to {n_out}, but its "
                             f"input {x.text} is {fmt_shape(x.shape)} {fmt_names(x.names)}; {how}"), span[0], span[1],
                  [x])
    err.edits = edits
    return err


def _init_arguments(ck: Checker, sub: ClassContext, call: ast.Call) -> dict[str, Any]:
    """The sizes (or configs) a ``Class(…)`` call in ``__init__`` gives the class's own ``__init__``."""
    init = sub.methods.get("__init__")
    if init is None:
        return {}
    params = [a.arg for a in init.args.posonlyargs + init.args.args + init.args.kwonlyargs][1:]
    pairs = list(zip(params, call.args)) + [(k.arg, k.value) for k in call.keywords if k.arg]
    out: dict[str, Any] = {}
    for p, value in pairs:
        if isinstance(value, ast.Name) and value.id in ck.configs:
            out[p] = "config"
            continue
        try:
            out[p] = module_size(ck, value)
        except ExplainError:
            for m in missing_fields(ck, ast.Expr(value)):  # Block's LayerNorm(config.n_embd): n_embd is needed
                ck.missing[m] = None
    return out


def _arguments(ck: Checker, fn: ast.FunctionDef, call: ast.Call, skip_self: bool,
               first: Node | None = None) -> dict[str, Node]:
    """The array arguments of a call, checked here, by the callee's parameter names."""
    params = [a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs][1 if skip_self else 0:]
    values = list(call.args)
    out: dict[str, Node] = {}
    if first is not None:
        out[params[0]], values = first, values[1:]
        params = params[1:]
    for p, v in list(zip(params, values)) + [(k.arg, k.value) for k in call.keywords if k.arg in params]:
        try:
            node = ck.visit(v)
        except ExplainError:
            continue  # a flag or an optional argument the checker cannot follow: left unknown in the callee
        if node.shape or node.op not in ("number", "scalar", "size"):
            out[p] = node  # type: ignore[index]
    return out


def _checked(ck: Checker, call: ast.Call, ctx: ClassContext, fn: ast.FunctionDef, given: dict[str, Node],
             dims: dict[str, int], label: str, init_args: dict[str, Any] | None = None) -> Node:
    """Check ``fn``'s body with ``given`` arguments; its result as the call's node."""
    level = getattr(ck, "calls", 0) + 1  # self.f() calling self.f() stays in one class: count the calls themselves
    if ctx.depth > MAX_NESTING or level > MAX_NESTING:
        raise UsageError(f"{label}: calls nest deeper than {MAX_NESTING} levels (a method that calls itself?)")
    for node in given.values():  # a fix for an argument goes on the caller's line
        tag(node, ck.line, ck.src)
    here = ck.src
    run = FunctionCheck(ctx.source, ctx.path, fn, ck.b.__class__(dims=dict(dims)), ck.torch, given=given)
    run.ck.aliases.update(ck.aliases)
    run.ck.configs = set(ck.configs)
    run.ck.cls = ctx if ctx is not ck.cls else ck.cls
    if ctx is not ck.cls:
        read_init(run.ck, ctx, init_args or {})
    run.depth = ctx.depth
    run.ck.calls = level
    try:
        run_body(run)
    finally:
        ck.set_source(here)
    ck.missing.update(run.ck.missing)
    seen = {(a.message, tuple(a.edits)) for a in ck.advice}
    ck.advice.extend(a for a in run.advice if (a.message, tuple(a.edits)) not in seen)  # a module used twice
    if run.result is None:
        why = next((r.note for r in reversed(run.rows) if r.note.startswith("skipped")), "it returns nothing")
        raise UsageError(f"{label} gives no checked value ({why})")
    return ck.make(call, "module", run.result.shape, list(given.values()), label, names=run.result.names,
                   was=run.result)


def register() -> None:
    """Let the expression checker call a class's modules: ``self.proj(x)`` and a loop's ``block(x)``."""
    SELF_CALLS["self"] = call_self
    SELF_CALLS["loop"] = apply
