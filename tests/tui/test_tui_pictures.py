"""Issue 42 item 9 and item 12's second ``c``: ``c`` saves every screen as an SVG (the heads grid, the lens, the model
map, attribution, patching, live sampling, as the step view always did), through one mechanism
(:mod:`explain.tui.picture`): the file-name dialog prefilled with a name that says what the screen shows, a second
``c`` that leaves that name alone, a question before replacing a file, an atomic write; the palette's "Screenshot"
takes the same path (it said "Failed to save screenshot": Textual's wrote into a Downloads folder that is not there).

On the old code ``c`` did nothing on those six screens (no dialog: the first assert of each fails), a second ``c``
left the name as ``c``, and the palette's Screenshot notified "Failed to save screenshot"."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from conftest import _until, drive

import explain
from explain.interp import sweep
from explain.tui import picture, screens
from explain.tui.app import ExplainApp
from explain.tui.screens import (
    attribution,
    experts,
    generated,
    heads,
    help,
    layer_heads,
    lens,
    model_map,
    picker,
    sampling,
)
from explain.tui.screens import sweep as sweep_screen
from explain.tui.screens.confirm import ConfirmScreen
from explain.tui.screens.prompt import PromptScreen

SIZES = [(80, 24), (200, 50)]
SVG = "{http://www.w3.org/2000/svg}"


def svg_words(path: Path) -> str:
    """The text an SVG picture draws (its <text> elements, rich's non-breaking spaces as spaces); parsing it is
    the check that it is well-formed XML."""
    root = ET.parse(path).getroot()
    assert root.tag == f"{SVG}svg"
    return "".join("".join(t.itertext()) for t in root.iter(f"{SVG}text")).replace("\xa0", " ")


async def shoot(pilot, name: str, *words: str) -> None:
    """c on the screen on top: the dialog offers ``name``; a second c leaves it; Enter writes the picture, whose
    text holds ``words``."""
    app = pilot.app
    shown = app.screen
    await pilot.press("c")
    await _until(pilot, lambda: isinstance(app.screen, PromptScreen))
    assert isinstance(app.screen, PromptScreen), f"c did nothing on {type(shown).__name__}"
    field = app.screen.query_one("#answer")
    assert field.value == name
    await pilot.press("c")  # pressed twice: the name stays (it was replaced by 'c')
    await pilot.pause()
    assert field.value == name
    await pilot.press("enter")
    await _until(pilot, lambda: app.screen is shown and Path(name).exists())
    assert app.screen is shown
    text = svg_words(Path(name))
    assert "Save the screen" not in text  # the dialog is not in the picture
    for word in words:
        assert word in text, (name, word)


async def screen_of(pilot, key: str, kind: type) -> object:
    await pilot.press(key)
    await _until(pilot, lambda: isinstance(pilot.app.screen, kind), tries=3000)
    assert isinstance(pilot.app.screen, kind)
    await pilot.pause()
    return pilot.app.screen


async def back(pilot) -> None:
    await pilot.press("escape")
    await _until(pilot, lambda: type(pilot.app.screen).__name__ == "StepScreen")


@pytest.fixture(scope="module")
def patched():
    """A run opened by ``explain patch … --sweep`` (the trained GPT, happy vs hungry): P shows its sweep."""
    s = sweep("gpt", "The cat is happy", "The dog is happy", "happy", "hungry", "resid", trained=True)
    s.runs.corrupt.sweep = s
    return s.runs.corrupt


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_c_saves_every_screen(patched, size, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    app = ExplainApp(patched)

    async def script(pilot):
        shown = await screen_of(pilot, "y", lens.LensScreen)
        top = shown.rows()[0][1][0].plain  # the lens's first cell: 'the 0.81'
        await shoot(pilot, "lens-gpt-happy.svg", "logit lens", top)
        before = Path("lens-gpt-happy.svg").read_bytes()
        await pilot.press("c")  # a second picture of the same screen: the next free name
        await _until(pilot, lambda: isinstance(app.screen, PromptScreen))
        field = app.screen.query_one("#answer")
        assert field.value == "lens-gpt-happy-2.svg"
        field.value = "lens-gpt-happy.svg"  # the first one's name: asked, and kept on no
        await pilot.press("enter")
        await _until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("escape")
        await _until(pilot, lambda: app.screen is shown)
        assert Path("lens-gpt-happy.svg").read_bytes() == before
        await back(pilot)

        shown = await screen_of(pilot, "A", attribution.AttributionScreen)
        a = shown.result
        assert (a.word_text, a.vs_text) == (".", "small")  # a word of punctuation alone is spelled out in the name
        await shoot(pilot, "attribution-gpt-full-stop-vs-small.svg", "attribution", a.parts[shown.order[0]][0])
        await back(pilot)
        shown = await screen_of(pilot, "P", sweep_screen.SweepScreen)
        await shoot(pilot, "patching-gpt-happy-vs-hungry.svg", "activation patching", shown.columns()[0])
        await back(pilot)
        await screen_of(pilot, "m", heads.HeadsScreen)
        await shoot(pilot, "heads-gpt.svg", "Attention patterns", "L0 head 0")
        await back(pilot)
        await screen_of(pilot, "M", model_map.ModelMapScreen)
        await shoot(pilot, "model-map-gpt.svg", "Model map: gpt", "ln_final")

        await pilot.press("ctrl+p")  # the palette's Screenshot: the same dialog, for the screen under the palette
        await _until(pilot, lambda: type(app.screen).__name__ == "Palette")
        await pilot.press(*"Screenshot")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await _until(pilot, lambda: isinstance(app.screen, PromptScreen))
        assert app.screen.query_one("#answer").value == "model-map-gpt-2.svg"
        await pilot.press("enter")
        await _until(pilot, lambda: Path("model-map-gpt-2.svg").exists())
        assert "Model map: gpt" in svg_words(Path("model-map-gpt-2.svg"))
        assert not [n for n in app._notifications if "Failed" in n.message]

    drive(app, script, size=size)
    assert len(list(tmp_path.iterdir())) == 6  # the six pictures, and no temporary file left beside them


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_c_saves_live_sampling(size, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    trace = explain.generate("gpt", text="the cat sat on the", max_new_tokens=2, ignore_eos=True, seed=2)
    app = ExplainApp(trace, start="gen.1.next")

    async def script(pilot):
        await shoot(pilot, "gen_1_next.svg", "gen.1.next")  # the step view, where item 12 saw the second c
        for key, name in (("x", "gen_1_next.py"), ("X", "gpt_run.py")):  # the exports' dialogs: the same field
            await pilot.press(key)
            await _until(pilot, lambda: isinstance(pilot.app.screen, PromptScreen))
            await pilot.press(key)
            await pilot.pause()
            assert pilot.app.screen.query_one("#answer").value == name
            await back(pilot)
        live = await screen_of(pilot, "D", sampling.SamplingScreen)
        await shoot(pilot, "sampling-gpt-new-token-1.svg", "Live sampling: new token 1", f"'{live._label(live.draw.token)}'")

    drive(app, script, size=size)


# -- without Pilot: the names, and every screen that shows something binds c ---------------------------------------
def test_names_say_what_is_shown_and_never_replace_a_file(tmp_path):
    assert picture.stem("blocks.0.attn.scores") == "blocks_0_attn_scores"  # the step view's names, as before
    assert picture.stem("lens gpt happy") == "lens-gpt-happy"
    assert picture.stem("attribution gpt . vs small") == "attribution-gpt-full-stop-vs-small"  # not '_'
    assert picture.stem("lens llama ␣cat <bos>") == "lens-llama-cat-bos"
    assert picture.stem("a/../../etc passwd") == "a_etc-passwd"  # no folder in a suggested name
    assert picture.stem("") == "explain" and len(picture.stem("w " * 200)) <= picture.MAX_STEM
    assert picture.free_name("lens gpt happy", tmp_path) == "lens-gpt-happy.svg"
    (tmp_path / "lens-gpt-happy.svg").write_text("mine")
    (tmp_path / "lens-gpt-happy-2.svg").symlink_to(tmp_path / "nowhere")  # a dangling link is taken too
    assert picture.free_name("lens gpt happy", tmp_path) == "lens-gpt-happy-3.svg"
    assert picture.name_of(help.HelpScreen()) == "explain help"


VIEWS = [attribution.AttributionScreen, experts.ExpertsScreen, generated.GeneratedScreen, heads.HeadsScreen,
         help.HelpScreen, layer_heads.LayerHeadsScreen, lens.LensScreen, model_map.ModelMapScreen,
         picker.TutorialPicker, sampling.SamplingScreen, sweep_screen.SweepScreen]


@pytest.mark.parametrize("screen", VIEWS, ids=lambda s: s.__name__)
def test_every_screen_binds_c_from_the_key_table(screen):
    bound = [b for b in screen._merge_bindings().key_to_bindings.get("c", [])]
    assert [b.action for b in bound] == [picture.ACTION], f"{screen.__name__}: c does not save the screen"
    named = screen is help.HelpScreen or screen is picker.TutorialPicker
    assert named or "picture_name" in vars(screen), f"{screen.__name__} does not say what its picture shows"


def test_no_screen_is_left_out():
    """A screen added later that shows something binds c too: every ModalScreen of explain/tui/screens is in
    VIEWS, or is a dialog whose keys type into a field or answer it (c is a letter there), or the grid screens'
    base."""
    from textual.screen import ModalScreen

    from explain.tui.screens import confirm, interp_grid, prompt, rerun, search

    dialogs = {confirm.ConfirmScreen, prompt.PromptScreen, rerun.RerunScreen, search.SearchScreen,
               interp_grid.GridScreen}
    found = set()
    for info in pkgutil.iter_modules(screens.__path__):
        mod = importlib.import_module(f"{screens.__name__}.{info.name}")
        found |= {c for _, c in inspect.getmembers(mod, inspect.isclass)
                  if issubclass(c, ModalScreen) and c.__module__ == mod.__name__}
    assert found - dialogs - set(VIEWS) == set()
