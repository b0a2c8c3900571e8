"""The model registry: one :class:`Model` entry per model, in the order a course meets them, and what each can do.

An entry says everything the rest of the program needs to know about a model: its one-line summary, the
function that records its steps, its own option defaults and input text, and its **capabilities** (the words
of :data:`CAPABILITIES`: blocks, Q/K/V projections, heads, a loss, generation, ...). Options ask for capabilities
(:attr:`explain.core.options.Option.needs`), never for model names, and nothing outside this registry and the
notation table branches on a model's name.

This module imports no numpy and not the model code (:func:`forward_of` imports it when a run needs it), so the
CLI lists the models at click's speed and :mod:`explain.core.config` reads the per-model defaults with no import
running back up.

How to add a model (three places, nothing else):

1. **Its forward**, a short nanoGPT-like function ``(rec, cfg, inp) -> None`` that records its steps with the
   layers of :mod:`explain.models.layers`, in :mod:`explain.models.zoo` or a module of its own.
2. **One registry line** in :data:`MODELS` below::

       Model("llama", "a decoder-only Llama: RMSNorm, SwiGLU, rotary positions", dict(_DEEP, qkv_bias=False),
             "The cat is happy", caps="weights qkv heads blocks loss generates batched pre_norm checkpoint",
             loss=NEXT_TOKEN, masking=_ALWAYS, forward="explain.models.llama:llama",
             step="explain.models.llama:llama_step"),

   ``defaults`` are its own option defaults (sizes, and switches such as ``qkv_bias=False``: the option's
   default for this model); ``caps`` the capabilities it has, from :data:`CAPABILITIES` (``loss`` and
   ``target`` follow from ``loss=`` and ``target=``); ``forward`` the function as ``"module:function"``
   (default: ``explain.models.zoo:<name>``); ``step``, for a model that generates, its decode step beside its
   forward (``(rec, cfg, token, pos, caches) -> logits``: one new position on the
   :class:`~explain.models.kvcache.KVCache`). ``masking`` says, in a message, why it takes no ``--causal``.
3. **Its notation rows** (symbols and narration of its own steps) under its name in
   :data:`explain.models.notation.OWN`; steps with no row of their own use the shared rows.

A test that registers a toy model this way (``tests/models/test_toy_model.py``) runs it through ``run --json``,
``shapes``, export and the TUI. A new capability is a word added to :data:`CAPABILITIES` with what it means.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from importlib import import_module
from typing import Any

from explain.core.errors import UsageError
from explain.core.options import OPTIONS, Option

# What a model can do or has; options and commands ask for these words (Option.needs / lacks / affects).
CAPABILITIES: dict[str, str] = {
    "weights": "trainable parameters, initialised from --seed (all but the weightless 'softmax(X·Xᵀ)·X')",
    "qkv": "Q, K and V projections (--qkv-bias)",
    "heads": "a number of attention heads the user chooses (--heads)",
    "blocks": "a stack of blocks with a feed-forward layer (--layers, --d-ff)",
    "loss": "ends in a loss (set by loss=); models without one take an objective for --backward",
    "target": "an encoder-decoder's decoder text (set by target=; --target)",
    "generates": "writes on, one token at a time (explain generate)",
    "embeddings": "takes given input embeddings instead of token ids (--embeddings)",
    "batched": "its token ids always carry a batch axis (other models: when given several texts)",
    "checkpoint": "loads a Hugging Face checkpoint folder (--checkpoint)",
    "pre_norm": "a pre-norm residual stream: blocks.N.resid_pre/mid/post, ln_final before the unembedding",
    "normalize": "normalises its scores by softmax or by the row sum (--normalize)",
    "causal_switch": "takes the causal mask as an option (--causal)",
    "d_out": "an output projection of free width, as a stand-alone attention layer (--d-out)",
    "tie_switch": "its embeddings may be tied or untied (--tie-embeddings/--untie-embeddings)",
    "gpt2_init": "initialised as GPT-2 (weights and embeddings N(0, 0.02²), projections into the residual stream "
                 "÷√(2·n_layers), biases 0) instead of torch's nn.Linear/nn.Embedding defaults",
    "gqa": "grouped-query attention: key/value heads shared by groups of query heads (--kv-heads)",
    "rope": "rotary position embeddings on queries and keys (--rope-theta)",
    "sdpa": "scaled dot-product attention, softmax(Q·Kᵀ/√d_k)·V, which the tiled kernel can compute "
            "(--attention-kernel, --tile)",
    "moe": "a mixture of experts may replace the MLP of any block (--experts, the router's options)",
    "mla": "an attention kind of its own choosing: multi-head, or DeepSeek's latent attention (--attention mla)",
    "window": "sliding-window attention in the layers chosen (--window, --layer-types, --rope-local-base-freq)",
    "attn_scalar": "scores scaled by query_pre_attn_scalar^-½ instead of d_head^-½ (--query-pre-attn-scalar)",
    "trains": "explain train trains it (its own untraced kernels) and saves a GPT-2 folder; a trained one ships "
              "with explain (--trained)",
}


@dataclass(frozen=True)
class Model:
    """One model of the zoo."""

    name: str
    summary: str
    defaults: dict[str, Any]  # its own option defaults: readable sizes, small enough to print; model switches
    text: str | tuple[str, ...]  # the input text when none is given (several: a batch)
    caps: frozenset[str] | str = field(default=frozenset())  # capabilities, as a set or space-separated words
    loss: str | None = None  # the loss it ends in, if any
    heads: int | None = None  # a fixed number of heads (the single-head models)
    target: str | None = None  # the decoder's text when none is given (encoder-decoder models)
    forward: str = ""  # "module:function" that records its steps (default explain.models.zoo:<name>)
    step: str = ""  # "module:function": a generation's one-position forward on the KVCache (models that generate)
    masking: str = ""  # why it takes no --causal: its own masking, said in a message ("is always causal")

    def __post_init__(self) -> None:
        words = set(self.caps.split() if isinstance(self.caps, str) else self.caps)
        words |= {"loss"} if self.loss else set()
        words |= {"target"} if self.target is not None else set()
        unknown = words - set(CAPABILITIES)
        if unknown:
            raise ValueError(f"model {self.name!r}: unknown capabilities {sorted(unknown)}; known: {list(CAPABILITIES)}")
        object.__setattr__(self, "caps", frozenset(words))
        if ("generates" in words) != bool(self.step):
            raise ValueError(f"model {self.name!r}: a model that generates names its decode step, and only it")

    def can(self, capability: str) -> bool:
        """The model has this capability (a word of :data:`CAPABILITIES`)."""
        assert capability in CAPABILITIES, capability
        return capability in self.caps

    @property
    def generates(self) -> bool:
        return "generates" in self.caps

    @property
    def batched(self) -> bool:
        return "batched" in self.caps

    @property
    def texts(self) -> list[str]:
        """The input texts when none is given."""
        return [self.text] if isinstance(self.text, str) else list(self.text)

    @property
    def function(self) -> str:
        """The forward as ``module:function``."""
        return self.forward or f"explain.models.zoo:{self.name}"

    @property
    def options(self) -> tuple[str, ...]:
        """The names of the options this model uses."""
        return tuple(o.name for o in OPTIONS if o.used_by(self))

    def uses(self, option: str) -> bool:
        return option in self.options


_SMALL = dict(d_model=4, n_heads=1, n_layers=1)
_MULTI = dict(d_model=8, n_heads=2, n_layers=1)
_DEEP = dict(d_model=8, n_heads=2, n_layers=2)
NEXT_TOKEN = "next-token cross-entropy"
COSINE = "1 − cos(text 1, text 2) of the sentence embeddings"
_ALWAYS = "is always causal"

MODELS: dict[str, Model] = {m.name: m for m in (
    Model("simple", "self-attention with no trainable weights: softmax(X·Xᵀ)·X", _SMALL,
          "Your journey starts with one step", "embeddings normalize", heads=1,
          masking="has no mask; use 'causal' for masked attention"),
    Model("attention", "single-head scaled dot-product self-attention", _SMALL, "Thinking Machines",
          "weights qkv embeddings causal_switch sdpa", heads=1),
    Model("causal", "single-head attention with the causal mask", _SMALL, "Your journey starts with one step",
          "weights qkv embeddings sdpa", heads=1, masking=_ALWAYS),
    Model("multihead", "multi-head self-attention with an output projection", _MULTI, "The cat sat on the mat",
          "weights qkv heads embeddings causal_switch d_out sdpa"),
    Model("synthesizer", "dense synthesizer attention (CS224N a5): logits from X alone", _MULTI,
          "The cat sat on the mat", "weights heads embeddings", masking=_ALWAYS),
    Model("encoder", "a stack of original-transformer encoder blocks (post-LN)", _DEEP, "Thinking Machines",
          "weights qkv heads blocks embeddings sdpa",
          masking="is unmasked by design (each token sees the whole input); use 'transformer', whose decoder is "
                  "causal"),
    Model("transformer", "the full encoder-decoder of Attention Is All You Need", _DEEP, "Thinking Machines",
          "weights qkv heads blocks embeddings tie_switch gpt2_init sdpa", loss=NEXT_TOKEN, target="Denkende Maschinen",
          masking="masks its decoder already and never its encoder"),
    Model("gpt", "a decoder-only GPT: pre-LN blocks, GELU MLP, next-token loss", _DEEP, "The cat is happy",
          "weights qkv heads blocks generates batched checkpoint pre_norm gpt2_init trains sdpa", loss=NEXT_TOKEN, masking=_ALWAYS,
          step="explain.models.zoo:gpt_step"),
    Model("llama", "a Llama decoder: RMSNorm, rotary positions, grouped-query attention, SwiGLU, no biases",
          dict(_DEEP, n_kv_heads=1, d_ff=16, qkv_bias=False), "The cat is happy",
          "weights qkv heads blocks generates batched checkpoint pre_norm tie_switch gqa rope sdpa moe mla window",
          loss=NEXT_TOKEN, masking=_ALWAYS, forward="explain.models.llama:llama",
          step="explain.models.llama:llama_step"),
    Model("gemma", "a Gemma 3 decoder: four RMSNorms with (1 + w), QK-norm, GeGLU, local and global attention",
          dict(_DEEP, n_kv_heads=1, d_head=4, d_ff=16, sliding_window=4, sliding_window_pattern=6,
               rope_theta=1000000.0, rope_local_base_freq=10000.0, ln_eps=1e-6),
          "Once upon a time there was a cat",
          "weights heads blocks generates batched checkpoint pre_norm tie_switch gqa rope window attn_scalar sdpa",
          loss=NEXT_TOKEN, masking=_ALWAYS, forward="explain.models.gemma:gemma", step="explain.models.gemma:gemma_step"),
    Model("bert", "a BERT encoder and its sentence embedding: why two texts are similar, word pair by word pair",
          dict(_DEEP, ln_eps=1e-12), ("A man is eating food.", "A man is eating a piece of bread."),
          "weights qkv heads blocks batched checkpoint sdpa", loss=COSINE,
          masking="is unmasked by design (each token sees the whole text; only <pad> keys are hidden)",
          forward="explain.models.bert:bert"),
)}


DEFAULT_MODEL = "gpt"  # the model of a Config made without one, and of `explain` with no tutorial to open


def check_model_name(model: str) -> Model:
    """The entry of the model a user named, or a UsageError listing the models and the nearest one: a run checks
    its name here once (:func:`explain.engine.ask.make_request`) and carries the entry from then on."""
    if model in MODELS:
        return MODELS[model]
    near = difflib.get_close_matches(model, MODELS, n=1)
    hint = f"did you mean '{near[0]}'? " if near else ""
    raise UsageError(f"unknown model '{model}'; {hint}choose one of: {', '.join(MODELS)}")


def entry(name: str) -> Model:
    """The entry of a name already checked (a config's: :attr:`explain.core.config.Config.spec`; a name the TUI's
    form offers from :data:`MODELS`): nothing outside this module indexes :data:`MODELS` by a name."""
    return MODELS[name]


def forward_of(model: Model) -> Any:
    """The model's forward function, imported on first use (the registry itself imports no model code)."""
    module, _, name = model.function.partition(":")
    return getattr(import_module(module), name)


def step_of(model: Model) -> Any:
    """The model's decode step ``(rec, cfg, token, pos, caches) -> logits``: the forward of one new position on
    the key/value cache, beside the model's forward (imported on first use, as :func:`forward_of`)."""
    assert model.step, f"{model.name} does not generate"
    module, _, name = model.step.partition(":")
    return getattr(import_module(module), name)


def users(o: Option) -> list[str]:
    """The names of the models that accept an option, in registry order."""
    return [m.name for m in MODELS.values() if o.used_by(m)]


def able(capability: str) -> list[str]:
    """The names of the models with a capability, in registry order."""
    return [m.name for m in MODELS.values() if m.can(capability)]


def quoted(names: list[str], joiner: str = " or ") -> str:
    """Model names as a message says them: 'a' or 'b'."""
    return joiner.join(f"'{n}'" for n in names)


def option_help(o: Option) -> str:
    """An option's help with ``{models}`` filled in: the models that accept it."""
    return o.help.replace("{models}", quoted(users(o)))


def option_default(o: Option) -> str:
    """An option's default as the docs say it: the models' own sizes where they differ, else the option's."""
    if o.default is None:  # derived, unless a model sets its own ("4·d_model; `16` for llama")
        own = [f"`{m.defaults[o.name]}` for {m.name}" for m in MODELS.values() if o.name in m.defaults]
        return "; ".join([o.derived or "—", *own])
    values = sorted({m.defaults.get(o.name, o.default) for m in MODELS.values() if o.used_by(m)}, key=str)
    values = ["on" if v is True else "off" if v is False else v for v in values]
    return " or ".join(f"`{v}`" for v in values) + (" (per model)" if len(values) > 1 else "")


def options_table() -> str:
    """The run options as a Markdown table, for the README (a test keeps the README's copy current)."""
    rows = ["| option | value | default | models | what it sets |", "| --- | --- | --- | --- | --- |"]
    for o in OPTIONS:
        value = "/".join(o.choices) if o.choices else (o.metavar or ("on/off" if o.type == "flag" else f"N ≥ {o.min}"))
        if o.type == "bool":
            value = f"`{o.off_flag}` turns it off" if o.off_flag else "a flag"
        changed = [m for m in MODELS.values() if o.changes(m)]
        models = "all" if len(changed) == len(MODELS) else ", ".join(f"`{m.name}`" for m in changed)
        rows.append(f"| `{o.flag}` | {value} | {option_default(o)} | {models} | {option_help(o)} |")
    return "\n".join(rows)


__all__ = ["CAPABILITIES", "DEFAULT_MODEL", "MODELS", "Model", "NEXT_TOKEN", "able", "check_model_name", "entry",
           "forward_of", "option_help", "options_table", "quoted", "users"]
