"""``explain.run``, ``plan`` and ``generate`` check every keyword's Python type at the edge (issue 38 item 6): a wrong
one is a UsageError of one line that names the keyword and what it takes, before anything is read or run. On the old
code ``explain.run("gpt", tokens=32)`` raised a bare TypeError ('int' object is not iterable), and so did text=3,
checkpoint=5, weights=5, layer_types=5, sampling=5 and on_tensor=5; backward='yes', trained='no' and lr=True ran."""

from __future__ import annotations

import numpy as np
import pytest

import explain
from explain.core.errors import UsageError
from explain.core.options import OPTIONS
from explain.engine.api import plan
from explain.engine.keywords import takes

# keyword type -> (a keyword of that type, wrong values): each row's values fail its test
WRONG = {
    "ids": ("tokens", [32, [1.5, 2], {"a": 1}, [[1, 2], 3.0]]),
    "texts": ("text", [3, [1, 2], b"the cat", ("a", None)]),
    "int": ("d_model", ["8", 8.5, True, [8]]),
    "float": ("lr", ["0.1", True, [0.1]]),
    "choice": ("normalize", [3, ["sum"]]),
    "bool": ("causal", ["yes", 1, 0.0]),
    "flag": ("trained", ["no", 1, "True"]),
    "text": ("layer_types", [5, ["full"]]),
    "path": ("checkpoint", [5, ["folder"], 3.0]),
    "array or path": ("embeddings", [5, {"x": 1}]),
    "weights": ("weights", [5, [1, 2], True]),
    "sampling": ("sampling", [5, {"max_new_tokens": 2}]),
    "callable": ("on_tensor", [5, "print"]),
}


@pytest.mark.parametrize("kind", list(WRONG))
def test_a_wrong_type_is_one_usage_error_naming_the_keyword(kind: str) -> None:
    name, values = WRONG[kind]
    for value in values:
        options = {name: value}
        if name in ("d_model", "causal"):
            options["random_weights"] = True  # a size beside the trained model is refused first otherwise
        calls = [explain.run] + ([plan] if name != "on_tensor" else [])
        for call in calls:
            with pytest.raises(UsageError) as caught:
                call("llama" if name == "layer_types" else "gpt", **options)
            message = str(caught.value)
            assert message.startswith(f"{name}= takes ") and message.endswith(f"not {value!r}"), message
            assert "\n" not in message


@pytest.mark.parametrize(("name", "value"), [("greedy", "yes"), ("ignore_eos", 1), ("model", 5), ("sampling", 2)])
def test_generate_checks_its_own_keywords(name: str, value: object) -> None:
    options = {"max_new_tokens": 2, name: value} if name != "model" else {"max_new_tokens": 2}
    with pytest.raises(UsageError, match=f"^{name}= takes .*, not {value!r}$"):
        explain.generate(value if name == "model" else "gpt", **options)


def test_the_model_name_is_checked_for_its_type_too() -> None:
    with pytest.raises(UsageError, match="^model= takes a model's name such as 'gpt', not 5$"):
        explain.run(5)  # type: ignore[arg-type]


def test_every_option_has_a_rule() -> None:
    assert [o.name for o in OPTIONS if takes(o.name) is None] == []


def test_values_of_the_right_type_pass() -> None:
    ids = np.array([3, 1, 4])  # numpy's ints are whole numbers (the old code raised a TypeError on them)
    assert plan("gpt", tokens=ids)["tokens"].shape == (1, 3)
    assert plan("gpt", tokens=np.array([[3, 1], [4, 1]]))["tokens"].shape == (2, 2)
    assert plan("gpt", text=("the cat", "a dog"))["tokens"].shape == (2, 2)
    assert explain.run("attention", embeddings=[[1.0, 0.0], [0.0, 1.0]]).config.d_model == 2
