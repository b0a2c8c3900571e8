"""One rule for which command takes which option (issue 42, item 12; :mod:`explain.core.takes`): over every model-taking
command × every shared option, the option is in the command's --help exactly when the command can use it, and given
where it cannot, it is refused in one line (exit 2) naming the option and what would use it, on the CLI and at the
Python edge (make_request) alike.

On the code before explain/core/takes.py, `lens --help` listed --lr, --backward, --embeddings, --target, --normalize,
--causal, --d-out, --output-target, --grad-output and --optimizer, `lens … --lr 0.1` ran, and `run gpt --temperature
0.5` said only "No such option": the help and refusal tables below fail there."""

from __future__ import annotations

import click
import pytest
from clitools import invoke, one_line_error

from explain.cli import main
from explain.core.errors import ConfigError, UsageError
from explain.core.options import OPTIONS, flag
from explain.core.registry import MODELS, users
from explain.core.takes import ALL, COMMANDS, check_takes, takes
from explain.engine.api import plan
from explain.engine.ask import make_request


def _command(name: str) -> click.Command:
    cmd = main.get_command(click.Context(main), name)
    assert cmd is not None, name
    return cmd


def _value(o) -> list[str]:
    """Command-line words that give ``o`` a value."""
    if o.type in ("flag", "bool"):
        return [o.flag]
    sample = {"int": "2", "float": "0.5", "choice": o.choices[-1] if o.choices else "", "ids": "1,2"}
    return [o.flag, sample.get(o.type, "x.npy")]


def _python_value(o) -> object:
    return {"flag": True, "bool": True, "int": 2, "float": 0.5, "choice": o.choices[-1] if o.choices else None,
            "ids": "1,2"}.get(o.type, "x.npy")


def _a_model(command: str) -> str:
    return next(m.name for m in MODELS.values() if COMMANDS[command].reads(m))


@pytest.mark.parametrize("command", list(COMMANDS))
def test_help_lists_exactly_what_the_command_takes(command: str) -> None:
    """The builder's click parameters and the --help text agree with takes(), option by option."""
    params = {p.name: p for p in _command(command).params}
    text = invoke(command, "--help").output
    for o in ALL:
        p = params[o.name]
        assert p.hidden is (not takes(command, o)), (command, o.flag)
        assert (f"{o.flag} " in text or f"{o.flag}/" in text or f"{o.flag}\n" in text) is takes(command, o), (
            command, o.flag)


CASES = [pytest.param(c, o, id=f"{c}{o.flag}") for c in COMMANDS for o in ALL if not takes(c, o)]


@pytest.mark.parametrize("command, o", CASES)
def test_an_option_the_command_cannot_use_is_refused(command: str, o) -> None:
    """On the CLI (before any run: the callback refuses while parsing) and at the Python edge, one line each."""
    result = invoke(command, _a_model(command), *_value(o))
    one_line_error(result, 2, f"'explain {command}' takes no {o.flag}", f"drop {o.flag}")
    with pytest.raises(UsageError, match=f"takes no {o.flag}") as err:
        make_request(_a_model(command), command=command, **{o.name: _python_value(o)})
    assert "\n" not in str(err.value) and str(err.value) in result.output


def test_what_would_use_it_is_named() -> None:
    assert "(explain run, export or shapes)" in invoke("lens", "gpt", "--lr", "0.1").output
    assert "(explain generate)" in invoke("run", "gpt", "--temperature", "0.5").output
    out = invoke("lens", "gpt", "--embeddings", "e.npy").output
    assert "'explain lens' reads 'gpt', 'llama' or 'gemma'" in out and "'explain run simple'" in out


def test_the_taken_options_pass_the_rule() -> None:
    for command in COMMANDS:
        for o in ALL:
            if takes(command, o):
                check_takes(command, {o.name: _python_value(o)})  # no refusal
    check_takes("lens", {"backward": False, "target": None, "text": ()})  # unset values are not given


def test_the_lens_hides_about_ten_options() -> None:
    hidden = sorted(o.flag for o in OPTIONS if not takes("lens", o))
    assert hidden == sorted(["--target", "--embeddings", "--normalize", "--backward", "--output-target",
                             "--grad-output", "--lr", "--optimizer", "--causal", "--d-out"])


FAMILY = [pytest.param(m, o, id=f"{m}{o.flag}") for m in MODELS for o in OPTIONS
          if o.group == "config" and o.needs and not o.used_by(MODELS[m])]


@pytest.mark.parametrize("model, o", FAMILY)
def test_a_family_option_on_another_model_names_the_models_that_take_it(model: str, o) -> None:
    """The model-level half of the rule (the registry's capabilities, checked by the config): --experts on gpt."""
    value = {"int": 3, "float": 0.5, "bool": not o.default, "text": "sliding"}.get(o.type)
    if o.type == "choice":
        value = next(c for c in o.choices if c != o.default)
    with pytest.raises((ConfigError, UsageError)) as err:
        plan(model, **{o.name: value})
    why = MODELS[model].masking if o.name == "causal" else users(o)[0]  # --causal says why the model has no switch
    assert flag(o.name, value) in str(err.value) and why in str(err.value), str(err.value)


AT_DEFAULT = [pytest.param(m, o, id=f"{m}{o.flag}") for m in MODELS for o in OPTIONS
              if o.group == "config" and o.needs and o.default is not None and not o.used_by(MODELS[m])]


@pytest.mark.parametrize("model, o", AT_DEFAULT)
def test_a_family_option_at_its_default_is_refused_too(model: str, o) -> None:
    """'run gpt --router softmax' ran silently before (the config compared values with the default only); now the
    request refuses any given value with the config's own line (fails on the code before core/takes.check_model_takes)."""
    with pytest.raises(ConfigError) as err:
        make_request(model, **{o.name: o.default})
    assert flag(o.name, o.default) in str(err.value) and users(o)[0] in str(err.value), str(err.value)
    words = [flag(o.name, o.default)] if o.type == "bool" else [o.flag, str(o.default)]
    if o.type != "bool" or words[0] != o.flag or o.default:  # the CLI can say it (--causal cannot say False)
        assert f"'explain run {users(o)[0]}'" in invoke("run", model, *words).output
