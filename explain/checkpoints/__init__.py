"""Checkpoints: a file or folder (a Hugging Face folder, a GGUF file, the trained GPT shipped in the box)
turned into the registry's parameter names and a tokenizer, with where each weight came from.
:func:`explain.checkpoints.open.open_checkpoint` picks the reader.

It may import ``core``, ``ops``, ``trace`` and ``io``.
"""
