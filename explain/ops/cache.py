"""The key/value cache as an op kind: ``kv_append`` gives the cached keys (or values) of the earlier positions
with the new position's row appended, so a generation computes one position per token and recomputes nothing.

Its export source is ``np.concatenate`` (a copy); its compute writes the same values into one preallocated
buffer per cache and returns a view of the filled part, so a generation of n tokens holds each layer's cache
once, not n growing copies (:meth:`KVAppend.stored_values` says so to the memory estimate).
"""

from __future__ import annotations

import math
import weakref

from explain.core import shape_rules as sr
from explain.core.errors import ShapeError
from explain.ops.base import CellExplanation, Op, Syms, idx, num, register

# id(buffer) -> how many rows are filled; a view is extended in place only when it ends exactly there (a second
# append to the same view, a branch, copies instead, so no recorded value ever changes).
_FILLED: dict[int, int] = {}


@register
class KVAppend(Op):
    """The key/value cache: the rows of earlier positions, kept, with the new position's row appended."""

    kind = "kv_append"
    appends = True  # its last rows are its second input's: the views mark them (render.step.appended_rows)
    join = " ++ "
    default_note = ("The cache: earlier positions' keys (values) were computed by earlier steps and are kept; "
                    "only the new position's row is computed now and appended. Nothing before it is recomputed.")

    def shape(self, cache, new, **attrs):
        if len(cache) < 2 or len(new) != len(cache) or tuple(cache[:-2]) != tuple(new[:-2]) \
                or cache[-1] != new[-1]:
            raise ShapeError(f"cannot append {sr.fmt_shape(new)} to the cache {sr.fmt_shape(cache)}: all but the "
                             "position axis must match")
        return tuple(cache[:-2]) + (cache[-2] + new[-2], cache[-1])

    def stored_values(self, out, shapes, capacity: int = 0, first: bool = True, **attrs) -> int:
        # The first append allocates the buffer (capacity rows); later ones write into it and store nothing new.
        return math.prod(out[:-2]) * max(capacity, out[-2]) * out[-1] if first else 0

    def compute(self, cache, new, capacity: int = 0, **attrs):
        # Not the source evaluated (np.concatenate, a copy per token): the same values, written into one buffer.
        import numpy as np  # lazy: numpy off the shape path

        t, n = cache.shape[-2], new.shape[-2]
        buf = cache.base
        if (buf is not None and _FILLED.get(id(buf)) == t and buf.shape[-2] >= t + n
                and buf.shape[:-2] == cache.shape[:-2] and cache.strides == buf.strides
                and cache.ctypes.data == buf.ctypes.data):  # the view starts where the buffer does
            buf[..., t:t + n, :] = new  # rows past every earlier view: no recorded value changes
        else:
            buf = np.empty(cache.shape[:-2] + (max(capacity, t + n), cache.shape[-1]))
            buf[..., :t, :] = cache
            buf[..., t:t + n, :] = new
            weakref.finalize(buf, _FILLED.pop, id(buf), None)
        _FILLED[id(buf)] = t + n
        return buf[..., :t + n, :]

    def formula(self, syms: Syms, **attrs) -> str:
        return f"{syms.out} = [{syms.ins[0]} kept; {syms.ins[1]} new]   (append the new position's row)"

    def source(self, out, ins, **attrs) -> str:
        return f"np.concatenate([{ins[0]}, {ins[1]}], axis=-2)"

    def explain(self, index, inputs, output, syms: Syms, **attrs) -> CellExplanation:
        cache, new = inputs
        *lead, t, c = index
        n_old = cache.shape[-2]
        if t < n_old:
            src, lines = f"{syms.ins[0]} kept{idx(index)}", [f"position {t} < {n_old}: from the cache, computed when "
                                                          f"position {t} was new; not recomputed"]
        else:
            src, lines = (f"{syms.ins[1]} new{idx(tuple(lead) + (t - n_old, c))}",
                          [f"position {t} is the new token's: computed in this step"])
        return CellExplanation(index, float(output[index]), f"{syms.out}{idx(index)} = {src}",
                               lines=[*lines, f"= {num(output[index])}"])
