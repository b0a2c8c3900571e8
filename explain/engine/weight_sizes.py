"""The sizes a weights file fixes (issue 42, item 11): ``explain params gpt -o w.npz`` writes the trained GPT's
parameters, W_E (70, 64), and ``explain run gpt --weights w.npz`` must then plan a model of those sizes, not the
default (45, 8). :func:`sizes_from_weights` reads the archive's headers only (:func:`explain.io.array_files.npz_headers`:
no array data is read) and fills in the options the user left out; a size the user gave that the file contradicts
is refused in one line naming both.

What a shape says, by the parameter's own name (the names every zoo model declares, :mod:`explain.models.layers`):

- ``W_E`` (vocab, d_model): ``d_vocab`` and ``d_model``; ``W_pos`` (n_ctx, d_model): ``n_ctx``;
- the numbers of ``blocks.N``: ``n_layers``;
- an attention's ``W_Q`` (heads, d_model, d_head): ``n_heads`` and ``d_head`` (a single head's (d_model, d_head):
  ``d_head``); latent attention's ``W_UQ`` (heads, …): ``n_heads``; without either (the synthesizer), ``W_V`` says them and ``W_2`` (d_head, n_ctx) the context;
  ``W_K`` (kv heads, …): ``n_kv_heads``;
- an MLP's ``W_in`` (d_model, d_ff): ``d_ff``; the experts' (experts, d_model, width): ``n_experts``, ``moe_d_ff``; an output projection ``W_O`` (…, d_out): ``d_out``.

A size is filled in only for a model whose steps it changes (:meth:`explain.core.options.Option.changes`); what no
shape says (a rope θ, a window, the latent attention's ranks) stays the user's to give, and the load's own check
(:func:`explain.engine.weights.load_params`) names any parameter that still does not fit.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from explain.core.errors import UsageError, WeightsError
from explain.core.names import block_of
from explain.core.options import OPTION
from explain.core.registry import Model

Shapes = dict[str, tuple[int, ...]]


def file_shapes(weights: str | os.PathLike | Mapping[str, Any]) -> Shapes | None:
    """name → shape of every parameter in ``weights`` (an .npz's headers, or a dict of arrays); None for a file
    that is not an .npz archive, which the load then refuses with its own message."""
    if isinstance(weights, Mapping):
        return {str(k): tuple(getattr(v, "shape", ())) for k, v in weights.items()}
    from explain.engine.weights import WEIGHTS_FIX  # lazy: numpy off the shape path (plan never reads weights)
    from explain.io.array_files import file_kind, npz_headers  # lazy: as the line above
    from explain.io.readers import regular_file  # lazy: as the line above

    p = regular_file(weights, "weights file", WEIGHTS_FIX, WeightsError)
    if file_kind(p) != "npz":
        return None
    heads = npz_headers(p, "weights file", WEIGHTS_FIX, WeightsError, limit=1 << 62)  # as load_params reads them
    return {name: shape for name, (shape, _) in heads.items()}


def _leaf(name: str) -> str:
    return name.rsplit(".", 1)[-1]


def _first(shapes: Shapes, leaf: str, within: str = "", ndim: int | None = None) -> tuple[int, ...] | None:
    """The shape of the first parameter named ``…within.leaf`` (``ndim``: of that many axes)."""
    for name, shape in shapes.items():
        if _leaf(name) == leaf and name.endswith(within + leaf) and (ndim is None or len(shape) == ndim):
            return shape
    return None


def sizes_in(shapes: Shapes) -> dict[str, int]:
    """The option values the shapes fix (option names as in :data:`explain.core.options.OPTION`)."""
    out: dict[str, int] = {}
    if (emb := _first(shapes, "W_E", ndim=2)) is not None:
        out["d_vocab"], out["d_model"] = emb
    if (pos := _first(shapes, "W_pos", ndim=2)) is not None:
        out["n_ctx"] = pos[0]
    blocks = [b[1] for b in map(block_of, shapes) if b is not None]
    if blocks:
        out["n_layers"] = max(blocks) + 1
    q = _first(shapes, "W_Q", "attn.")
    if q is not None and len(q) == 3:  # (heads, d_model, d_head)
        out["n_heads"], out["d_head"] = q[0], q[2]
    elif q is not None and len(q) == 2:  # one head: (d_model, d_head)
        out["d_head"] = q[1]
    elif (uq := _first(shapes, "W_UQ", "attn.", ndim=3)) is not None:  # latent attention: (heads, q rank, q width)
        out["n_heads"] = uq[0]
    elif (v := _first(shapes, "W_V", "attn.", ndim=3)) is not None:  # no queries (the synthesizer): V's heads
        out["n_heads"], out["d_head"] = v[0], v[2]
    if "n_ctx" not in out and (w2 := _first(shapes, "W_2", "attn.", ndim=2)) is not None:  # (d_head, n_ctx)
        out["n_ctx"] = w2[1]  # the synthesizer's logits, one per position of the context
    if q is not None and (k := _first(shapes, "W_K", "attn.", ndim=3)) is not None:
        out["n_kv_heads"] = k[0]
    if (mlp := _first(shapes, "W_in", "mlp.", ndim=2)) is not None:
        out["d_ff"] = mlp[1]
    if (ex := _first(shapes, "W_in", "mlp.experts.", ndim=3)) is not None:  # (experts, d_model, expert width)
        out["n_experts"], out["moe_d_ff"] = ex[0], ex[2]
    if (o := _first(shapes, "W_O", "attn.", ndim=2)) is not None:
        out["d_out"] = o[1]
    return out


def sizes_from_weights(entry: Model, weights: str | os.PathLike | Mapping[str, Any],
                       options: dict[str, Any]) -> dict[str, Any]:
    """``options`` with the sizes ``weights`` fixes filled in where the user gave none; a given size the file
    contradicts is a UsageError naming both ("--d-model 8 but w.npz has d_model 64; drop --d-model")."""
    shapes = file_shapes(weights)
    if not shapes:
        return options
    where = str(weights) if isinstance(weights, (str, os.PathLike)) else "the weights given"
    out = dict(options)
    for name, value in sizes_in(shapes).items():
        o = OPTION[name]
        if not o.changes(entry):  # a size this model does not take (or whose steps it does not change)
            continue
        given = out.get(name)
        if given is None:
            out[name] = value
        elif given != value:
            raise UsageError(f"{o.flag} {given} but {where} has {name} {value}; drop {o.flag} (the file's shapes "
                             "set it)")
    return out


__all__ = ["file_shapes", "sizes_from_weights", "sizes_in"]
