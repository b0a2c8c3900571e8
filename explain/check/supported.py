"""What ``explain check`` supports, listed once, as data: the checker's dispatch (:mod:`explain.check.calls`),
its "not supported" messages and the command's help all read these names.

Each library's spellings are listed with the rule they follow; the rules themselves live in
:mod:`explain.check.shaping` (axes), :mod:`explain.check.torchops` (PyTorch's functions) and
:mod:`explain.check.einops_ops` (einops patterns).
"""

from __future__ import annotations

import ast

from explain.core.errors import UsageError

ELEMENTWISE = ("exp", "log", "sqrt", "relu", "gelu", "tanh", "sin", "cos", "abs", "sigmoid", "rsqrt", "silu",
               "dropout", "log1p", "square", "erf")
REDUCTIONS = ("sum", "mean", "max", "min", "var", "std", "amax", "argmax", "logsumexp")
SHAPING = ("transpose", "reshape", "swapaxes")
FUNCTIONS = ("softmax", *ELEMENTWISE, *SHAPING, "concatenate", "stack", *REDUCTIONS, "einsum", "matmul",
             "tril", "triu", "ones", "zeros", "arange", "expand_dims", "squeeze", "where", "maximum",
             "take_along_axis", "log_softmax", "repeat")
IDENTITY_METHODS = ("contiguous", "float", "half", "double", "long", "int", "bool", "to", "detach", "clone", "type_as")
# numpy methods, then PyTorch's; .T and .mT are attributes.
METHODS = (*SHAPING, *REDUCTIONS, "view", "permute", "unsqueeze", "squeeze", "expand", "expand_as", "flatten",
           "repeat_interleave", "masked_fill", "masked_fill_", "softmax", "log_softmax", "matmul", "bmm", "size", "gather",
           *IDENTITY_METHODS, "pow", *ELEMENTWISE, "tril", "triu")
NP_NAMES = ("np", "numpy")
TORCH_NAMES = ("torch",)
F_NAMES = ("F", "torch.nn.functional", "nn.functional")
EINOPS_NAMES = ("einops",)
TORCH_FUNCTIONS = ("matmul", "bmm", "cat", "concat", "stack", "softmax", "log_softmax", *ELEMENTWISE, "transpose",
                   "swapaxes", "permute", "reshape", "unsqueeze", "squeeze", "einsum", "tril", "triu", "ones",
                   "zeros", "arange", "gather", "where", "sum", "mean", "max", "repeat_interleave", "masked_fill",
                   "maximum", "logsumexp", "tensor", "pow")
F_FUNCTIONS = ("softmax", "log_softmax", "linear", "relu", "gelu", "silu", "dropout", "embedding", "cross_entropy",
               "layer_norm", "sigmoid", "tanh", "scaled_dot_product_attention")
EINOPS_FUNCTIONS = ("rearrange", "repeat", "reduce", "einsum")
OPERATORS = "@ + - * / ** == < > & |"

# In the order a reader meets them: the shaping calls, softmax and the elementwise functions, joining, reducing.
_LISTED = (*SHAPING, "softmax", "exp, log, sqrt, … (elementwise)", "concatenate", "stack", "sum, mean, max, …",
           "einsum", "tril", "ones")


def supported_text() -> str:
    """The one-line list of "not supported" messages."""
    return (f"names, numbers, {OPERATORS} and unary -, .T, indexing, numpy ({', '.join(_LISTED)}; np. prefix "
            "optional), PyTorch (torch./F. functions, .view .permute .transpose(a, b) .unsqueeze .masked_fill "
            "…), einops (rearrange, repeat, reduce, einsum)")


def help_text() -> str:
    """The "Supported:" paragraph of ``explain check --help``."""
    return (f"Supported: {OPERATORS}, .T, indexing; numpy: {', '.join(_LISTED)} (np. prefix optional); PyTorch: "
            f"torch.{', torch.'.join(TORCH_FUNCTIONS[:6])}, F.{', F.'.join(F_FUNCTIONS[:5])}, "
            ".view, .permute, .transpose(a, b), .unsqueeze, .squeeze, .expand, .repeat_interleave, .masked_fill, "
            ".size(i), .shape[i]; einops: rearrange, repeat, reduce, einsum (axis lengths as keywords).")



BINOPS: dict[type, tuple[str, str]] = {
    ast.MatMult: ("@", "matmul"), ast.Add: ("+", "add"), ast.Sub: ("-", "sub"),
    ast.Mult: ("*", "mul"), ast.Div: ("/", "div"), ast.Pow: ("**", "pow"),
    ast.Eq: ("==", "eq"), ast.NotEq: ("!=", "ne"), ast.Lt: ("<", "lt"), ast.Gt: (">", "gt"),
    ast.LtE: ("<=", "le"), ast.GtE: (">=", "ge"), ast.BitAnd: ("&", "and"), ast.BitOr: ("|", "or"),
}

# What to call a node kind in a "not supported" message.
KIND_NAMES: dict[str, str] = {
    "BoolOp": "and/or", "Lambda": "lambda",
    "IfExp": "if-else", "ListComp": "comprehensions", "GeneratorExp": "comprehensions",
    "DictComp": "comprehensions", "SetComp": "comprehensions", "Dict": "dicts", "Set": "sets",
    "List": "a list outside concatenate/stack", "Tuple": "a tuple outside a function's arguments",
    "JoinedStr": "f-strings", "NamedExpr": ":=", "Starred": "*unpacking", "Slice": "slices",
    "FloorDiv": "the // operator", "Mod": "the % operator", "LShift": "the << operator", "RShift": "the >> operator",
    "BitXor": "the ^ operator",
    "Not": "not", "Await": "await", "Yield": "yield", "YieldFrom": "yield",
}


def unsupported(what: str) -> UsageError:
    """The one-line error for anything outside the supported subset."""
    return UsageError(f"not supported: {what}; supported: {supported_text()}")


def dotted(node: ast.expr) -> str | None:
    """``np.linalg.norm`` for a chain of names, else None."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = dotted(node.value)
        return f"{base}.{node.attr}" if base else None
    return None


def unknown_function(name: str) -> UsageError:
    """The one-line refusal of a function no library here has, with the nearest name and every list."""
    from difflib import get_close_matches  # lazy: only a mistake pays for difflib (bench_check_startup)

    near = get_close_matches(name.rsplit(".", 1)[-1], FUNCTIONS + F_FUNCTIONS + EINOPS_FUNCTIONS, n=1)
    maybe = f" (did you mean {near[0]}?)" if near else ""
    return UsageError(f"not supported: function {name}(){maybe}; numpy: {', '.join(FUNCTIONS)}; torch.: "
                      f"{', '.join(TORCH_FUNCTIONS)}; F.: {', '.join(F_FUNCTIONS)}; einops: "
                      f"{', '.join(EINOPS_FUNCTIONS)}")
