"""The trace: what a run records (:class:`Trace`, :class:`Step`), the recorder the models write it with
(:mod:`explain.trace.recorder`), and the 2-D slice of a step's tensor (:mod:`explain.trace.slices`).

It may import ``core`` and ``ops``.
"""

from explain.trace.trace import BYTES_PER_VALUE, BackwardPass, Generation, ParamSpec, Step, Trace

__all__ = ["BYTES_PER_VALUE", "BackwardPass", "Generation", "ParamSpec", "Step", "Trace"]
