"""The key/value cache as an op kind: ``kv_append`` gives the cached keys (or values) of the earlier positions
with the new position's row appended, so a generation computes one position per token and recomputes nothing.

Its export source is ``np.concatenate`` (a copy); its compute writes the same values into one preallocated
buffer per cache and returns a view of the filled part, so a generation of n tokens holds each layer's cache
once, not n growing copies (:meth:`KVAppend.stored_values` says so to the memory estimate).

A sliding layer's cache (``keep`` = its window) keeps only the last ``keep`` rows: a query there sees no key
further back, so older rows are dropped (transformers' sliding-window cache); ``pos`` is then the new row's
position, so a row's explanation can say which position it holds and which one fell out of the window.
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
    skips = True  # a window's row reads one of the two inputs (feeds: None for the other)
    join = " ++ "
    default_note = ("The cache: earlier positions' keys (values) were computed by earlier steps and are kept; "
                    "only the new position's row is computed now and appended. Nothing before it is recomputed.")

    def shape(self, cache, new, keep: int = 0, **attrs):
        if len(cache) < 2 or len(new) != len(cache) or tuple(cache[:-2]) != tuple(new[:-2]) \
                or cache[-1] != new[-1]:
            raise ShapeError(f"cannot append {sr.fmt_shape(new)} to the cache {sr.fmt_shape(cache)}: all but the "
                             "position axis must match")
        rows = cache[-2] + new[-2]
        return tuple(cache[:-2]) + (min(rows, keep) if keep else rows, cache[-1])

    def stored_values(self, out, shapes, capacity: int = 0, first: bool = True, keep: int = 0, **attrs) -> int:
        if keep:  # a window's cache is a copy of its last rows each time
            return math.prod(out)
        # The first append allocates the buffer (capacity rows); later ones write into it and store nothing new.
        return math.prod(out[:-2]) * max(capacity, out[-2]) * out[-1] if first else 0

    def _dropped(self, cache, new, keep: int) -> int:
        """How many of the oldest rows a window's cache drops: those past the last ``keep``."""
        return max(0, cache.shape[-2] + new.shape[-2] - keep) if keep else 0

    def compute(self, cache, new, capacity: int = 0, keep: int = 0, **attrs):
        # Not the source evaluated (np.concatenate, a copy per token): the same values, written into one buffer.
        import numpy as np  # lazy: numpy off the shape path

        if keep:  # the window: the last keep rows, a copy (the window is small; nothing grows)
            return np.concatenate([cache, new], axis=-2)[..., -keep:, :]
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

    def formula(self, syms: Syms, keep: int = 0, **attrs) -> str:
        if keep:
            return (f"{syms.out} = last {keep} rows of [{syms.ins[0]} kept; {syms.ins[1]} new]   (the window's "
                    "cache: the oldest row falls out)")
        return f"{syms.out} = [{syms.ins[0]} kept; {syms.ins[1]} new]   (append the new position's row)"

    def source(self, out, ins, keep: int = 0, **attrs) -> str:
        tail = f"[..., -{int(keep)}:, :]" if keep else ""
        return f"np.concatenate([{ins[0]}, {ins[1]}], axis=-2){tail}"

    def feeds(self, index, inputs, keep: int = 0, **attrs):
        if not keep:
            return super().feeds(index, inputs)
        cache, new = inputs
        *lead, t, c = index
        u, n_old = t + self._dropped(cache, new, keep), cache.shape[-2]
        return [tuple(lead) + (u, c), None] if u < n_old else [None, tuple(lead) + (u - n_old, c)]

    def explain(self, index, inputs, output, syms: Syms, keep: int = 0, pos: int = 0, **attrs) -> CellExplanation:
        cache, new = inputs
        *lead, t, c = index
        n_old, drop = cache.shape[-2], self._dropped(cache, new, keep)
        u = t + drop  # the row of [kept; new]
        if not keep:
            where = (f"position {t} < {n_old}: from the cache, computed when position {t} was new; not recomputed"
                     if u < n_old else f"position {t} is the new token's: computed in this step")
        else:
            p = pos - (output.shape[-2] - 1 - t)  # the position this row holds (the last row is the new one's)
            where = (f"position {p}: from the cache, computed when it was new; not recomputed" if u < n_old
                     else f"position {p} is the new token's: computed in this step")
        src = f"{syms.ins[0]} kept{idx(tuple(lead) + (u, c))}" if u < n_old else \
            f"{syms.ins[1]} new{idx(tuple(lead) + (u - n_old, c))}"
        lines = [where]
        if keep:
            first = pos - output.shape[-2] + 1
            lines.append(f"a sliding layer keeps the last {keep} positions ({first}–{pos}): a query at {pos} sees "
                         f"no key at {pos} − {keep} = {pos - keep} or before"
                         + (f"; {drop} older row{'s' if drop > 1 else ''} dropped now" if drop else ""))
        return CellExplanation(index, float(output[index]), f"{syms.out}{idx(index)} = {src}",
                               lines=[*lines, f"= {num(output[index])}"])
