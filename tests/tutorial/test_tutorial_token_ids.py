"""Issue 42 item 12: tutorial 17 wrote 'Token 1' and 'Token 3' for token ids beside grids numbered by position
(its position 1 holds id 3), so a student read the wrong row. Every token number in its text says it is an id."""

from __future__ import annotations

import re

from explain.tutorial import load_tutorial


def test_tutorial_17_names_ids_as_ids():
    tut = load_tutorial("17-the-llama-block")
    texts = [tut.summary] + [t for s in tut.stops for t in (s.narration, s.question or "", s.answer or "")]
    bare = [m.group(0) for t in texts for m in re.finditer(r"\btoken (\d+)", t, re.IGNORECASE)]
    assert not bare, bare
    assert any("token id 1" in t.lower() for t in texts)
