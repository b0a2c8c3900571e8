"""Every op kind, registered by name: ``explain.ops.get("matmul")``.

Importing this package imports the op classes (no numpy); see :mod:`explain.ops.base` for the views each op
kind provides.
"""

from explain.ops import cache, elementwise, embedding, normalize, products, sampling  # noqa: F401 - registers the op kinds
from explain.ops.base import REGISTRY, CellExplanation, Op, Syms, get, num

__all__ = ["REGISTRY", "CellExplanation", "Op", "Syms", "get", "num"]
