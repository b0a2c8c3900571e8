"""Where the backward pass keeps its smaller gradients: in large chunks backed by huge pages.

Why: a recorded backward keeps every gradient it computes (at GPT-2 small size, 128 tokens, about 260 MiB of
arrays between 64 KiB and 4 MiB: ∂L/∂(every activation) of every block), where an untraced backward lets each go
once used. numpy asks the kernel for transparent huge pages (``madvise``) only for allocations of 4 MiB or
more, so each of these lands in fresh 4 KiB pages of the malloc heap, faulted in one page at a time (about 67
thousand faults, and on a virtual machine each first touch is dear). Copying each into a 32 MiB chunk (huge
pages: 16 faults a chunk) and handing the array the op computed back to malloc, whose freed memory the next
step's result reuses, costs one copy and saves almost all of those faults (bench_backward measures it).

A kept array is a C-contiguous view of its own bytes of a chunk: its values, shape, dtype and memory order are
those the op computed (bit for bit), and no two steps share memory. Only float64 arrays that own their memory
are copied; a gradient that is one of the step's inputs passed through (``add``) or a view of one is kept as is.
A chunk is freed with the last view into it: the trace's, normally (a gradient kept after its trace is dropped
keeps its chunk; ``.copy()`` it to keep only its own bytes).
"""

from __future__ import annotations

from typing import Any

import numpy as np

SMALL = 64 << 10  # below this a copy saves no fault worth its call
HUGE = 4 << 20  # numpy's own threshold for huge pages: from here on an array is already backed by them
CHUNK = 32 << 20  # ≥ HUGE, so numpy backs the chunk with huge pages; the unused tail of the last is never touched
ALIGN = 64  # bytes: each view starts on a cache line, as malloc's larger blocks do


class Arena:
    """Chunks the trace's smaller float64 arrays are copied into (:meth:`keep`); one per backward pass."""

    def __init__(self) -> None:
        self._chunk = np.empty(0)
        self._used = 0  # bytes of the current chunk handed out

    def keep(self, value: Any, inputs: list[Any]) -> Any:
        """The array the trace keeps for ``value``, a step's output computed from ``inputs``: a copy in a
        chunk, or ``value`` itself when it is not worth copying or not the step's own (an input passed on)."""
        if not (isinstance(value, np.ndarray) and value.dtype == np.float64 and value.flags.owndata
                and value.flags.c_contiguous and SMALL <= value.nbytes < HUGE
                and all(value is not x for x in inputs)):
            return value
        if self._used + value.nbytes > self._chunk.nbytes:
            self._chunk, self._used = np.empty(CHUNK // 8), 0
        start = self._used // 8
        kept = self._chunk[start:start + value.size].reshape(value.shape)
        self._used += -(-value.nbytes // ALIGN) * ALIGN
        kept[...] = value
        return kept
