"""Why the model says what it says, each as recorded steps of the run (the issue-27 tools):

| function | gives |
| --- | --- |
| :func:`~explain.interp.lens.lens` | the logit lens: the residual after each block and each attention, read through the final norm and the unembedding |
| :func:`~explain.interp.attribution.attribute` | direct logit attribution: the final residual's parts, each part's share of a logit |
| :func:`~explain.interp.patching.patch` | activation patching: a corrupted run with chosen cells of one step taken from a clean run |
| :func:`~explain.interp.patching.sweep` | the recovered fraction of a logit difference for every layer × position (or head) |

They read the residual stream as a sum, so they are for pre-norm models (:mod:`explain.interp.stream`).
"""

from __future__ import annotations

__all__ = ["lens", "attribute", "patch", "sweep"]


def __getattr__(name: str):  # the tools import numpy: only when one is used
    if name == "lens":
        from explain.interp.lens import lens

        return lens
    if name == "attribute":
        from explain.interp.attribution import attribute

        return attribute
    if name in ("patch", "sweep"):
        from explain.interp import patching

        return getattr(patching, name)
    raise AttributeError(name)
