"""explain.core.shown: how a result prints as text and draws as HTML in a notebook (issue 42). Every text is
escaped (a token ``<script>`` is printed, never run), the HTML parses back to the same words, and the text lines up
its columns by their width on screen. These fail on the code before the module existed (ImportError)."""

from __future__ import annotations

from html.parser import HTMLParser

from explain.core.shown import Grid, Line, Showable, as_html, as_text
from explain.ops.base import CellExplanation

HOSTILE = '<script>alert("x")</script>'


class Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs) -> None:
        self.tags.append(tag)

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def parsed(markup: str) -> Tags:
    t = Tags()
    t.feed(markup)
    t.close()
    return t


def test_a_script_token_is_printed_as_text_not_run() -> None:
    ex = CellExplanation((0, 1), 0.25, f"p[0, 1] for {HOSTILE}", ("k", "word & id"), [(0, HOSTILE), (1, "a<b")],
                         [f"weight of {HOSTILE} = 0.25"])
    markup = ex._repr_html_()
    page = parsed(markup)
    assert "script" not in page.tags and "<script" not in markup
    assert HOSTILE in "".join(page.text) and "a<b" in page.text and "word & id" in page.text
    assert set(page.tags) == {"div", "table", "thead", "tbody", "tr", "th", "td"}
    assert HOSTILE in str(ex)


def test_text_columns_line_up_by_their_width_on_screen() -> None:
    grid = Grid(("k", "word", "p"), (("0", "猫", "0.5000"), ("12", "x̂", "-0.2500")), right=(True, False, True))
    lines = as_text([Line("title"), grid]).splitlines()
    assert lines == ["title", " k  word        p", " 0  猫     0.5000", "12  x̂     -0.2500"]


def test_a_heatmap_cell_sets_its_text_with_its_background() -> None:
    grid = Grid(("layer", "0 a", "1 b"), (("0", "1.00", "-0.50"),), heat=((1.0, -0.5),))
    styles = [s for s in as_html([grid]).split('style="')[1:] if "background-color" in s]
    assert len(styles) == 2 and all("color:#000" in s for s in styles)
    assert "rgb(255,0,0)" in styles[0] and "rgb(127,127,255)" in styles[1]


def test_a_showable_is_its_parts() -> None:
    class Two(Showable):
        def display_parts(self):
            return [Line("a", "title"), Line("b <i>", "note")]

    assert str(Two()) == "a\nb <i>"
    assert Two()._repr_html_() == as_html(Two().display_parts()) and "b &lt;i&gt;" in Two()._repr_html_()
