"""Why two sentences are similar, as a student sees it at 80×24, 120×40 and 200×50 in the real step screen: a BERT
folder (tests/data/bert/hf_bert, laid out as all-MiniLM-L6-v2; its WordPiece adds [CLS] … [SEP]) with two and with
three sentences. Each step's header is whole; the cosines' rulers name each text by its own words; the pair
matrix has the words of one text down the side and of the other across, the cursor cell's two words on screen;
the ranked column names each pair; the drill-downs (a pair's dot product and the division, the ranked pairs with
their running sum ending at the cosine) are whole, scrolling with ``d`` where the pane is short."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import drive
from test_tui_llama import SIZES, _drill_text, _screen_text, _show, _words

import explain
from explain.ops.base import precision
from explain.render.step import explanation_result
from explain.tui.app import ExplainApp

FOLDER = Path(__file__).resolve().parents[1] / "data" / "bert" / "hf_bert"
TWO = ["A man is eating food.", "A man is eating a piece of bread."]
THREE = [*TWO, "The girl is carrying a baby."]


@pytest.fixture(scope="module")
def runs():
    return {n: explain.run("bert", checkpoint=str(FOLDER), text=texts) for n, texts in ((2, TWO), (3, THREE))}


def cells(trace) -> dict[str, tuple[int, ...]]:
    last = len(trace.labels["text0"]) - 1
    out = {"sentence.pooled": (1, 5), "sentence.cos": (0, 1), "pairs.0_1.parts": (2, 2), "pairs.0_1.ranked": (0, 0),
           "pairs.0_1.total": (), "loss": ()}
    if "pairs.0_2.parts" in trace.names():
        out.update({"pairs.0_2.parts": (last, 1), "pairs.1_2.total": ()})
    return out


@pytest.mark.parametrize("n", [2, 3])
@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_the_sentence_head_and_the_pairs_read_whole(runs, size, n):
    trace = runs[n]
    app = ExplainApp(trace)
    problems: list[str] = []

    async def script(pilot):
        for name, index in cells(trace).items():
            await _show(pilot, trace, name, index)
            step = trace[name]
            screen = _screen_text(pilot)
            if not any(f"{name}  [{step.op}]" in line for line in screen.splitlines()):
                problems.append(f"{name}: header not on screen whole at {size}")
            if step.op == "pair_parts":  # the cursor cell's two words, on the rulers
                a, b = step.attrs["a"], step.attrs["b"]
                for word in (trace.labels[f"text{a}"][index[0]], trace.labels[f"text{b}"][index[1]]):
                    if word not in screen:
                        problems.append(f"{name}{list(index)}: the word {word!r} not on screen at {size}")
            if step.op == "rank_parts" and trace.labels["pairs0_1"][0] not in screen:
                problems.append(f"{name}: the first pair's words not on screen at {size}")
            if name == "sentence.cos" and "food" not in screen:
                problems.append(f"{name}: the texts' own words not on the rulers at {size}")
            with precision(4):
                ex = trace.explain(step, index)
            drill = _words((await _drill_text(pilot)).replace("█", " ").replace("▕", " "))  # no scroll bar
            for line in [ex.title, *ex.lines[:-1], explanation_result(ex).plain]:
                if _words(line) not in drill:
                    problems.append(f"{name}{list(index)} at {size}: {line!r} not on screen in\n{drill}")

    drive(app, script, size=size)
    assert not problems, "\n".join(problems)


def test_the_ranked_drill_down_ends_at_the_cosine(runs):
    trace = runs[3]
    with precision(4):
        ex = trace.explain("pairs.0_1.total", ())
    cos = float(trace["sentence.cos"].output[0, 1])
    assert ex.columns == ("rank", "text 1", "text 2", "part", "running sum")
    assert abs(ex.rows[-1][-1] - cos) < 1e-12 and ex.rows[0][0] == 1
    assert [abs(r[3]) for r in ex.rows] == sorted((abs(r[3]) for r in ex.rows), reverse=True)
    assert trace.labels["text"][0] == "food" and trace.labels["text"][2].startswith("the girl")


@pytest.mark.network
@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_tutorial_27_reads_on_minilm(size) -> None:
    """Every stop of "What BERT sees" opens on its step with its narration at each size (all-MiniLM-L6-v2,
    fetched once per run: fails, never skips, without the network)."""

    from conftest import region_lines
    from minilm import minilm

    from explain.tui.widgets.narration import NarrationPane
    from explain.tutorial import load_tutorial, run_tutorial

    minilm()  # the fetch, as a test failure if it cannot be done
    tut = load_tutorial("27")
    app = ExplainApp(run_tutorial(tut), tutorial=tut)
    seen: list[tuple[str, str, str]] = []

    async def script(pilot):
        for k in range(len(tut.stops)):
            if k:
                await pilot.press("n")
            await pilot.pause()
            pane = pilot.app.screen.query_one(NarrationPane)
            screen = " ".join(" ".join(region_lines(pilot.app, pilot.app.screen.region)).split())
            seen.append((pilot.app.screen.view.step.name, pane.text, screen))

    drive(app, script, size=size)
    assert [s for s, _, _ in seen] == [stop.step for stop in tut.stops]
    for k, (stop, (_, text, screen)) in enumerate(zip(tut.stops, seen)):
        assert f"stop {k + 1} of {len(tut.stops)}" in text and stop.title in text, (k, text[:200])
        assert stop.step in screen
    assert "eating · eating 0.0536" in seen[9][2] and "0.7553" in seen[10][2]
