"""Values in a checked function that are not one array: shapes and tuples of arrays.

* A shape: ``new_x_shape = x.size()[:-1] + (self.num_attention_heads, self.attention_head_size)`` (Hugging Face's
  BERT), ``hidden_shape = (*input_shape, -1, self.head_dim)`` (its Llama): each entry a size with the axis name
  it stands for, so ``x.view(new_x_shape)`` and ``x.view(*hidden_shape)`` claim names as ``x.view(B, T, H, Dh)``
  does.
* A tuple of arrays: ``qkv = self.to_qkv(x).chunk(3, dim=-1)``, then ``q, k, v = qkv`` or (vit-pytorch, lucidrains)
  ``q, k, v = map(lambda t: rearrange(t, 'b n (h d) -> b h n d', h=self.heads), qkv)``: the lambda's body is
  checked once for each piece.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from explain.check.args import claim, static_int
from explain.check.errors import CheckShapeError
from explain.check.names import Ax
from explain.check.shaping import split
from explain.check.source import Row
from explain.check.source import tag as tag_nodes
from explain.core.errors import ExplainError, UsageError

if TYPE_CHECKING:
    from explain.check.expr import Checker
    from explain.check.function import FunctionCheck

Entry = tuple[int, Ax, str]  # a size, the axis name it stands for, how to write it


def static_shape(ck: Checker, node: ast.expr) -> list[Entry] | None:
    """The entries of a shape written in the code, or None if ``node`` is not one."""
    if isinstance(node, ast.Name) and node.id in ck.shapes:
        return ck.shapes[node.id]
    if isinstance(node, ast.Attribute) and node.attr == "shape" or (
            isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "size"
            and not node.args and not node.keywords):
        base = node.value if isinstance(node, ast.Attribute) else node.func.value  # type: ignore[union-attr]
        if isinstance(base, ast.Name) and base.id in ck.configs:
            return None
        arr = ck.visit(base)
        text = ck.text(base)
        return [(s, a, f"{text}.shape[{i}]") for i, (s, a) in enumerate(zip(arr.shape, arr.names))]
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice):
        inner = static_shape(ck, node.value)
        if inner is None:
            return None
        bounds = [None if b is None else static_int(ck, b, "a slice bound")
                  for b in (node.slice.lower, node.slice.upper, node.slice.step)]
        return inner[slice(*bounds)]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = static_shape(ck, node.left), static_shape(ck, node.right)
        return None if left is None or right is None else left + right
    if isinstance(node, ast.Tuple):
        out: list[Entry] = []
        for e in node.elts:
            if isinstance(e, ast.Starred):
                inner = static_shape(ck, e.value)
                if inner is None:
                    return None
                out += inner
            else:
                try:
                    out.append((static_int(ck, e, "a size"), claim(ck, e), ck.text(e)))
                except ExplainError:
                    return None
        return out
    return None


def is_shape_text(node: ast.expr) -> bool:
    """Cheap: could ``node`` be a shape (so it is worth trying :func:`static_shape`)?"""
    return isinstance(node, (ast.Tuple, ast.BinOp, ast.Subscript)) or (
        isinstance(node, ast.Attribute) and node.attr == "shape") or (
        isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "size"
        and not node.args)


def assign(run: FunctionCheck, stmt: ast.stmt, name: str, value: ast.expr) -> bool:
    """``name = <a shape>`` or ``name = t.chunk(…)``; False if the value is neither."""
    ck = run.ck
    ck.set_source(run.snippet(value))
    tree = ast.parse(ck.src, mode="eval").body
    if isinstance(tree, ast.Call) and isinstance(tree.func, ast.Attribute) and tree.func.attr in ("chunk", "split"):
        try:
            parts = split(ck, tree, None)
        except ExplainError as err:
            run.skip(stmt, str(err).split(";")[0], getattr(err, "root", None))
            return True
        run.tuples[name] = parts
        run.settle(stmt, parts[0])
        ck.env.pop(name, None)
        ck.unknown.pop(name, None)
        run.rows.append(Row(stmt.lineno, run.snippet(stmt), parts[0], note=f"a tuple of {len(parts)}"))
        return True
    if not is_shape_text(tree):
        return False
    try:
        shape = static_shape(ck, tree)
    except ExplainError:
        return False
    if shape is None:
        return False
    ck.shapes[name] = shape
    ck.env.pop(name, None)
    ck.unknown.pop(name, None)
    run.rows.append(Row(stmt.lineno, run.snippet(stmt), note="shape (" + ", ".join(str(s) for s, _, _ in shape) + ")"))
    return True


def unpack(run: FunctionCheck, stmt: ast.stmt, target: ast.Tuple, value: ast.expr) -> bool:
    """``q, k, v = qkv`` or ``q, k, v = map(lambda t: …, qkv)``; False if it is neither."""
    names = [e.id for e in target.elts if isinstance(e, ast.Name)]
    if len(names) != len(target.elts):
        return False
    lam = None
    source = value
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "map" \
            and len(value.args) == 2 and isinstance(value.args[0], ast.Lambda):
        lam, source = value.args[0], value.args[1]
    if isinstance(source, ast.Name) and source.id in run.tuples:
        parts = run.tuples[source.id]
    elif isinstance(source, ast.Tuple) and all(isinstance(e, ast.Name) and e.id in run.ck.env for e in source.elts):
        parts = [run.ck.env[e.id] for e in source.elts]  # type: ignore[attr-defined]
    else:
        return False
    if len(parts) != len(names):
        raise UsageError(f"line {stmt.lineno}: {len(names)} names receive {len(parts)} values")
    if lam is not None:
        params = [a.arg for a in lam.args.args]
        if len(params) != 1:
            raise UsageError("map(lambda …) with more than one argument is not followed")
        saved = run.ck.env.get(params[0])
        body = run.snippet(lam.body)
        out = []
        try:
            for part in parts:
                run.ck.env[params[0]] = part
                run.ck.set_source(body)
                out.append(run.ck.visit(ast.parse(body, mode="eval").body))
        except ExplainError as err:
            if err.__class__.__name__ == "CheckShapeError":
                raise
            run.skip(stmt, str(err).split(";")[0], getattr(err, "root", None))
            return True
        finally:
            if saved is None:
                run.ck.env.pop(params[0], None)
            else:
                run.ck.env[params[0]] = saved
        parts = out
        for part in parts[1:]:
            tag_nodes(part, stmt.lineno, run.ck.src)
        run.settle(stmt, parts[0])
    for n, part in zip(names, parts):
        run.ck.env[n] = part
        run.ck.unknown.pop(n, None)
    run.rows.append(Row(stmt.lineno, run.snippet(stmt), parts[0], note=f"each of {len(parts)}"))
    return True


def expand_shape_args(ck: Checker, args: list[ast.expr]) -> tuple[tuple[int, ...], tuple[Ax, ...], list[str]] | None:
    """``view(new_shape)`` / ``view(*shape, -1)`` / ``view(x.size()[:-1] + (H, Dh))``: the sizes, names and
    texts, or None when the arguments hold no shape value."""
    entries: list[Entry] = []
    if len(args) == 1 and not isinstance(args[0], ast.Starred) and is_shape_text(args[0]) or (
            len(args) == 1 and isinstance(args[0], ast.Name) and args[0].id in ck.shapes):
        found = static_shape(ck, args[0])
        if found is None:
            return None
        entries = found
    elif any(isinstance(a, ast.Starred) for a in args):
        for a in args:
            if isinstance(a, ast.Starred):
                found = static_shape(ck, a.value)
                if found is None:
                    raise UsageError(f"not supported: *{ck.text(a.value)}: only a shape can be unpacked here")
                entries += found
            else:
                entries.append((static_int(ck, a, "a size"), claim(ck, a), ck.text(a)))
    else:
        return None
    return tuple(s for s, _, _ in entries), tuple(a for _, a, _ in entries), [t for _, _, t in entries]


def return_tuple(run: FunctionCheck, stmt: ast.Return, value: ast.Tuple) -> None:
    """``return logits, loss``: each value checked; the first that can be is the result."""
    for e in value.elts:
        try:
            node = run.expr(e)
        except CheckShapeError:
            raise
        except ExplainError:
            continue
        run.settle(stmt, node)
        run.result = node
        run.rows.append(Row(stmt.lineno, "return " + run.snippet(value), node,
                             note=f"a tuple of {len(value.elts)}; this is {run.snippet(e)}"))
        return
    run.skip(stmt, "no value of the returned tuple could be checked")
