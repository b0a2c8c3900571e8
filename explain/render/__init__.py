"""Rich renderables (with the TUI, the only folder that imports rich): tensors, steps, explanations, the plain printer.

It may import ``core``, ``ops``, ``trace``, ``io``, ``checkpoints``, ``models``, ``tokenize``, ``report``, ``engine``, ``interp``
and ``tutorial``.
"""
