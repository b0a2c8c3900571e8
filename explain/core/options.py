"""The run options, each defined once: its name, flag, type, range, default, help, form label and the models
that use it.

Everything that lists options is generated from :data:`OPTIONS`: the click options of every model-taking
command (:mod:`explain.commands.options`), the re-run form's fields, the keys a tutorial's ``[options]`` may
hold, the dimensions the export summary prints, :class:`explain.core.config.Config`'s defaults and its range checks,
and the flags named in error messages. This module imports nothing, so every layer may read it.

``group`` says what an option sets: ``"input"`` (what the model reads), ``"weights"`` (where the parameters come
from), ``"config"`` (a field of :class:`~explain.core.config.Config`) or ``"backward"`` (the backward pass recorded
after the forward steps, :mod:`explain.engine.backward`). Which models accept an option is asked of their capabilities
(:data:`explain.core.registry.CAPABILITIES`), never listed by name: ``needs`` is the capability a model must have
(``""``: every model), ``lacks`` one it must not have. ``default`` is the value when the option is not given;
``None`` means "derived" and ``derived`` says from what (a model's own defaults in :mod:`explain.core.registry`
override ``default``). ``affects`` narrows the accepting models to those whose steps the option changes
(``--d-ff`` is accepted by every model, but only the models with ``blocks`` read it); ``uses`` names what a command
must do to take it (:mod:`explain.core.takes`: the lens records no backward pass, so it takes no ``--lr``). A help text says
``{models}`` where it names the models that accept it (:func:`explain.core.registry.option_help` fills it in).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from explain.core.limits import (
    MAX_CONTEXT,
    MAX_EXPERTS,
    MAX_HEADS,
    MAX_LAYERS,
    MAX_SEED,
    MAX_VOCAB,
    MAX_WIDTH,
    check_max,
    parse_whole,
)


class Capable(Protocol):
    """What an option asks of a model (an :class:`explain.core.registry.Model`): its capabilities."""

    caps: frozenset[str]


@dataclass(frozen=True)
class Option:
    """One run option."""

    name: str  # keyword of explain.run and field of Config (config options)
    flag: str  # the CLI flag, "--heads"
    type: str  # "int", "choice", "bool" (a model switch), "text", "path", "ids", "flag" (on/off), "float"
    help: str
    group: str = "config"  # "input", "weights" or "config"
    default: object = None
    derived: str = ""  # what a default of None means: "d_model / heads"
    min: int | None = None
    max: int | None = None
    choices: tuple[str, ...] = ()
    needs: str = ""  # the capability a model needs to accept it (others refuse it); "" = every model
    lacks: str = ""  # a capability that makes a model refuse it ("loss": only models without a loss take it)
    affects: str = ""  # the capability of the models whose steps it changes; "" = every model that accepts it
    uses: str = ""  # what a command must do to take it (explain.core.takes: "backward", "sampling"); "" = any command
    label: str = ""  # the re-run form's label (default: the flag without dashes)
    metavar: str = ""
    multiple: bool = False  # may be given several times (a gpt batch of texts)
    tutorial: bool = True  # may be set in a tutorial's [options]
    summary: bool = False  # printed in the export's run summary (the dimensions)
    shown: bool = False  # the re-run form fills it in from the run; others show the run's value as a hint
    off_flag: str = ""  # a bool's flag that turns it off ("--no-qkv-bias"); none: the flag only turns it on

    @property
    def form_label(self) -> str:
        return self.label or self.flag.lstrip("-")

    def used_by(self, model: Capable) -> bool:
        """The model accepts this option."""
        return (not self.needs or self.needs in model.caps) and not (self.lacks and self.lacks in model.caps)

    def changes(self, model: Capable) -> bool:
        """The option changes this model's steps (a form may grey it out for the others)."""
        return self.used_by(model) and (not self.affects or self.affects in model.caps)


MODEL_SIZE_MIN = 1
SEED_MAX = MAX_SEED

OPTIONS: tuple[Option, ...] = (
    Option("text", "--text", "text", group="input", multiple=True, metavar="TEXT",
           help="Input text (word-level tokenizer; with --checkpoint, its tokenizer.json). Repeat for a batch; "
                "shorter texts are right-padded with <pad>."),
    Option("target", "--target", "text", group="input", metavar="TEXT", needs="target", multiple=True,
           help="Target text for the decoder of {models} (repeat: one per --text)."),
    Option("tokens", "--tokens", "ids", group="input", metavar="IDS", multiple=True,
           help="Token ids instead of text, e.g. 3,1,4. Repeat for a batch; shorter ones are right-padded."),
    Option("embeddings", "--embeddings", "path", group="input", metavar="FILE",
           needs="embeddings",
           help="Input embeddings (.npy, .npz, .json, .csv), tokens × d_model (or batch × tokens × d_model)."),
    Option("tokenizer_steps", "--tokenizer-steps", "flag", group="input", label="tokenizer steps", uses="steps",
           help="Record how --text became ids first (the group 'tokenizer'): normalisation, the pre-tokenizer's "
                "pieces and their bytes, each BPE merge with its rank, the ids."),
    Option("weights", "--weights", "path", group="weights", metavar="FILE", tutorial=False,
           help="Parameters from an .npz (see 'explain params')."),
    Option("checkpoint", "--checkpoint", "path", group="weights", metavar="PATH", needs="checkpoint",
           help="Pretrained weights for {models}: a Hugging Face folder (GPT-2, Llama, Mistral, Qwen2, Gemma 3), a "
                "hub id in the local Hugging Face cache, a GGUF file (llama, gemma3), or a model of 'explain "
                "models' (smollm2, …: fetched on first use); MODEL may then be left out. A tutorial names a model "
                "of 'explain models'."),
    Option("trained", "--trained", "flag", group="weights", needs="trains",
           help="Open the small GPT that ships with explain (explain train's documented run: the tutorials' "
                "sentences and copying); its config sets every size. gpt opens it by default, unless "
                "--random-weights, --weights, --checkpoint or a size option is given. With --weights FILE: its words "
                "and sizes, FILE's parameters (what 'explain params gpt' wrote)."),
    Option("random_weights", "--random-weights", "flag", group="weights",
           help="Initialise the weights at random from --seed instead (gpt's default is the trained model; the "
                "other models have only random weights)."),
    Option("d_model", "--d-model", "int", default=8, min=MODEL_SIZE_MIN, max=MAX_WIDTH, summary=True, shown=True,
           label="d_model", help="Width of the residual stream / embeddings."),
    Option("n_heads", "--heads", "int", default=2, min=MODEL_SIZE_MIN, max=MAX_HEADS, summary=True, shown=True, affects="heads",
           help="Number of attention heads."),
    Option("d_head", "--d-head", "int", derived="d_model / heads", min=MODEL_SIZE_MIN, max=MAX_WIDTH, summary=True,
           affects="weights",
           label="d_head", help="Width of each head (default d_model / heads)."),
    Option("d_ff", "--d-ff", "int", derived="4·d_model", min=MODEL_SIZE_MIN, max=MAX_WIDTH, summary=True, label="d_ff", affects="blocks",
           help="Width of the feed-forward layer (default 4·d_model)."),
    Option("n_kv_heads", "--kv-heads", "int", derived="heads", min=MODEL_SIZE_MIN, max=MAX_HEADS, summary=True,
           needs="gqa", label="kv heads",
           help="{models} only: key/value heads, each shared by heads / kv-heads query heads (default: heads)."),
    Option("rope_theta", "--rope-theta", "float", default=10000.0, metavar="THETA", needs="rope", label="rope θ",
           help="{models} only: the base θ of the rotary embedding's frequencies (default 10000; Gemma's full "
                "layers 1000000)."),
    Option("rope_layout", "--rope-layout", "choice", choices=("half", "interleaved"), needs="rope",
           derived="half (interleaved for --attention mla)", label="rope layout",
           help="{models} only: which dimensions a rotation pairs: half, i with i + d/2 (Hugging Face's "
                "rotate-half), or interleaved, 2i with 2i + 1 (Meta's original Llama, GPT-J, DeepSeek, and the "
                "q/k rows a GGUF file stores). A checkpoint's q/k rows are reordered to match, so it computes the "
                "same model either way."),
    Option("attention", "--attention", "choice", default="mha", choices=("mha", "mla"), needs="mla",
           help="{models} only: mha (multi-head attention: a key and a value per head) or mla (DeepSeek-V2/V3's "
                "multi-head latent attention: keys and values from one small latent, plus one shared rotary key)."),
    Option("q_lora_rank", "--q-lora-rank", "int", derived="d_model / 2", min=MODEL_SIZE_MIN, max=MAX_WIDTH,
           needs="mla", label="q rank", summary=True,
           help="--attention mla only: width of the queries' low-rank bottleneck (DeepSeek-V3: 1536)."),
    Option("kv_lora_rank", "--kv-lora-rank", "int", derived="d_model / 2", min=MODEL_SIZE_MIN, max=MAX_WIDTH,
           needs="mla", label="kv rank", summary=True,
           help="--attention mla only: width of the latent that keys and values come from, what the cache holds "
                "(DeepSeek-V3: 512)."),
    Option("qk_nope_head_dim", "--qk-nope-head-dim", "int", derived="d_head − rope width", min=MODEL_SIZE_MIN,
           max=MAX_WIDTH, needs="mla", label="qk nope", summary=True,
           help="--attention mla only: the part of each query/key head with no rotation (DeepSeek-V3: 128)."),
    Option("qk_rope_head_dim", "--qk-rope-head-dim", "int", derived="2·⌊d_head / 6⌋, at least 2",
           min=MODEL_SIZE_MIN, max=MAX_WIDTH, needs="mla", label="qk rope", summary=True,
           help="--attention mla only: the rotated part of each query/key head, one rotary key shared by every "
                "head (even; DeepSeek-V3: 64)."),
    Option("v_head_dim", "--v-head-dim", "int", derived="d_head", min=MODEL_SIZE_MIN, max=MAX_WIDTH, needs="mla",
           label="v width", summary=True,
           help="--attention mla only: width of each head's value (DeepSeek-V3: 128)."),
    # local and global attention (explain.core.window), named after the Hugging Face config keys
    Option("sliding_window", "--window", "int", derived="none: every earlier key", min=1, max=MAX_CONTEXT,
           needs="window", metavar="N", label="window",
           help="{models} only: sliding-window attention, a query sees only the N most recent keys, itself "
                "included (sliding_window; Mistral 4096, Gemma 3 512), in the layers --layer-types makes sliding."),
    Option("layer_types", "--layer-types", "text", derived="Gemma: a full layer every 6th, the last full when "
           "fewer; Llama: all sliding with --window", needs="window", metavar="KINDS", label="layer types",
           help="{models} only, with --window: each layer's attention, sliding or full, comma-separated "
                "(layer_types). Default: Gemma's five sliding layers then one full, cut to --layers (the last layer "
                "full when there are fewer than six); the Llama family: every layer sliding."),
    Option("rope_local_base_freq", "--rope-local-base-freq", "float", derived="--rope-theta", metavar="THETA",
           needs="window", label="local rope θ",
           help="{models} only: the rotary base θ of the sliding layers (rope_local_base_freq; Gemma 3 10000, its "
                "full layers' --rope-theta 1000000; default: --rope-theta)."),
    Option("query_pre_attn_scalar", "--query-pre-attn-scalar", "int", derived="d_head", min=MODEL_SIZE_MIN,
           max=MAX_WIDTH, needs="attn_scalar", metavar="N", label="attn scalar",
           help="{models} only: the scores are divided by √N, not by √d_head (query_pre_attn_scalar; default "
                "d_head; Gemma 3 27B: 168 with heads of 128)."),
    Option("n_layers", "--layers", "int", default=2, min=MODEL_SIZE_MIN, max=MAX_LAYERS, summary=True, shown=True, affects="blocks",
           help="Number of blocks."),
    Option("d_vocab", "--vocab", "int", derived="what the input needs", min=MODEL_SIZE_MIN, max=MAX_VOCAB, summary=True,
           help="Vocabulary size (default: what the input needs)."),
    Option("n_ctx", "--context", "int", default=32, min=MODEL_SIZE_MIN, max=MAX_CONTEXT, summary=True,
           help="Context length (default 32)."),
    Option("seed", "--seed", "int", default=0, min=0, max=SEED_MAX, summary=True, shown=True, affects="weights",
           help="Seed of random weights (default 0): GPT-2's N(0, 0.02²) for the models initialised as GPT-2 "
                "is, torch's nn.Linear/nn.Embedding defaults for the others. On generate it seeds only the draws."),
    Option("normalize", "--normalize", "choice", default="softmax", choices=("softmax", "sum"), needs="normalize",
           help="{models} only: softmax, or divide by the row sum."),
    Option("attention_kernel", "--attention-kernel", "choice", default="plain", choices=("plain", "tiled"),
           needs="sdpa", label="kernel",
           help="plain builds the whole score matrix; tiled is the online softmax of FlashAttention, "
                "--tile keys at a time with a running max, rescale factors, a running sum and an accumulator."),
    Option("attention_tile", "--tile", "int", default=2, min=1, max=MAX_CONTEXT, needs="sdpa", metavar="N",
           label="tile", help="With --attention-kernel tiled: keys per tile (default 2; the last tile may be "
                              "shorter)."),
    Option("backward", "--backward", "flag", group="backward", uses="backward",
           help="Also record the backward pass: every gradient, one operation at a time, from the loss back."),
    Option("output_target", "--output-target", "path", group="backward", metavar="FILE", lacks="loss", uses="backward",
           help="Backward of a model without a loss: mean-squared error to this target (the output's shape)."),
    Option("grad_output", "--grad-output", "path", group="backward", metavar="FILE", lacks="loss", uses="backward",
           help="Backward of a model without a loss: start from this gradient of the output instead."),
    Option("lr", "--lr", "float", group="backward", metavar="RATE", uses="optimizer",
           help="Take one SGD step with this learning rate; record the updates and the loss after it."),
    Option("optimizer", "--optimizer", "choice", group="backward", choices=("sgd", "adamw"), uses="optimizer",
           help="The step --lr takes: sgd (W − lr·∂L/∂W, the default), or adamw (one AdamW step from a fresh "
                "state: m, v, their bias corrections; β 0.9, 0.999, weight decay 0.1 on the weight matrices)."),
    Option("causal", "--causal", "bool", default=False, needs="causal_switch",
           help="Add the causal mask (as the book's MultiHeadAttention, §3.6)."),
    Option("qkv_bias", "--qkv-bias", "bool", default=True, off_flag="--no-qkv-bias", needs="qkv", label="qkv bias",
           help="Biases on the Q, K, V projections (the book's qkv_bias=False is --no-qkv-bias; Qwen2's q/k/v "
                "biases are --qkv-bias on a Llama block, whose default is off)."),
    Option("d_out", "--d-out", "int", derived="d_model", min=MODEL_SIZE_MIN, max=MAX_WIDTH, needs="d_out", label="d_out",
           help="{models} only: width of the output projection W_O (the book's d_out; default d_model)."),
    Option("tie_embeddings", "--tie-embeddings", "bool", default=True, off_flag="--untie-embeddings",
           needs="tie_switch", label="tied W_E",
           help="One matrix for the embeddings and the output layer (the paper's §3.4; on by default)."),
    # a mixture of experts in the MLP (explain.models.moe), named after the Hugging Face config keys
    Option("n_experts", "--experts", "int", min=0, max=MAX_EXPERTS, derived="none: a dense MLP", needs="moe", metavar="N ≥ 1",
           summary=True, label="experts",
           help="{models} only: a mixture of experts in place of the MLP, with N routed experts "
                "(num_local_experts; Mixtral 8). Without it the MLP is dense."),
    Option("experts_per_token", "--experts-per-token", "int", default=2, min=1, max=MAX_EXPERTS, needs="moe",
           label="experts per token",
           help="{models} only, with --experts: how many experts each token goes to (num_experts_per_tok; "
                "default 2)."),
    Option("n_shared_experts", "--shared-experts", "int", default=0, min=0, max=MAX_EXPERTS, needs="moe",
           label="shared experts",
           help="{models} only, with --experts: experts every token uses besides its routed ones, one SwiGLU MLP "
                "of N × the expert width (n_shared_experts; Qwen2-MoE and DeepSeek-V3 have 1)."),
    Option("shared_d_ff", "--shared-expert-intermediate-size", "int", derived="shared experts × the expert width",
           min=MODEL_SIZE_MIN, max=MAX_WIDTH, needs="moe", label="shared width",
           help="{models} only: the shared expert's width (shared_expert_intermediate_size, Qwen2-MoE's; default "
                "--shared-experts × --moe-intermediate-size)."),
    Option("shared_expert_gate", "--shared-expert-gate", "bool", default=False, off_flag="--no-shared-expert-gate",
           needs="moe", label="shared gate",
           help="{models} only: scale the shared expert by σ(x·w) per token (Qwen2-MoE's shared_expert_gate); "
                "off by default: added as it is (DeepSeek)."),
    Option("moe_d_ff", "--moe-intermediate-size", "int", derived="d_ff", min=MODEL_SIZE_MIN, max=MAX_WIDTH,
           needs="moe", label="expert width",
           help="{models} only: each routed expert's width (moe_intermediate_size; default --d-ff, as Mixtral's "
                "intermediate_size). --d-ff stays the dense layers' width."),
    Option("norm_topk_prob", "--norm-topk-prob", "bool", default=True, off_flag="--no-norm-topk-prob",
           needs="moe", label="renormalise",
           help="{models} only: divide the chosen experts' weights by their sum (norm_topk_prob; on: Mixtral, "
                "DeepSeek-V3; Qwen2-MoE's default is off)."),
    Option("router", "--router", "choice", default="softmax", choices=("softmax", "sigmoid"), needs="moe",
           help="{models} only: the router's scores, a softmax over the experts (Mixtral, Qwen) or a sigmoid "
                "each, ranked with a per-expert choosing bias (DeepSeek-V3)."),
    Option("n_group", "--n-group", "int", default=1, min=1, max=MAX_EXPERTS, needs="moe", label="groups",
           help="{models} only: the experts in N groups, each scored by the sum of its 2 best scores "
                "(n_group; DeepSeek-V3 8; default 1, no groups)."),
    Option("topk_group", "--topk-group", "int", default=1, min=1, max=MAX_EXPERTS, needs="moe", label="groups kept",
           help="{models} only, with --n-group: how many of the best groups a token may choose from (topk_group; "
                "DeepSeek-V3 4)."),
    Option("routed_scaling_factor", "--routed-scaling-factor", "float", default=1.0, metavar="F", needs="moe",
           label="routed scale",
           help="{models} only: multiply the kept weights by F (routed_scaling_factor; DeepSeek-V3 2.5)."),
    Option("first_k_dense_replace", "--first-k-dense-replace", "int", default=0, min=0, max=MAX_LAYERS, needs="moe",
           label="dense first layers",
           help="{models} only, with --experts: the first N layers keep a dense MLP (first_k_dense_replace; "
                "DeepSeek-V3 3)."),
)

OPTION: dict[str, Option] = {o.name: o for o in OPTIONS}

# How ``explain generate`` chooses its tokens (explain.core.sampling.make_sampling checks the values, so that Python,
# the CLI and a tutorial's [generate] table get the same messages). Not run options: only 'generate' takes them.
GENERATION: tuple[Option, ...] = (
    Option("max_new_tokens", "--max-new-tokens", "int", group="generate", default=5, metavar="N", uses="generation",
           needs="generates", help="How many tokens to append (default 5)."),
    Option("temperature", "--temperature", "float", group="generate", default=1.0, metavar="T", uses="sampling",
           needs="generates",
           help="Divide the logits by T before softmax (default 1; 0 is greedy)."),
    Option("top_k", "--top-k", "int", group="generate", metavar="K", needs="generates", uses="sampling",
           help="Draw only among the K most probable tokens."),
    Option("top_p", "--top-p", "float", group="generate", metavar="P", needs="generates", uses="sampling",
           help="Draw only among the most probable tokens holding P of the probability (0 < P ≤ 1)."),
    Option("greedy", "--greedy", "flag", group="generate", needs="generates", uses="sampling",
           help="Take the most probable token each time (no sampling)."),
    Option("ignore_eos", "--ignore-eos", "flag", group="generate", needs="generates", tutorial=False, uses="generation",
           help="Go on after the end-of-text token (by default it ends the text)."),
)


def of_group(group: str) -> tuple[Option, ...]:
    return tuple(o for o in OPTIONS if o.group == group)


def names(group: str | None = None) -> tuple[str, ...]:
    """Option names, all or of one group, in definition order."""
    return tuple(o.name for o in OPTIONS if group is None or o.group == group)


def flag(name: str, value: object = True) -> str:
    """The CLI flag of an option (``n_heads`` → ``--heads``; ``qkv_bias`` False → ``--no-qkv-bias``); a Config
    field with no flag as itself."""
    if name not in OPTION:
        return name
    o = OPTION[name]
    return o.off_flag if value is False and o.off_flag else o.flag


def default(name: str) -> object:
    return OPTION[name].default


def check_cap(name: str, value: int, flag: str | None = None) -> None:
    """Refuse ``value`` above the maximum of the option ``name`` (``n_layers``, ``d_model``, …: its ``max``
    from :mod:`explain.core.limits`), naming the option's flag and the cap."""
    o = OPTION.get(name)
    if o is not None and o.max is not None:
        check_max(value, o.max, flag or o.flag)


def parse_option(name: str, raw: str) -> int:
    """A whole-number option typed as text (the TUI's re-run form): ASCII digits, at most MAX_DIGITS of them,
    at least 1 (0 for the seed) and at most the cap, or a UsageError that names the field and the fix."""
    o = OPTION.get(name)
    label = o.flag.lstrip("-") if o is not None else name
    n = parse_whole(raw, label, minimum=o.min if o is not None and o.min is not None else 1)
    check_cap(name, n, flag=label)
    return n
