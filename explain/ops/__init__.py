"""Every op kind, registered by name: ``explain.ops.get("matmul")``; ``"matmul.grad"`` is its backward.

Importing this package imports the op classes (no numpy); see :mod:`explain.ops.base` for the views each op
kind provides.

It may import ``core``.
"""

from explain.ops import (  # noqa: F401 - registers the op kinds
    activations,
    cache,
    elementwise,
    embedding,
    experts,
    flash,
    gated,
    gates,
    grad,
    interp,
    linear,
    masks,
    normalize,
    objective,
    pairs,
    products,
    recovered,
    rotary,
    routing,
    sampling,
    sentence,
    tiled,
    tokens,
)
from explain.ops.base import REGISTRY, CellExplanation, Op, Syms, get, num

# every op kind with a backward also answers to "<kind>.grad" (listed, so search and the exporter see it)
for _kind, _op in list(REGISTRY.items()):
    if type(_op).vjp_source is not Op.vjp_source:
        get(f"{_kind}.grad")

__all__ = ["REGISTRY", "CellExplanation", "Op", "Syms", "get", "num"]
