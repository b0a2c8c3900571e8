"""The model registry and the option definitions are the only places a model or an option is described:
everything that lists them is generated, and nothing else branches on a model's name."""

from __future__ import annotations

import ast
import dataclasses
import inspect
from pathlib import Path

import click
import pytest

from explain.commands.run import run as run_command
from explain.core.config import Config, make_config
from explain.core.options import OPTION, OPTIONS
from explain.core.registry import MODELS, forward_of, option_help, options_table
from explain.tutorial.schema import OPTION_KEYS

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "explain"
# The registry and the tables keyed by model are where model names belong.
NAMED_HERE = {PACKAGE / "core" / "registry.py", PACKAGE / "models" / "notation.py"}


def test_readme_options_table_is_generated() -> None:
    readme = (ROOT / "README.md").read_text()
    start = readme.index("-->", readme.index("<!-- options:")) + 4
    block = readme[start:readme.index("<!-- /options -->")].strip()
    assert block == options_table(), "run: python -c 'from explain.core.registry import options_table; print(options_table())'"


def test_click_options_are_the_definitions() -> None:
    params = {p.name: p for p in run_command.params if isinstance(p, click.Option)}
    for o in OPTIONS:
        assert o.flag in params[o.name].opts
        assert params[o.name].help == option_help(o)
        assert params[o.name].multiple == o.multiple


def test_tutorial_keys_and_config_fields_come_from_the_definitions() -> None:
    assert OPTION_KEYS == tuple(o.name for o in OPTIONS if o.tutorial)
    fields = {f.name: f for f in dataclasses.fields(Config)}
    for o in OPTIONS:
        if o.group == "config":
            assert fields[o.name].default == o.default, o.name
    assert set(fields) - {"model", "ln_eps", "sliding_window_pattern", "assumed"} == {o.name for o in OPTIONS if o.group == "config"}


@pytest.mark.parametrize("name", list(MODELS))
def test_every_model_has_a_short_forward(name: str) -> None:
    fn = forward_of(MODELS[name])
    lines = [ln for ln in inspect.getsource(fn).splitlines() if ln.strip()]
    assert len(lines) <= 25, f"{name}: {len(lines)} lines"
    cfg = make_config(name)
    for key, value in MODELS[name].defaults.items():
        assert getattr(cfg, key) == value


def _names_a_model(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant) and node.value in MODELS:
        return True
    return isinstance(node, (ast.Tuple, ast.List, ast.Set)) and any(_names_a_model(e) for e in node.elts)


def _subject(node: ast.AST) -> str:
    return node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else ""


def test_no_branch_on_a_model_name_outside_the_registry() -> None:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path in NAMED_HERE:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Compare):
                sides = [node.left, *node.comparators]
                subjects = {_subject(s) for s in sides}
                if any(_names_a_model(s) for s in sides) and subjects & {"model", "prefix", "name"}:
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert found == []


# Where a model's name must not be written: these read what a model can do from the registry.
NO_NAMES = [PACKAGE / "core" / "options.py", PACKAGE / "cli.py", *sorted((PACKAGE / "commands").glob("*.py")),
            *sorted((PACKAGE / "tui").rglob("*.py"))]


def _model_names_in(text: str) -> list[str]:
    """Model names a string says: the whole string, or quoted inside it ('gpt', "gpt" or `gpt`)."""
    return [m for m in MODELS if text == m or any(f"{q}{m}{q}" in text for q in "'\"`")]


@pytest.mark.parametrize("path", NO_NAMES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_model_name_is_written_in_options_cli_commands_or_tui(path: Path) -> None:
    """A string that is a model's name (or quotes one) in these modules is a model fact said twice: ask the
    registry for a capability instead. Option names are not model names even where they are spelled alike
    (the ``causal`` option and the ``causal`` model): an option's name is allowed as itself."""
    options = {o.name for o in OPTIONS}
    found = [f"{path.relative_to(ROOT)}:{node.lineno}: {node.value!r}"
             for node in ast.walk(ast.parse(path.read_text()))
             if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value not in options
             and _model_names_in(node.value)]
    assert found == []


def test_the_name_scan_finds_a_name() -> None:
    assert _model_names_in("gpt") == ["gpt"]
    assert _model_names_in("Generation needs 'gpt'.") == ["gpt"]
    assert _model_names_in("the causal mask") == []


def test_every_option_asks_for_a_known_capability() -> None:
    from explain.core.options import GENERATION
    from explain.core.registry import CAPABILITIES

    for o in OPTIONS + GENERATION:
        for cap in (o.needs, o.lacks, o.affects):
            assert cap == "" or cap in CAPABILITIES, (o.name, cap)


def test_a_model_default_overrides_the_option_default(monkeypatch: pytest.MonkeyPatch) -> None:
    """A model's entry may turn a switch off by default (the Llama family's qkv_bias=False): one line."""
    import dataclasses as dc

    from explain.core.registry import Model

    entry = MODELS["gpt"]
    no_bias = dc.replace(entry, name="gpt_no_bias", defaults=dict(entry.defaults, qkv_bias=False))
    monkeypatch.setitem(MODELS, "gpt_no_bias", no_bias)
    assert make_config("gpt_no_bias").qkv_bias is False
    assert make_config("gpt_no_bias", qkv_bias=True).qkv_bias is True
    assert make_config("gpt").qkv_bias is True
    assert isinstance(no_bias, Model) and no_bias.caps == entry.caps


def test_options_used_by_one_model_are_refused_elsewhere() -> None:
    from explain.core.errors import ConfigError

    with pytest.raises(ConfigError, match="applies to the 'simple' model only"):
        make_config("attention", normalize="sum")
    assert OPTION["normalize"].used_by(MODELS["simple"]) and not OPTION["normalize"].used_by(MODELS["gpt"])
    assert [m for m in MODELS if OPTION["d_ff"].changes(MODELS[m])] == ["encoder", "transformer", "gpt", "llama",
                                                                      "gemma", "bert"]


def test_the_tutorial_format_reference_names_every_option_key() -> None:
    text = (ROOT / "tutorials" / "README.md").read_text()
    block = text[text.index("[options]"):text.index("[[stops]]")]  # the example up to its first stop
    missing = [key for key in OPTION_KEYS if key not in block]
    assert missing == [], f"tutorials/README.md's [options] example does not name {missing}"


def test_config_defaults_are_written_at_the_fields_and_equal_the_options() -> None:
    """Issue 38: Config's defaults are literal values where the fields are declared (no ``default("d_model")``
    lookup); each field that is an option has the option's default, so ``--help`` and a Config made in code agree."""
    import dataclasses
    import inspect

    from explain.core.config import Config
    from explain.core.options import OPTION

    assert "default(" not in inspect.getsource(Config)
    fields = {f.name: f.default for f in dataclasses.fields(Config)}
    shared = [name for name in fields if name in OPTION]
    assert len(shared) > 30
    for name in shared:
        assert fields[name] == OPTION[name].default and type(fields[name]) is type(OPTION[name].default), name
