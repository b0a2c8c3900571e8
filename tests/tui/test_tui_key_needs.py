"""Issue 38 (keys declare what they need) and issue 42 item 10 (the footer shows the keys that work on this screen
and this model), on the key layer: no Pilot, so the whole table stays cheap.

Every key × a few runs: :func:`keys.works` with :func:`needs.facts` of the run must say exactly what the table
below says (the issue's spec: tutorial 1, the ``simple`` model, offers no ``y A P W E s S b B G D o``), and
:func:`keys.footer_actions` must show working keys only, in the key table's order, and ``? more`` when some do
not fit. On the code before the needs (no ``Key.needs``, no :mod:`explain.tui.needs`) every test here fails."""

from __future__ import annotations

from pathlib import Path

import pytest

import explain
from explain.interp.patching import patch
from explain.tui import keys, needs
from explain.tutorial import load_tutorial, run_options, run_tutorial

HF_LLAMA = Path(__file__).resolve().parents[1] / "data" / "llama" / "hf_llama"

# The keys that work only on some runs, by their first key; every other key works on every run.
SOMETIMES = ("a", "w", "t", "full_stop", "comma", "y", "A", "P", "W", "E", "s", "S", "b", "B", "G", "D", "o")
TUTORIAL = {"a", "w", "t", "full_stop", "comma"}
SLICES = {"s", "S", "b", "B"}
LENS = {"y", "A"}

# What works where, as the issue asks and as each key's action does (checked by hand in tmux, and by the
# refusal tests in test_tui_interp.py, test_tui_generate.py and test_tui_experts.py).
EXPECTED = {
    "tutorial 1 (simple, given embeddings)": TUTORIAL,  # no lens (no stream), no slices (all 2-D), no text
    "gpt --trained": LENS | SLICES | {"G", "o"},
    "llama HF fixture": LENS | SLICES | {"G", "o"},
    "bert": SLICES | {"o"},  # post-LN: no lens; writes no next token
    "gemma": LENS | SLICES | {"G", "o"},
    "llama --experts, generated": LENS | SLICES | {"G", "o", "E", "W", "D"},
    "gpt patched (explain patch --step)": LENS | SLICES | {"G", "o", "P"},
}


def _run(name: str) -> needs.Run:
    if name.startswith("tutorial 1"):
        tut = load_tutorial("01-attention-without-weights")
        return needs.Run(run_tutorial(tut), True, run_options(tut))
    if name == "gpt patched (explain patch --step)":
        one = patch("gpt", "the cat is happy", "the cat is tired", "happy", "tired", "blocks.0.resid_post",
                    trained=True)
        one.trace.patched = one  # as explain patch --step opens it (commands/interp.py)
        return needs.Run(one.trace, False, {"text": "the cat is tired"})
    made = {"gpt --trained": lambda: explain.run("gpt", trained=True),
            "llama HF fixture": lambda: explain.run("llama", checkpoint=str(HF_LLAMA)),
            "bert": lambda: explain.run("bert"),
            "gemma": lambda: explain.run("gemma"),
            "llama --experts, generated": lambda: explain.generate("llama", n_experts=4, max_new_tokens=2)}[name]
    return needs.Run(made(), False, {})


@pytest.fixture(scope="module")
def runs() -> dict[str, tuple[needs.Run, frozenset[str]]]:
    out = {}
    for name in EXPECTED:
        run = _run(name)
        out[name] = (run, needs.facts(run))
    return out


def _first(k: keys.Key) -> str:
    return k.keys.split(",")[0]


@pytest.mark.parametrize("name", list(EXPECTED))
def test_every_key_works_exactly_where_the_run_has_what_it_needs(runs, name):
    run, have = runs[name]
    working = {_first(k) for k in keys.KEYS if keys.works(k.name, have)}
    assert working & set(SOMETIMES) == EXPECTED[name], sorted(working & set(SOMETIMES))
    assert {_first(k) for k in keys.KEYS} - set(SOMETIMES) <= working  # the rest work everywhere
    for k in keys.KEYS:  # a key that cannot work has a reason in TUI terms, one line; a working one none
        why = needs.why_not(k.needs, run, have)
        assert (why == "") == keys.works(k.name, have), (k.keys, why)
        assert "\n" not in why


@pytest.mark.parametrize("name", list(EXPECTED))
@pytest.mark.parametrize("width", [60, 80, 120, 200])
def test_the_footer_shows_working_keys_in_table_order_then_more(runs, name, width):
    _, have = runs[name]
    shown = keys.footer_actions(width, lambda n: keys.works(n, have))
    working = [k.action for k in keys.KEYS if keys.works(k.name, have)]
    in_footer = [a for a in working if a in shown.actions]
    assert set(shown.actions) <= set(working) and {"help", "quit"} <= shown.actions
    rest = [a for a in in_footer if a not in keys.ALWAYS_IN_FOOTER]
    assert rest == [a for a in working if a not in keys.ALWAYS_IN_FOOTER][:len(rest)]  # a prefix: nothing jumps
    assert shown.more == (len(in_footer) < len(working))
    if width >= 120:  # the model map from 120 columns; G where the model writes on
        assert "app.model_map" in shown.actions
        assert ("generate" in shown.actions) == ("G" in EXPECTED[name])
    if name.startswith("tutorial 1"):
        assert not {"lens", "attribution", "patching", "generated", "experts", "turn"} & {
            a.split("(")[0] for a in shown.actions}  # not 'yAPW why sSbB slice'


def test_a_key_that_needs_an_unknown_word_is_refused_at_import():
    """A typo in a new key's needs is caught when the table loads, not when a student presses the key."""
    table = [*keys.KEYS, keys.Key("Z", "zap", "zap", "Zap", "Run", needs="generats")]
    old = keys.KEYS[:]
    try:
        keys.KEYS[:] = table
        with pytest.raises(ValueError, match="generats"):
            keys._needs_by_name()
    finally:
        keys.KEYS[:] = old
