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
from explain.config import Config, make_config
from explain.models import MODELS, options_table, zoo
from explain.options import OPTION, OPTIONS
from explain.tutorial.schema import OPTION_KEYS

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "explain"
# The registry and the tables keyed by model are where model names belong.
NAMED_HERE = {PACKAGE / "models" / "__init__.py", PACKAGE / "options.py", PACKAGE / "models" / "notation.py"}


def test_readme_options_table_is_generated() -> None:
    readme = (ROOT / "README.md").read_text()
    start = readme.index("-->", readme.index("<!-- options:")) + 4
    block = readme[start:readme.index("<!-- /options -->")].strip()
    assert block == options_table(), "run: python -c 'from explain.models import options_table; print(options_table())'"


def test_click_options_are_the_definitions() -> None:
    params = {p.name: p for p in run_command.params if isinstance(p, click.Option)}
    for o in OPTIONS:
        assert o.flag in params[o.name].opts
        assert params[o.name].help == o.help
        assert params[o.name].multiple == o.multiple


def test_tutorial_keys_and_config_fields_come_from_the_definitions() -> None:
    assert OPTION_KEYS == tuple(o.name for o in OPTIONS if o.tutorial)
    fields = {f.name: f for f in dataclasses.fields(Config)}
    for o in OPTIONS:
        if o.group == "config":
            assert fields[o.name].default == o.default, o.name
    assert set(fields) - {"model", "ln_eps"} == {o.name for o in OPTIONS if o.group == "config"}


@pytest.mark.parametrize("name", list(MODELS))
def test_every_model_has_a_short_forward(name: str) -> None:
    fn = getattr(zoo, MODELS[name].function)
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


def test_options_used_by_one_model_are_refused_elsewhere() -> None:
    from explain.errors import ConfigError

    with pytest.raises(ConfigError, match="applies to the 'simple' model only"):
        make_config("attention", normalize="sum")
    assert OPTION["normalize"].used_by("simple") and not OPTION["normalize"].used_by("gpt")
    assert [m for m in MODELS if OPTION["d_ff"].changes(m)] == ["encoder", "transformer", "gpt"]


def test_the_tutorial_format_reference_names_every_option_key() -> None:
    text = (ROOT / "tutorials" / "README.md").read_text()
    block = text[text.index("[options]"):text.index("[options]") + 1200]
    missing = [key for key in OPTION_KEYS if key not in block]
    assert missing == [], f"tutorials/README.md's [options] example does not name {missing}"
