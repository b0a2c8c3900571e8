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

from explain.check.errors import CheckShapeError
from explain.check.shaping import split
from explain.check.sizes import is_shape_text, static_shape
from explain.check.source import Row
from explain.check.source import tag as tag_nodes
from explain.core.errors import ExplainError, UsageError

if TYPE_CHECKING:
    from explain.check.body import FunctionCheck

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
