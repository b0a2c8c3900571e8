"""The Python API's results print as the CLI's ``--plain`` tables and draw as HTML in a notebook (issue 42, "The
Python API prints as a table"): ``print(trace.explain(...))`` for a softmax, a matmul and a weight read from a
GGUF file (its origin), ``print(lens)``, ``print(attribution)``, ``print(patched)``, ``print(sweep)``.

Each is held to the CLI on the same run: the words and numbers of ``str(result)``, and of its HTML's text (parsed
with :mod:`html.parser`: nbclient is not in the test extra, so no kernel runs it), equal in order those of
``explain … --plain`` (the rich tables' box lines left out). The HTML is checked to be self-contained and
theme-neutral: no script, no stylesheet, no event attribute, and no colour set without its background. On the
code before this test every case fails: the results had no ``_repr_html_`` and printed as dataclass reprs.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from click.testing import CliRunner
from gguf_files import write_gguf

import explain
from explain.cli import main
from explain.interp import attribute, logit_lens, patch, sweep

TEXT = "The cat is happy"
CLEAN, CORRUPT = "fish book tired cat man hungry fish book", "fish book happy cat man hungry fish book"
BOX = re.compile(r"[\u2500-\u257f]")  # box-drawing characters: a rich table's lines


def words(text: str) -> list[str]:
    return BOX.sub(" ", text).split()


def cli(*args: str) -> str:
    """What the command writes, stderr (the note on which position was read) first, at a width that wraps nothing."""
    result = CliRunner().invoke(main, [*args, "--plain"], env={"COLUMNS": "300"}, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.stderr + result.stdout


class Page(HTMLParser):
    """The text of an HTML fragment in order, and every tag and style attribute it uses."""

    def __init__(self) -> None:
        super().__init__()
        self.text: list[str] = []
        self.tags: set[str] = set()
        self.attrs: list[tuple[str, str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        self.attrs += [(k, v or "") for k, v in attrs]

    def handle_data(self, data: str) -> None:
        self.text.append(data.replace("\xa0", " "))


def page(result) -> Page:
    p = Page()
    p.feed(result._repr_html_())
    p.close()
    return p


def same_as_cli(result, expected: str) -> None:
    """str(result) and its HTML's text say what the CLI printed, word for word; the HTML is self-contained."""
    assert words(str(result)) == words(expected)
    p = page(result)
    assert words(" ".join(p.text)) == words(expected)
    assert not p.tags & {"script", "style", "link", "iframe", "img"}, p.tags
    assert {k for k, _ in p.attrs} <= {"style"}, p.attrs  # inline styles only: no class, no on* handler
    for _, style in p.attrs:  # a colour of its own only with its background: readable in light and dark themes
        assert ("color:" in style.replace("background-color:", "")) == ("background-color:" in style), style


def after_cell(plain: str) -> str:
    """The drill-down ``--plain --cell`` prints after its ``cell [i, j]`` line."""
    return plain.split("\ncell [", 1)[1].split("\n", 1)[1]


@pytest.fixture(scope="module")
def trace():
    return explain.run("gpt", trained=True, text=TEXT)


@pytest.mark.parametrize("step, cell", [("blocks.0.attn.pattern", (0, 0, 2, 1)),  # softmax
                                        ("blocks.0.attn.scores", (0, 0, 1, 0))])  # matmul
def test_a_cell_prints_as_its_plain_drill_down(trace, step, cell) -> None:
    ex = trace.explain(step, cell)
    plain = cli("run", "gpt", "--trained", "--text", TEXT, "--match", step, "--cell", ",".join(map(str, cell)))
    same_as_cli(ex, after_cell(plain))
    assert str(ex).splitlines()[0] == ex.title and str(ex).splitlines()[-1].endswith(ex.value_text())


def test_a_weight_read_from_a_gguf_file_prints_its_origin(tmp_path: Path) -> None:
    gguf = write_gguf(tmp_path / "m.gguf", "Q4_1")
    ex = explain.run("llama", checkpoint=str(gguf), text="The capital of France is").explain("blocks.0.attn.q",
                                                                                            (0, 2, 3, 5))
    assert ex.origin is not None and ex.origin.title in str(ex)
    plain = cli("run", "llama", "--checkpoint", str(gguf), "--text", "The capital of France is", "--match",
                "blocks.0.attn.q", "--cell", "0,2,3,5")
    same_as_cli(ex, after_cell(plain))


def test_the_lens_prints_its_two_tables() -> None:
    lens = logit_lens("gpt", "happy", trained=True, text=TEXT)
    same_as_cli(lens, cli("lens", "gpt", "--trained", "--text", TEXT, "--word", "happy"))
    assert "<b" not in str(lens) and "rank of 'happy'" in str(lens)


def test_an_attribution_prints_its_ranked_parts() -> None:
    a = attribute("gpt", "happy", "cat", trained=True, text=TEXT)
    same_as_cli(a, cli("attribute", "gpt", "--trained", "--text", TEXT, "--word", "happy", "--vs", "cat"))


def test_a_patch_and_a_sweep_print_their_numbers() -> None:
    one = patch("gpt", CLEAN, CORRUPT, "tired", "happy", "blocks.0.resid_post", position=2, trained=True)
    args = ("patch", "gpt", "--trained", "--text", CLEAN, "--corrupt", CORRUPT, "--word", "tired", "--vs", "happy")
    same_as_cli(one, cli(*args, "--step", "blocks.0.resid_post", "--position", "2"))
    s = sweep("gpt", CLEAN, CORRUPT, "tired", "happy", "resid", trained=True)
    same_as_cli(s, cli(*args, "--sweep", "resid"))
    cells = [style for _, style in page(s).attrs if "background-color" in style]
    assert len(cells) == s.recovered.size  # every fraction is coloured on the heatmap's own scale
