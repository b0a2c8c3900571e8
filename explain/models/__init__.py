"""The model code: the layers (:mod:`.layers`), the models' forwards (:mod:`.zoo`), generation
(:mod:`.generate`) and every step's symbol and narration (:mod:`.notation`). The registry that says which models
exist and what each can do is :mod:`explain.core.registry`.

It may import ``core``, ``ops`` and ``trace``.
"""
