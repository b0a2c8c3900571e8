"""What ``explain check`` supports, listed once: the checker's calls (:mod:`explain.check.calls`), its
"not supported" messages (:mod:`explain.check.expr`) and the command's help all read these names."""

from __future__ import annotations

ELEMENTWISE = ("exp", "log", "sqrt", "relu", "gelu")
REDUCTIONS = ("sum", "mean", "max")
SHAPING = ("transpose", "reshape", "swapaxes")
FUNCTIONS = ("softmax", *ELEMENTWISE, *SHAPING, "concatenate", "stack", *REDUCTIONS)
METHODS = (*SHAPING, *REDUCTIONS)
NP_NAMES = ("np", "numpy")
OPERATORS = "@ + - * / **"

# In the order a reader meets them: the shaping calls, softmax and the elementwise functions, joining, reducing.
_LISTED = (*SHAPING, "softmax", *ELEMENTWISE, "concatenate", "stack", *REDUCTIONS)


def supported_text() -> str:
    """The one-line list of "not supported" messages."""
    return (f"names, numbers, {OPERATORS} and unary -, .T, {', '.join(_LISTED)} (np. prefix optional; "
            f"{', '.join(METHODS)} also as methods)")


def help_text() -> str:
    """The "Supported:" paragraph of ``explain check --help``."""
    return f"Supported: {OPERATORS}, .T, {', '.join(_LISTED)} (np. prefix optional)."
