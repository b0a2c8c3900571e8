"""Why the model says what it says, each as recorded steps of the run (the issue-27 tools):

| function | gives |
| --- | --- |
| :func:`logit_lens` | the logit lens: the residual after each block and each attention, read through the final norm and the unembedding |
| :func:`attribute` | direct logit attribution: the final residual's parts, each part's share of a logit |
| :func:`patch` | activation patching: a corrupted run with chosen cells of one step taken from a clean run |
| :func:`sweep` | the recovered fraction of a logit difference for every layer × position (or head) |
| :func:`generated_attention` | each generated token's attention over the text so far |

They read the residual stream as a sum, so they are for pre-norm models (:mod:`explain.interp.stream`). The
functions live in :mod:`~explain.interp.lens`, :mod:`~explain.interp.attribution`, :mod:`~explain.interp.patching`
and :mod:`~explain.interp.generated`; importing this package imports none of them (nor numpy).

It may import ``core``, ``ops``, ``trace``, ``io``, ``checkpoints``, ``models``, ``report`` and ``engine``.
"""

from __future__ import annotations

from typing import Any

_WHERE = {"logit_lens": ("lens", "lens"), "attribute": ("attribution", "attribute"),
          "patch": ("patching", "patch"), "sweep": ("patching", "sweep"),
          "generated_attention": ("generated", "generated_attention")}

__all__ = list(_WHERE)


def __getattr__(name: str) -> Any:  # the tools import numpy: only when one is used
    if name not in _WHERE:
        raise AttributeError(f"module 'explain.interp' has no attribute {name!r}")
    from importlib import import_module  # lazy: the tools load numpy only when one is used

    module, attr = _WHERE[name]
    return getattr(import_module(f"explain.interp.{module}"), attr)
