"""Every op kind's drill-down, at every size a user is likely to have, keeps its answer on screen, whole.

The op kinds come from the op registry (``explain.ops.REGISTRY``, backward kinds included), so a new kind is
walked with no edit here; a kind that none of the sample runs records fails :func:`test_every_kind_has_a_run`
until a run that records it is added to ``RUNS``. For each kind, the step of that kind with the most cells is
shown in the real step screen (one app per terminal size, its view set to each step, so the layout is the
one a user gets at that size), on its 2-D slice's four corner cells, its centre and the cell whose result line
is the longest (of up to ``SAMPLE`` cells spread over the slice); the drill-down's region of the screen, as
the compositor drew it, must hold the explanation's value after an ``=`` sign, followed by nothing but space.
(Issue 26: at 120×40 the softmax's answer read ``= 0.6386 / 1.6386 = 0.…`` above 20 empty rows.)
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from textual.app import App, ComposeResult

import explain
import explain.tui
from explain import ops
from explain.core.errors import ExplainError
from explain.ops.base import precision
from explain.render import fit
from explain.render.step import explanation_result
from explain.trace import Step, Trace
from explain.tui.app import ExplainApp
from explain.tui.state import View, matrix_shape, split_index
from explain.tui.widgets.cell_panel import CellPanel

SIZES = [(80, 24), (100, 30), (120, 40), (160, 45), (200, 50)]
DATA = Path(__file__).resolve().parents[1] / "data"
SAMPLE = 400  # cells looked at for the longest result line (a vocabulary-wide slice is sampled evenly)

# The sample runs: between them, every op kind of the registry (see test_every_kind_has_a_run).
RUNS: dict[str, Any] = {
    "gpt backward + sgd": lambda: explain.run("gpt", random_weights=True, backward=True, lr=0.5),
    "generate top-k top-p": lambda: explain.generate("gpt", random_weights=True, max_new_tokens=2, top_k=3, top_p=0.9,
                                                     temperature=0.8, seed=1),
    "generate greedy": lambda: explain.generate("gpt", random_weights=True, max_new_tokens=1, greedy=True),
    "transformer backward": lambda: explain.run("transformer", backward=True),
    "simple sum mse": lambda: explain.run("simple", normalize="sum", backward=True),
    "padded batch backward": lambda: explain.run("gpt", random_weights=True, text=["the cat sat", "a dog"], backward=True),
    "attention": lambda: explain.run("attention", text="Thinking Machines"),
    "llama backward": lambda: explain.run("llama", backward=True),
    "llama generate": lambda: explain.generate("llama", max_new_tokens=1, greedy=True),
    "gpt patched, lens, attribution": lambda: _interp_run(),
    "gpt adamw": lambda: explain.run("gpt", random_weights=True, n_layers=1, lr=0.01, optimizer="adamw"),
    # this round's families and kernels: BERT (WordPiece's walk, the sentence head, the pair view), Gemma (GeGLU,
    # the window), a mixture of experts with DeepSeek's router, the tiled kernel's backward, byte-level BPE merges
    "bert folder, tokenizer steps": lambda: explain.run("bert", checkpoint=str(DATA / "bert" / "hf_bert"),
                                                        tokenizer_steps=True),
    "bert backward": lambda: explain.run("bert", backward=True),
    "gemma backward": lambda: explain.run("gemma", backward=True),
    "llama experts backward": lambda: explain.run("llama", n_experts=6, router="sigmoid", n_group=3, topk_group=2,
                                                  n_shared_experts=1, shared_expert_gate=True, backward=True),
    "gpt tiled backward": lambda: explain.run("gpt", random_weights=True, attention_kernel="tiled", attention_tile=3,
                                              backward=True),
    "gpt2 folder, tokenizer steps": lambda: explain.run("gpt", checkpoint=str(DATA / "gpt2_tiny"),
                                                        tokenizer_steps=True),
}


def _interp_run() -> Trace:
    """A patched gpt run with its logit lens and an attribution recorded after it: every interp op kind."""
    from explain.interp import patch
    from explain.interp.attribution import record_attribution
    from explain.interp.lens import record_lens

    trace = patch("gpt", "The cat is happy", "The dog is happy", "happy", "dog", "blocks.0.mlp_out", position=1).trace
    vocab = list(trace.labels["vocab"])
    return record_attribution(record_lens(trace), vocab.index("happy"), vocab.index("dog"))


@pytest.fixture(scope="module")
def traces() -> dict[str, Trace]:
    return {name: make() for name, make in RUNS.items()}


@pytest.fixture(scope="module")
def walk_plan(traces) -> dict[str, list[tuple[Step, list[tuple[int, ...]]]]]:
    """Per run, the steps to walk and their cells (chosen once for every size)."""
    return {run: [(step, cells_of(traces[run], step)) for _, step in steps]
            for run, steps in chosen_steps(traces).items()}


def _cells(step: Step) -> int:
    return int(np.prod(step.shape)) if step.shape else 1


def chosen_steps(traces: dict[str, Trace]) -> dict[str, list[tuple[str, Step]]]:
    """Per run, the steps to walk: for each op kind, the step of that kind with the most cells (the first run
    that records the most), plus the steps the issue named."""
    best: dict[str, tuple[str, Step]] = {}
    for name, trace in traces.items():
        for step in trace.steps:
            if step.output is not None and (step.op not in best or _cells(step) > _cells(best[step.op][1])):
                best[step.op] = (name, step)
    named = [("attention", "attn.pattern"), ("transformer backward", "decoder.blocks.0.cross_attn.pattern")]
    out: dict[str, list[tuple[str, Step]]] = {}
    for run, step in best.values():
        out.setdefault(run, []).append((step.op, step))
    for run, step_name in named:
        out.setdefault(run, []).append(("named", traces[run][step_name]))
    return out


def _result_len(trace: Trace, step: Step, index: tuple[int, ...]) -> int:
    try:
        return len(explanation_result(trace.explain(step, index)).plain)
    except ExplainError:
        return 0


def cells_of(trace: Trace, step: Step) -> list[tuple[int, ...]]:
    """The four corners and the centre of the step's first 2-D slice, and its cell with the longest result."""
    rows, cols = matrix_shape(step)
    lead = tuple(0 for _ in step.shape[:-2])
    corners = [(0, 0), (0, cols - 1), (rows - 1, 0), (rows - 1, cols - 1), (rows // 2, cols // 2)]
    picks = [View(trace, step.index, lead, c).index_of_cell for c in corners]
    n = rows * cols
    sample = range(n) if n <= SAMPLE else np.linspace(0, n - 1, SAMPLE).astype(int)
    with precision(4):
        longest = max(((r // cols, r % cols) for r in sample),
                      key=lambda c: _result_len(trace, step, View(trace, step.index, lead, c).index_of_cell))
    picks.append(View(trace, step.index, lead, longest).index_of_cell)
    return list(dict.fromkeys(picks))


class DrillApp(App[None]):
    """The drill-down alone, with the step screen's stylesheet, in a pane the size Textual gives it in the step
    screen (:func:`pane_sizes`; a whole step screen per cell costs ten times as much to draw)."""

    CSS_PATH = str(Path(explain.tui.__file__).parent / "app.tcss")

    def get_css_variables(self) -> dict[str, str]:
        # the stylesheet's shared sizes ($sidebar-mid, …) come from explain/render/fit.py, as in ExplainApp
        return {**super().get_css_variables(), **fit.css_variables()}

    def compose(self) -> ComposeResult:
        yield CellPanel(id="cell")


async def pane_sizes(traces: dict[str, Trace], walk: dict[str, list], size: tuple[int, int],
                     tutorial: bool) -> dict[tuple[str, int], tuple[int, int]]:
    """The drill-down's content size for each step to walk, as Textual lays out the real step screen on a
    ``size`` terminal (beside a tutorial's narration with ``tutorial``): one app, its view set to each step."""
    from conftest import fake_tutorial

    app = ExplainApp(next(iter(traces.values())), tutorial=fake_tutorial() if tutorial else None)
    sizes = {}
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        for run, steps in walk.items():
            for step, _ in steps:
                app.screen.view = View(traces[run], step.index).clamped()
                await pilot.pause()
                await pilot.pause()
                assert app.screen.tutorial_on == tutorial
                sizes[run, step.index] = tuple(app.screen.query_one(CellPanel).content_size)
    return sizes


def on_screen(app: Any, panel: CellPanel) -> list[str]:
    """The lines of the screen inside the drill-down's content region, as the compositor drew them."""
    strips = app.screen._compositor.render_strips()
    region = panel.content_region
    lines = []
    for y in range(region.y, region.y + region.height):
        text = "".join(seg.text for seg in strips[y]) if y < len(strips) else ""
        lines.append(text[region.x:region.x + region.width])
    return lines


def test_every_kind_has_a_run(traces):
    recorded = {step.op for trace in traces.values() for step in trace.steps}
    missing = sorted(set(ops.REGISTRY) - recorded)
    assert not missing, f"op kinds no sample run records (add a run to RUNS): {missing}"


@pytest.mark.slow
@pytest.mark.parametrize("tutorial", [False, True], ids=["run", "tutorial"])
@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_drill_down_answer_whole(traces, walk_plan, size, tutorial):
    """Each step's drill-down, in the pane a run's screen gives it, or a tutorial's (beside the narration)."""
    failures: list[str] = []
    checked = 0
    app = DrillApp()

    async def walk() -> None:
        nonlocal checked
        panes = await pane_sizes(traces, walk_plan, size, tutorial)
        async with app.run_test(size=(size[0], size[1])) as pilot:
            await pilot.pause()
            panel = app.screen.query_one(CellPanel)
            for run, steps in walk_plan.items():
                trace = traces[run]
                for step, cells in steps:
                    w, h = panes[run, step.index]
                    panel.styles.width, panel.styles.height = w + 2, h  # the padding (0 1)
                    panel.styles.border_top = panel.styles.border_left = ("none", "black")
                    for index in cells:
                        lead, cell = split_index(step, index)
                        panel.view = View(trace, step.index, lead, cell)
                        await pilot.pause()
                        try:
                            with precision(4):
                                ex = trace.explain(step, index)
                        except ExplainError as exc:  # a cell that cannot be explained says why
                            want = re.escape(str(exc)[:20])
                        else:
                            want = r"= " + re.escape(explanation_result(ex).plain.rsplit("= ", 1)[-1]) + r"\s*$"
                        lines = on_screen(app, panel)
                        checked += 1
                        if not any(re.search(want, line) for line in lines):
                            failures.append(f"{run}: {step.name} {list(index)} ({step.op}) at "
                                            f"{size[0]}×{size[1]}{' (tutorial)' if tutorial else ''}, pane {w}×{h}: no {want!r} in\n" + "\n".join(lines))

    asyncio.run(asyncio.wait_for(walk(), 300))
    assert checked > 100
    assert not failures, f"{len(failures)} of {checked} drill-downs lost their answer; first:\n{failures[0]}"


# a number's own sign: a '-' before a digit after no letter, digit or closing bracket (not 1.2e-05, not top-5)
SIGN = re.compile(r"(?<![\w\])])-(?=\.?\d)")


def test_no_drill_down_formula_mixes_two_minus_signs(traces):
    """Issue 42 item 12: a softmax's drill-down read ``exp(-0.1027 − 0.3457)``, a number's ASCII sign beside a
    typographic subtraction. Every op kind (the step of each kind with the most cells, as the size walk picks it;
    these runs are built once for this file), on up to 40 cells spread over it: no title or line holds both. It
    fails on the code before explain.ops.numbers.one_minus (softmax, log softmax, the tiled kernel, ...)."""
    mixed: dict[str, str] = {}
    for run, steps in chosen_steps(traces).items():
        for _, step in steps:
            n = _cells(step)
            for flat in dict.fromkeys(np.linspace(0, n - 1, min(n, 40)).astype(int).tolist()):
                index = tuple(int(i) for i in np.unravel_index(flat, step.shape)) if step.shape else ()
                try:
                    ex = traces[run].explain(step, index)
                except ExplainError:
                    continue
                for text in (ex.title, *ex.lines):
                    if "\u2212" in text and SIGN.search(text):
                        mixed.setdefault(step.op, f"{run}: {step.name}{list(index)}: {text}")
    assert not mixed, "\n".join(mixed.values())
