"""The keywords of ``explain.run``, ``plan`` and ``generate`` checked for their Python type at the edge
(:func:`explain.engine.ask.make_request`), before anything reads them: a wrong one is refused in one line that says
what the keyword takes (``tokens= takes '1,2,3' or a list of ints, not 32``), never a TypeError from deep inside.

What each option takes follows from its definition's ``type`` (:data:`explain.core.options.OPTIONS`); the few
keywords that are no option (the model, ``weights``, ``sampling``, ``on_tensor``, ``greedy``, ``ignore_eos``) are in
:data:`OTHERS`. The CLI's values are click's, already of these types. Values are checked here, not ranges or
choices: the config and the request say those, with the CLI's flags.
"""

from __future__ import annotations

import numbers
import os
import sys
from collections.abc import Callable, Mapping
from typing import Any

from explain.checkpoints.protocol import Checkpoint
from explain.core.errors import UsageError
from explain.core.options import OPTION, Option
from explain.core.sampling import Sampling


def _whole(v: Any) -> bool:
    return isinstance(v, numbers.Integral) and not isinstance(v, bool)


def _number(v: Any) -> bool:
    return isinstance(v, numbers.Real) and not isinstance(v, bool)


def _array(v: Any) -> bool:
    """A numpy array, or nested lists of numbers: numpy is not imported to ask (an array implies it is loaded)."""
    np = sys.modules.get("numpy")
    return isinstance(v, (list, tuple)) or (np is not None and isinstance(v, np.ndarray))


def _ids(v: Any) -> bool:
    """One sequence ("3,1,4" or ids) or a batch of them (each a string or a list of ids)."""
    if isinstance(v, str):
        return True
    if not _array(v):
        return False
    items = list(v)
    return all(_whole(i) for i in items) or all(isinstance(i, str) or (_array(i) and all(_whole(j) for j in i))
                                                for i in items)


def _texts(v: Any) -> bool:
    return isinstance(v, str) or (isinstance(v, (list, tuple)) and all(isinstance(t, str) for t in v))


def _file(v: Any) -> bool:
    return isinstance(v, (str, os.PathLike))


# (what a message says it takes, the test) by an option's type; a few options take more than their type says
BY_TYPE: dict[str, tuple[str, Callable[[Any], bool]]] = {
    "int": ("a whole number such as 8", _whole),
    "float": ("a number (an int or a float)", _number),
    "bool": ("True or False", lambda v: isinstance(v, bool)),
    "flag": ("True or False", lambda v: isinstance(v, bool)),
    "text": ("a string", lambda v: isinstance(v, str)),
    "ids": ("'1,2,3' or a list of ints (a list of such for a batch)", _ids),
    "path": ("a file name", _file),
}
BY_NAME: dict[str, tuple[str, Callable[[Any], bool]]] = {
    "text": ("a string, or a list of strings for a batch", _texts),
    "target": ("a string, or a list of strings (one per text)", _texts),
    "embeddings": ("a file name or a (tokens, d_model) array", lambda v: _file(v) or _array(v)),
    "output_target": ("a file name or an array", lambda v: _file(v) or _array(v)),
    "grad_output": ("a file name or an array", lambda v: _file(v) or _array(v)),
    "checkpoint": ("a folder or file name, or an opened checkpoint", lambda v: _file(v) or isinstance(v, Checkpoint)),
}
# keywords that are no option of the CLI's
OTHERS: dict[str, tuple[str, Callable[[Any], bool]]] = {
    "model": ("a model's name such as 'gpt'", lambda v: isinstance(v, str)),
    "weights": ("a .npz/.safetensors file name or a dict of arrays", lambda v: _file(v) or isinstance(v, Mapping)),
    "sampling": ("settings made by explain.core.sampling.make_sampling", lambda v: isinstance(v, Sampling)),
    "on_tensor": ("a function of (name, value)", callable),
    "greedy": ("True or False", lambda v: isinstance(v, bool)),
    "ignore_eos": ("True or False", lambda v: isinstance(v, bool)),
}


def takes(name: str) -> tuple[str, Callable[[Any], bool]] | None:
    """What keyword ``name`` takes and its test; None for a name that is no keyword (the config refuses it)."""
    if name in OTHERS or name in BY_NAME:
        return OTHERS.get(name) or BY_NAME[name]
    o: Option | None = OPTION.get(name)
    if o is not None and o.type == "choice":
        return f"one of {', '.join(repr(c) for c in o.choices)}", lambda v: isinstance(v, str)
    return None if o is None else BY_TYPE[o.type]


def check_keywords(**given: Any) -> None:
    """Refuse the first keyword whose value is not of the type it takes (None is 'not given', always fine)."""
    for name, value in given.items():
        rule = takes(name)
        if value is None or rule is None or rule[1](value):
            continue
        shown = repr(value) if len(repr(value)) <= 40 else f"{type(value).__name__} {repr(value)[:30]}…"
        raise UsageError(f"{name}= takes {rule[0]}, not {shown}")


__all__ = ["BY_NAME", "BY_TYPE", "OTHERS", "check_keywords", "takes"]
