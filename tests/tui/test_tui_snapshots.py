"""SVG snapshots of the main screens (pytest-textual-snapshot). Update with ``--snapshot-update`` and look at
the SVGs in tests/tui/__snapshots__/ before committing them."""

from __future__ import annotations

from conftest import fake_tutorial

import explain
from explain.tui.app import ExplainApp


def gpt() -> ExplainApp:
    return ExplainApp(explain.run("gpt"))


def test_snapshot_attention_pattern(snap_compare):
    assert snap_compare(gpt(), press=["g", *"blocks.0.attn.pattern", "enter", "j", "j", "l", "s"],
                        terminal_size=(120, 40))


def test_snapshot_tutorial_small_terminal(snap_compare):
    app = ExplainApp(explain.run("gpt"), tutorial=fake_tutorial())
    assert snap_compare(app, press=["n", "n"], terminal_size=(80, 24))


def test_snapshot_logits_window(snap_compare):
    app = ExplainApp(explain.run("gpt", d_vocab=3000, n_layers=1))
    assert snap_compare(app, press=["g", *"logits", "enter", "L", "L", "j"], terminal_size=(120, 40))


def test_snapshot_help(snap_compare):
    assert snap_compare(gpt(), press=["question_mark"], terminal_size=(120, 40))


def test_snapshot_rerun_form(snap_compare):
    assert snap_compare(gpt(), press=["e"], terminal_size=(120, 40))


def test_snapshot_heads(snap_compare):
    app = ExplainApp(explain.run("multihead", n_heads=4, d_model=16))
    assert snap_compare(app, press=["m"], terminal_size=(120, 40))
