"""How text becomes ids, one step at a time: normalisation, pre-tokenization (the regex's pieces, their bytes
visible), each byte-level BPE merge in order with its rank and the ranks of the pairs it beat, WordPiece's
longest match first with ``##``, and the ids at the end.

Pure Python over the vocabulary and merges a tokenizer carries (a checkpoint folder's tokenizer.json, a GGUF's
``tokenizer.ggml.*``, explain's own word vocabulary): ``tokenizers`` is never needed to walk through a text, and
a test holds every family to ``tokenizers``' own ``encode`` (tests/tokenize/test_tokenize_families.py).

- :mod:`~explain.tokenize.pretokenize`: the pre-tokenizer regexes in Python's ``re`` (\\p{L}, \\p{N} and \\s
  built from :mod:`unicodedata` as Oniguruma reads them) and GPT-2's byte-to-character map.
- :mod:`~explain.tokenize.walk`: the walkthrough as data (:class:`~explain.tokenize.walk.Walkthrough`).
- :mod:`~explain.tokenize.bpe`, :mod:`~explain.tokenize.wordpiece`, :mod:`~explain.tokenize.words`: a family each;
  :mod:`~explain.tokenize.family` picks one for a checkpoint (handed in: this folder reads no file itself).
- :mod:`~explain.tokenize.export`: a walkthrough as a standalone Python script.
- :mod:`~explain.tokenize.record`: a walkthrough as recorded steps (``explain tokenize``'s TUI, ``--tokenizer-steps``).

It may import ``core``, ``ops`` and ``trace``.
"""
