"""Every step name that code builds or parses is made in explain/names.py: the builders and parsers agree with
each other and with the names a real run records, and no other module spells a generation scope, a gradient
or an update name by hand."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import explain
from explain.core import names

PACKAGE = Path(explain.__file__).parent
# A notation table's globs ("gen.*.probs") are data keyed by step name, not names built or parsed.
ALLOWED = {PACKAGE / "core" / "names.py", *(PACKAGE / "models").glob("notation*.py")}  # the families' tables too
SPELLED = ("gen.", ".grad.from", ".from.", ".updated")
# A scope a run adds in front of a model's names, started by hand (f"patch.{step}") or matched by a regex (gen\.\d+)
STARTS = tuple(f"{p}." for p in names.PREFIXES)
MATCHED = tuple(rf"{p}\." for p in (*names.PREFIXES, names.BLOCKS))  # a block's number too: blocks\.(\d+)


def test_generation_names_round_trip() -> None:
    assert names.gen_scope(3) == "gen.3" and names.gen_step(3, "blocks.0.ln1") == "gen.3.blocks.0.ln1"
    assert names.gen_number("gen.3.blocks.0.ln1") == 3 and names.gen_number("blocks.0.ln1") is None
    assert names.gen_number("gen.3") is None and names.gen_number("generator.x") is None
    assert names.param_name("gen.12.blocks.0.attn.W_Q") == "blocks.0.attn.W_Q"
    assert names.param_name("blocks.0.attn.W_Q") == "blocks.0.attn.W_Q"
    assert names.as_first_token("gen.7.attn.scores") == "gen.0.attn.scores"
    assert names.is_generated("gen.*.probs") and not names.is_generated("*embed")
    assert names.is_draw("gen.3.next") and names.is_draw("gen.12.u")
    assert not names.is_draw("gen.3.probs") and not names.is_draw("next") and not names.is_draw("gen.x.next")


def test_gradient_names_round_trip() -> None:
    assert names.grad("blocks.0.ln1") == "blocks.0.ln1.grad"
    part = names.grad_from("embed", "blocks.0.attn.q")
    assert part == "embed.grad.from.blocks.0.attn.q"
    assert names.arriving(part) == ("embed", "blocks.0.attn.q") and names.gradient_of(part) == "embed"
    assert names.grad_from("x", "attn.scores", 1) == "x.grad.from.attn.scores.arg1"
    assert names.gradient_of("loss.grad") == "loss" and names.gradient_of("loss") is None
    assert names.arriving("loss.grad") is None
    assert names.updated_of(names.updated("W_E")) == "W_E" and names.updated_of("W_E") is None


def test_block_names() -> None:
    assert names.block_of("gen.2.decoder.blocks.3.attn.q") == ("gen.2.decoder.", 3, "attn.q")
    assert names.block_of("blocks.3") == ("", 3, "") and names.block_of("blocks.12.mlp_out") == ("", 12, "mlp_out")
    assert names.block_of("embed") is None and names.block_of("blocks.x.attn") is None
    assert names.block_of("encoder.blocks.0.ln1.grad.from.blocks.1.attn.q") == ("encoder.", 0, "ln1.grad.from.blocks.1.attn.q")


def test_groups_and_labels() -> None:
    assert names.group_of("decoder.blocks.0.attn.q") == ("decoder", "blocks.0", "attn")
    assert names.group_of("gen.3.blocks.0.attn.q") == ("gen.3", "blocks.0", "attn")
    group = names.backward_group("blocks.0.attn.q")
    assert group == ("backward", "blocks.0", "attn") and names.in_backward(group)
    assert names.label("blocks.0.ln1.grad.from.blocks.0.attn.q", names.backward_group("blocks.0.ln1")) == "ln1.grad ← attn.q"
    assert names.update_group("blocks.0.attn.W_Q") == ("update", "blocks.0", "attn")
    assert names.in_training(names.update_group()) and not names.in_training(("blocks.0",))


def test_prefixes_of_the_coming_steps_are_scopes() -> None:
    for prefix in (names.LENS, names.ATTRIB, names.PATCH):
        assert names.scoped(prefix, "blocks.0.resid_post") == f"{prefix}.blocks.0.resid_post"
        assert names.group_of(names.scoped(prefix, "blocks.0.resid_post")) == (prefix, "blocks.0")
    assert len(set(names.PREFIXES)) == len(names.PREFIXES)


def test_a_real_run_uses_these_names() -> None:
    gen = explain.generate("gpt", max_new_tokens=3, greedy=True, n_layers=1)
    assert gen.generation is not None and gen.generation.steps == tuple(names.gen_step(n, "next") for n in range(3))
    assert not gen.generation.stopped_at_eos and gen.backward is None
    back = explain.run("gpt", n_layers=1, backward=True, lr=0.1)
    assert back.backward is not None and back.backward.start == "loss" and back.backward.lr == 0.1
    for step in back:
        value = names.gradient_of(step.name)
        if value is not None:
            assert names.in_backward(step.group), step.name
            assert value in back or value in back.params, step.name
    assert any(names.arriving(s.name) for s in back)  # the residual stream feeds several steps
    assert all(names.updated_of(s.name) in back.params for s in back if names.in_training(s.group)
               and s.op == "sgd")


def _spelled(path: Path) -> list[str]:
    tree = ast.parse(path.read_text())
    docstrings = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            text = node.value
            hand = text.startswith((*SPELLED, *STARTS)) or any(s in text for s in SPELLED if s != "gen.")
            if (hand or any(s in text for s in MATCHED)) and " " not in text:
                found.append(f"{path.name}:{node.lineno}: {text!r}")
    return found


@pytest.mark.parametrize("path", sorted(set(PACKAGE.rglob("*.py")) - ALLOWED), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_module_spells_a_step_name_by_hand(path: Path) -> None:
    """A string that starts a generation scope or spells a gradient/update suffix is built in names.py."""
    assert _spelled(path) == []


def test_the_scan_finds_a_hand_built_name(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text('n = 2\nname = f"gen.{n}.logits"\nother = x + ".grad.from." + y\nat = f"patch.{step}"\n'
                   'draw = re.compile(r"gen\\.\\d+\\.(next|u)$")\nblock = re.compile(r"^(.*?)blocks\\.(\\d+)")\n')
    assert len(_spelled(bad)) == 5
