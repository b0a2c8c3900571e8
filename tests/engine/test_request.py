"""One typed request per run (issue 38): ``explain.run``, ``plan`` and ``generate``, the interpretability tools (the
lens, attribution, patching and its sweep: two runs from one request) and the CLI's ``run``, ``generate``,
``shapes``, ``tokenize``, ``lens``, ``attribute`` and ``patch`` check the model's name once and open a checkpoint
folder once, counted by wrapping the registry's name check and the checkpoint opener everywhere the package holds
them (on the old code: the name 5–6 times, a folder twice when MODEL is left out, by run and by tokenize; the lens
and attribution the name 2 times, patching and the sweep the name 3 times and the folder 3 times). The request
itself is frozen and carries the registry's entry."""

from __future__ import annotations

import sys
from collections import Counter
from dataclasses import FrozenInstanceError
from pathlib import Path

import pytest
from clitools import invoke

import explain
import explain.checkpoints.open
import explain.cli  # noqa: F401 - every command module, so each holds the names wrapped below
import explain.commands.generate  # noqa: F401
import explain.commands.run  # noqa: F401
import explain.commands.shapes  # noqa: F401
import explain.commands.tokenize  # noqa: F401
import explain.core.config
import explain.core.registry
import explain.engine.api
import explain.interp.attribution
import explain.interp.lens
import explain.interp.patching
import explain.interp.stream  # noqa: F401
from explain.core.errors import UsageError
from explain.core.registry import MODELS
from explain.engine.ask import Request, make_request

LLAMA = str(Path(__file__).resolve().parents[1] / "data" / "llama" / "hf_llama")


@pytest.fixture
def counts(monkeypatch: pytest.MonkeyPatch) -> Counter:
    """How often the model's name is checked and a checkpoint opened, wherever a module of the package holds
    ``check_model_name`` or ``open_checkpoint``."""
    seen: Counter = Counter()
    for owner, attr in ((explain.core.registry, "check_model_name"), (explain.checkpoints.open, "open_checkpoint")):
        original = getattr(owner, attr)

        def counted(*args, _attr=attr, _original=original, **kwargs):
            seen[_attr] += 1
            return _original(*args, **kwargs)

        for module in [m for name, m in sys.modules.items() if name.startswith("explain")]:
            if getattr(module, attr, None) is original:
                monkeypatch.setattr(module, attr, counted)
    return seen


def test_the_wrapping_counts_what_it_should(counts: Counter) -> None:
    explain.core.config.make_config("gpt")
    explain.checkpoints.open.open_checkpoint(LLAMA)
    assert counts == {"check_model_name": 1, "open_checkpoint": 1}


@pytest.mark.parametrize("call", ["run", "plan", "generate"])
def test_explain_checks_the_name_once_and_opens_a_checkpoint_once(counts: Counter, call: str) -> None:
    extra = {"max_new_tokens": 2, "greedy": True} if call == "generate" else {}
    trace = getattr(explain.engine.api, call)("llama", checkpoint=LLAMA, text="hello world", **extra)
    assert trace.steps
    assert counts == {"check_model_name": 1, "open_checkpoint": 1}


@pytest.mark.parametrize("args", [
    ["run", "llama", "--checkpoint", LLAMA, "--plain", "--match", "logits"],
    ["run", "--checkpoint", LLAMA, "--plain", "--match", "logits"],  # MODEL left out: read from the folder
    ["generate", "--checkpoint", LLAMA, "--max-new-tokens", "2", "--greedy", "--plain", "--match", "logits"],
    ["shapes", "--checkpoint", LLAMA, "--seq", "3"],
    ["tokenize", "--checkpoint", LLAMA, "--text", "hello"],  # MODEL left out: opened once for both
    ["lens", "--checkpoint", LLAMA, "--text", "The cat is", "--word", " cat", "--plain"],
    ["attribute", "llama", "--checkpoint", LLAMA, "--text", "The cat is", "--word", " cat", "--vs", " is", "--json"],
    ["patch", "--checkpoint", LLAMA, "--text", "The cat is", "--corrupt", "The the is", "--word", " is", "--vs",
     " cat", "--sweep", "resid", "--json"],
])
def test_the_cli_checks_the_name_once_and_opens_a_checkpoint_once(counts: Counter, args: list[str]) -> None:
    result = invoke(*args)
    assert result.exit_code == 0, result.output
    assert counts == {"check_model_name": 1, "open_checkpoint": 1}


TOOLS = {
    "lens": lambda: explain.interp.lens.lens("llama", " cat", checkpoint=LLAMA, text="The cat is"),
    "attribute": lambda: explain.interp.attribution.attribute("llama", " cat", " is", checkpoint=LLAMA,
                                                              text="The cat is"),
    "patch": lambda: explain.interp.patching.patch("llama", "The cat is", "The the is", " is", " cat",
                                                   "blocks.0.resid_post", checkpoint=LLAMA),
    "sweep": lambda: explain.interp.patching.sweep("llama", "The cat is", "The the is", " is", " cat",
                                                   checkpoint=LLAMA),
}


@pytest.mark.parametrize("tool", list(TOOLS))
def test_the_interpretability_tools_check_the_name_once_and_open_a_checkpoint_once(counts: Counter,
                                                                                    tool: str) -> None:
    assert TOOLS[tool]() is not None
    assert counts == {"check_model_name": 1, "open_checkpoint": 1}


def test_the_trained_gpt_is_opened_once(counts: Counter) -> None:
    assert explain.run("gpt", text="the cat").weights.startswith("trained")
    assert counts == {"check_model_name": 1, "open_checkpoint": 1}


def test_the_request_is_frozen_and_typed() -> None:
    req = make_request("llama", checkpoint=LLAMA, text="hello", lr=0.1, d_model=None)
    assert isinstance(req, Request) and req.model is MODELS["llama"] and req.name == "llama"
    assert req.checkpoint is not None and req.checkpoint.model == "llama" and req.text == "hello"
    assert req.training is not None and req.training.lr == 0.1 and req.training.optimizer == "sgd"
    with pytest.raises(FrozenInstanceError):
        req.text = "other"  # type: ignore[misc]
    with pytest.raises(TypeError):
        req.options["d_model"] = 8  # type: ignore[index]


def test_an_unknown_model_is_one_usage_error_before_anything_opens(counts: Counter) -> None:
    with pytest.raises(UsageError, match="unknown model 'lama'; did you mean 'llama'"):
        explain.run("lama", checkpoint=LLAMA)
    assert counts == {"check_model_name": 1}
