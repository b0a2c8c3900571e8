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
ALLOWED = {PACKAGE / "core" / "names.py"}  # the one module that builds and parses step names (notation tables too)
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


def test_a_step_name_taken_apart() -> None:
    """Issue 38: the notation matches rows on a name's parts, parsed here once (no glob turned into a regex)."""
    s = names.step_name("gen.2.decoder.blocks.3.cross_attn.q")
    assert (s.new_token, s.stack, s.block, s.sublayer, s.leaf) == (2, "decoder", 3, "cross_attn", "q")
    assert s.path == "attn.q"  # a decoder's cross- and self-attention are attention to the notation
    assert names.step_name("decoder.blocks.0.self_attn_out").path == "attn_out"
    assert names.step_name("blocks.1.mlp.experts.pre") == names.StepName(None, "", 1, "mlp.experts", "pre", "mlp.experts.pre")
    assert names.step_name("decoder.embed") == names.StepName(None, "decoder", None, "", "embed", "embed")
    assert names.step_name("logits") == names.StepName(None, "", None, "", "logits", "logits")
    assert names.step_name("attn.scores").path == "attn.scores" and names.step_name("attn.scores").block is None
    assert names.step_name(names.pair_scope(0, 3) + ".parts").path == "pairs.parts"
    assert names.step_name("tokenizer.piece3.merge2").leaf == "merge2"  # a name no row is for: its leaf is its symbol


def test_notation_rows_match_on_the_parts() -> None:
    q, ln1 = names.step_name("blocks.0.attn.q"), names.step_name("blocks.0.ln1")
    assert names.On("attn.q").matches(q) and names.On("attn.q").matches(names.step_name("encoder.blocks.1.attn.q"))
    assert names.On("attn.q").matches(names.step_name("attn.q"))  # a model without blocks
    assert not names.On("attn.q").matches(names.step_name("gen.0.blocks.0.attn.q"))  # a new token's: its own rows
    assert names.On("attn.q", new_token=True).matches(names.step_name("gen.0.blocks.0.attn.q"))
    assert names.On("ln1", block=True, stack="").matches(ln1)
    assert not names.On("ln1", block=True, stack="").matches(names.step_name("encoder.blocks.0.ln1"))
    assert not names.On("ln1", block=False).matches(ln1) and not names.On("ln1", block=1).matches(ln1)
    assert names.On(("ln2", "ln1"), block=0).matches(ln1)
    assert names.On("add1", block=True, stack="decoder").matches(names.step_name("decoder.blocks.4.add1"))
    assert not names.On("embed").matches(names.step_name("pos_embed"))  # the glob "*embed" matched it by accident


def test_only_the_names_module_matches_a_step_name_by_glob() -> None:
    """The notation matched names by fnmatch globs turned into regexes, and --match by fnmatch in report/: both
    hid from the scanner above. Now the one glob over step names (the user's --match) is names.name_matches."""
    found = [str(p.relative_to(PACKAGE)) for p in sorted(PACKAGE.rglob("*.py")) if p not in ALLOWED
             and any(line.startswith(("import fnmatch", "from fnmatch ")) for line in p.read_text().splitlines())]
    assert found == []
    assert names.name_matches("blocks.*.attn.q", "blocks.1.attn.q") and names.name_matches("blocks.0", "blocks.0.ln1")
    assert not names.name_matches("blocks.0", "blocks.01.ln1") and not names.name_matches("attn.q", "blocks.0.attn.q")
