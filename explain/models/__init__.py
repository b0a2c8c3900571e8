"""The model registry: one :class:`Model` entry per model, in the order a course meets them.

An entry says everything the rest of the program needs to know about a model: its one-line summary, the
function in :mod:`explain.models.zoo` that records its steps, its readable default sizes and input text,
whether it takes a batch, which loss it ends in and whether it has a fixed number of heads. Which options a
model uses is said by each option (:mod:`explain.options`). Nothing outside this registry branches on a
model's name.

This module imports no numpy and not the model code itself (``explain.api`` looks the function up in
:mod:`explain.models.zoo`), so the CLI can list the models at click's speed and :mod:`explain.config` can read
the per-model defaults without an import cycle.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from explain.options import OPTIONS, Option


@dataclass(frozen=True)
class Model:
    """One model of the zoo."""

    name: str
    summary: str
    defaults: dict[str, Any]  # readable sizes: small enough to print, big enough to be interesting
    text: str  # the input text when none is given
    batched: bool = False  # its token ids always carry a batch axis (other models: when given several texts)
    loss: str | None = None  # the loss it ends in, if any
    heads: int | None = None  # a fixed number of heads (the single-head models)
    target: str | None = None  # the decoder's text when none is given (encoder-decoder models)
    forward: str = ""  # the function of explain.models.zoo that records it (default: its name)
    generates: bool = False  # it can go on writing, one token at a time (explain.models.generate)
    masking: str = ""  # why it takes no --causal: its own masking, said in a message ("is always causal")

    @property
    def function(self) -> str:
        return self.forward or self.name

    @property
    def options(self) -> tuple[str, ...]:
        """The names of the options this model uses."""
        return tuple(o.name for o in OPTIONS if o.used_by(self.name))

    def uses(self, option: str) -> bool:
        return option in self.options


_SMALL = dict(d_model=4, n_heads=1, n_layers=1)
_MULTI = dict(d_model=8, n_heads=2, n_layers=1)
_DEEP = dict(d_model=8, n_heads=2, n_layers=2)
NEXT_TOKEN = "next-token cross-entropy"
_ALWAYS = "is always causal"

MODELS: dict[str, Model] = {m.name: m for m in (
    Model("simple", "self-attention with no trainable weights: softmax(X·Xᵀ)·X", _SMALL,
          "Your journey starts with one step", heads=1, masking="has no mask; use 'causal' for masked attention"),
    Model("attention", "single-head scaled dot-product self-attention", _SMALL, "Thinking Machines", heads=1),
    Model("causal", "single-head attention with the causal mask", _SMALL, "Your journey starts with one step",
          heads=1, masking=_ALWAYS),
    Model("multihead", "multi-head self-attention with an output projection", _MULTI, "The cat sat on the mat"),
    Model("synthesizer", "dense synthesizer attention (CS224N a5): logits from X alone", _MULTI,
          "The cat sat on the mat", masking=_ALWAYS),
    Model("encoder", "a stack of original-transformer encoder blocks (post-LN)", _DEEP, "Thinking Machines",
          masking="is unmasked by design (each token sees the whole input); use 'transformer', whose decoder is "
                  "causal"),
    Model("transformer", "the full encoder-decoder of Attention Is All You Need", _DEEP, "Thinking Machines",
          loss=NEXT_TOKEN, target="Denkende Maschinen", masking="masks its decoder already and never its encoder"),
    Model("gpt", "a decoder-only GPT: pre-LN blocks, GELU MLP, next-token loss", _DEEP, "The cat is happy",
          batched=True, loss=NEXT_TOKEN, generates=True, masking=_ALWAYS),
)}



def option_default(o: Option) -> str:
    """An option's default as the docs say it: the models' own sizes where they differ, else the option's."""
    if o.default is None:
        return o.derived or "—"
    values = sorted({m.defaults.get(o.name, o.default) for m in MODELS.values() if o.used_by(m.name)}, key=str)
    values = ["on" if v is True else "off" if v is False else v for v in values]
    return " or ".join(f"`{v}`" for v in values) + (" (per model)" if len(values) > 1 else "")


def options_table() -> str:
    """The run options as a Markdown table, for the README (a test keeps the README's copy current)."""
    rows = ["| option | value | default | models | what it sets |", "| --- | --- | --- | --- | --- |"]
    for o in OPTIONS:
        value = "/".join(o.choices) if o.choices else (o.metavar or ("on/off" if o.type == "flag" else f"N ≥ {o.min}"))
        if o.type == "bool":
            value = f"`{o.off_flag}` turns it off" if o.off_flag else "a flag"
        users = [m for m in MODELS if o.changes(m)]
        models = "all" if len(users) == len(MODELS) else ", ".join(f"`{m}`" for m in users)
        rows.append(f"| `{o.flag}` | {value} | {option_default(o)} | {models} | {o.help} |")
    return "\n".join(rows)


__all__ = ["MODELS", "Model", "NEXT_TOKEN", "options_table"]
