"""``explain generate --new-attention``: each new token's attention row over the text so far, one layer and head,
printed (--plain) or as one JSON document (--json); row n is the generation's recorded step
``gen.n.blocks.L.attn.pattern`` (checked against the API's run of the same options); bad choices refused in one
line before anything is printed."""

from __future__ import annotations

import json

import numpy as np
import pytest
from clitools import invoke, one_line_error

import explain

TEXT = "the cat sat on the"
ARGS = ("generate", "gpt", "--trained", "--text", TEXT, "--greedy", "--ignore-eos", "--max-new-tokens", "3")


def test_json_rows_are_the_recorded_patterns():
    out = invoke(*ARGS, "--new-attention", "--layer", "1", "--head", "2", "--json")
    assert out.exit_code == 0, out.output
    doc = json.loads(out.output)
    trace = explain.generate("gpt", trained=True, text=TEXT, ignore_eos=True, max_new_tokens=3, greedy=True)
    assert (doc["layer"], doc["head"], doc["prompt_length"]) == (1, 2, 5)
    assert len(doc["rows"]) == 3 and doc["steps"][1] == "gen.1.blocks.1.attn.pattern"
    for n, row in enumerate(doc["rows"]):
        recorded = trace[doc["steps"][n]].output[0, 2]
        want = recorded[-1] if n == 0 else recorded[0]  # the prompt's last query, then the one new position
        np.testing.assert_array_equal(row, want)  # the same float64s, through JSON
        assert len(row) == 5 + n and abs(sum(row) - 1) < 1e-12
    assert doc["keys"][:5] == TEXT.split() and doc["text"].startswith(TEXT + " ▸ ")
    assert doc["text"].split(" ▸ ")[1].split() == doc["keys"][5:] + [doc["text"].split()[-1]]


def test_plain_is_a_table_of_the_text_so_far():
    out = invoke(*ARGS, "--new-attention", "--plain")
    assert out.exit_code == 0, out.output
    assert "attention to generated tokens: layer 1, head 0" in out.output  # the last layer by default
    assert "text so far: the cat sat on the ▸" in out.output
    lines = out.output.splitlines()
    rows = [ln for ln in lines if ln.startswith("│ ") and ln.split("│")[1].strip()[:1].isdigit()]
    assert [r.split("│")[1].split()[0] for r in rows] == ["0", "1", "2"]
    assert "*" in out.output  # the generated columns are marked


@pytest.mark.parametrize("extra, code, needles", [
    (("--layer", "1"), 2, ("--layer and --head", "add --new-attention")),
    (("--new-attention", "--layer", "2"), 2, ("--layer 2", "2 layers", "give 0–1")),
    # the layer was not given: the error named 'layer -1' (the default) beside the head
    (("--new-attention", "--head", "4"), 2, ("--head 4", "4 heads: give 0–3")),
    (("--new-attention", "--match", "gen.*", "--plain"), 2, ("--match",)),
    (("--new-attention", "--save", "x.npz"), 2, ("--save", "drop one")),
])
def test_bad_choices_are_refused_in_one_line(extra, code, needles):
    one_line_error(invoke(*ARGS, *extra), code, *needles)


def test_a_run_without_new_tokens_has_no_such_view():
    """The API refuses a plain run in one line (the CLI always generates)."""
    from explain.core.errors import UsageError
    from explain.interp import generated_attention

    with pytest.raises(UsageError, match="generated nothing"):
        generated_attention(explain.run("gpt", trained=True, text=TEXT))
