"""The trace: what a run records (:class:`Trace`, :class:`Step`), the recorder the models write it with
(:mod:`explain.trace.recorder`), the 2-D slice of a step's tensor (:mod:`explain.trace.slices`), and where each
weight of a run came from in its checkpoint file (:mod:`explain.trace.origin`).

It may import ``core`` and ``ops``.
"""

from explain.trace.trace import BYTES_PER_VALUE, BackwardPass, Generation, ParamSpec, Step, Trace

__all__ = ["BYTES_PER_VALUE", "BackwardPass", "Generation", "ParamSpec", "Step", "Trace"]
