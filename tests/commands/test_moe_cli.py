"""The mixture of experts from the command line: `explain shapes --checkpoint DIR` with a config.json alone
(total and active parameters, the rule beside the figure, a note for the length planned), a run on such a folder
refused in one line, and hostile router options refused in one line (exit 2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from clitools import invoke, one_line_error

DATA = Path(__file__).resolve().parents[1] / "data" / "moe"
COUNTS = json.loads((DATA / "configs" / "counts.json").read_text())
MIXTRAL = str(DATA / "configs" / "mixtral-8x7b")


def test_shapes_of_a_config_alone() -> None:
    result = invoke("shapes", "--checkpoint", MIXTRAL, "--json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert (doc["n_params"], doc["n_active"]) == (46_702_792_704, COUNTS["mixtral-8x7b"]["active"])
    assert "has no tokenizer.json: the steps are for 8 tokens" in result.stderr
    text = invoke("shapes", "--checkpoint", MIXTRAL, "--no-steps", "--seq", "3").stdout
    assert "8 experts, 2 per token" in text.splitlines()[0]
    assert "total: 46,702,792,704 parameters" in text and "active: 12,879,925,248 parameters per token" in text


def test_a_run_on_a_config_alone_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text((DATA / "hf_mixtral" / "config.json").read_text())  # small: it fits
    one_line_error(invoke("run", "--checkpoint", str(tmp_path), "--tokens", "1,2"), 1, "reads its config.json alone")
    # Mixtral-8x7B's config alone: its weights would not fit, said before anything is read
    one_line_error(invoke("run", "--checkpoint", MIXTRAL, "--tokens", "1,2"), 1, "weights alone do not fit")


@pytest.mark.parametrize("args, needles", [
    (["--experts", "2", "--experts-per-token", "3"], ("--experts-per-token 3", "more than the 2 experts")),
    (["--experts", "6", "--n-group", "4"], ("--n-group 4", "divisor of 6")),
    (["--experts", "0"], ("--experts 0", "at least 1 expert")),
    (["--experts-per-token", "3"], ("needs --experts",)),
    (["--experts", "8", "--n-group", "2", "--topk-group", "3"], ("--topk-group 3",)),
])
def test_hostile_router_options_are_one_line(args: list[str], needles: tuple[str, ...]) -> None:
    one_line_error(invoke("run", "llama", *args), 2, *needles)


def test_the_options_belong_to_llama() -> None:
    one_line_error(invoke("run", "gpt", "--experts", "4"), 2, "--experts 4", "'llama'")
