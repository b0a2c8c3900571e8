"""``explain check``: answer shape questions about an expression without running it.

Two forms share one entry point, :func:`check`:

* einsum-style named dimensions, ``"batch seq d_model, d_model d_head -> batch seq d_head"``
  (:mod:`explain.check.einsum`), and
* numpy expressions over named shapes, ``"softmax(Q @ K.T / sqrt(d_k)) @ V"`` (:mod:`explain.check.expr`),
  parsed with :mod:`ast` and never evaluated.

Nothing in this package imports numpy, textual or rich: the checker works on tuples of ints with the rules in
:mod:`explain.core.shape_rules`, so ``explain check`` starts about as fast as click itself.

Inside, the modules form layers with no import cycle (tests/check/test_check_structure.py): names, node and
args at the bottom; the rules (shaping, sizes, torchrules, einops_ops); the handlers a table dispatches to
(calls.NUMPY and LIBRARIES, torchops.TORCH, methods.METHODS, expr.KINDS); the expression checker (expr); the
function walker (body, values, flow); the class readers (classes, modulecalls); function, the entry for
FILE.py::function. A handler gets the Checker as an argument and recurses through ``ck.visit``, so it never
imports the checker; the one call that runs upward, ``self.proj(x)``, goes through calls.SELF_CALLS, which
modulecalls fills.

It may import ``core``.
"""

from __future__ import annotations

from collections.abc import Mapping
from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from explain.check.einsum import EinsumResult
    from explain.check.expr import Node

__all__ = [
    "Bindings",
    "CheckShapeError",
    "EinsumResult",
    "Node",
    "check",
    "check_einsum",
    "check_expression",
    "is_einsum",
    "parse_options",
]

# name -> module; loaded on first use, so the CLI pays only for the form it checks (see explain.commands.check).
# Nothing above imports a checker eagerly: `from explain.check import render` (the CLI) loaded the einsum and
# expression checkers both, whichever form was checked.
_LAZY = {
    "Bindings": "parse", "parse_options": "parse", "CheckShapeError": "errors",
    "EinsumResult": "einsum", "check_einsum": "einsum", "is_einsum": "einsum",
    "Node": "expr", "check_expression": "expr",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(f"explain.check.{_LAZY[name]}"), name)
    raise AttributeError(f"module 'explain.check' has no attribute {name!r}")


def check(text: str, shapes: Mapping[str, tuple[int | str, ...]] | None = None,
          dims: Mapping[str, int] | None = None, torch: bool | None = None) -> Node | EinsumResult:
    """Check ``text`` as an einsum (it contains ``->``) or as a numpy expression, over concrete shapes."""
    from explain.check.parse import Bindings  # lazy: importing the package loads no checker (_LAZY above)

    bindings = Bindings.concrete(shapes or {}, dims or {})  # names in a shape take their sizes from dims
    if "->" in text and '"' not in text and "'" not in text:  # einsum.is_einsum, inlined: no import for an expression
        from explain.check.einsum import check_einsum  # lazy: only an einsum loads its checker

        return check_einsum(text, bindings)
    from explain.check.expr import check_expression  # lazy: only an expression loads the expression checker

    return check_expression(text, bindings, torch)
