"""Every op kind, registered by name: ``explain.ops.get("matmul")``; ``"matmul.grad"`` is its backward.

Importing this package imports no op kind's module (and no numpy): a kind's module is imported the first time
the kind is asked for (:data:`explain.ops.kinds.KINDS_OF` names them), and reading ``explain.ops.REGISTRY``, the
table of every kind, imports them all. See :mod:`explain.ops.base` for the views each op kind provides.

It may import ``core``.
"""

from typing import Any

from explain.ops import base as _base
from explain.ops.base import CellExplanation, Op, Syms, get, num
from explain.ops.kinds import KINDS_OF


def every_kind() -> dict[str, Op]:
    """Every op kind by name, each module imported (a kind alone loads by :func:`get`); every kind with a
    backward also answers to "<kind>.grad", listed so that search and the exporter see it."""
    for kinds in KINDS_OF.values():
        for kind in kinds:
            op = get(kind)
            if type(op).vjp_source is not Op.vjp_source:
                get(f"{kind}.grad")
    return _base.REGISTRY


def __getattr__(name: str) -> Any:
    if name == "REGISTRY":  # ``explain.ops.REGISTRY``: every kind, loaded when it is read
        return every_kind()
    raise AttributeError(f"module 'explain.ops' has no attribute {name!r}")


__all__ = ["REGISTRY", "CellExplanation", "Op", "Syms", "every_kind", "get", "num"]
