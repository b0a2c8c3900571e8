"""A run end to end: the Python entry points (:mod:`~explain.engine.api`), the checked request, the inputs
prepared for a model, parameters and their initialisation, the recorded backward pass, the memory plan and its
prices, and a generation's token drawn again.

It may import ``core``, ``ops``, ``trace``, ``io``, ``checkpoints``, ``models``, ``tokenize`` and ``report``.
"""
