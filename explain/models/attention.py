"""Attention models: ``simple`` (no weights), ``attention``, ``causal``, ``multihead``, ``synthesizer``, and the
multi-head attention that the block models share.

Every operation goes through the recorder (``rec.op``), so the same code runs on arrays or on shapes. Shapes
at line end are for one sequence of T tokens; a batch adds a leading axis.
"""

from __future__ import annotations

import math

from explain.config import Config
from explain.inputs import Inputs
from explain.trace import Recorder, Ref


def linear_params(rec: Recorder, prefix: str, d_in: int, d_out: int, w: str = "W", b: str = "b",
                  axes: tuple[str, str] = ("d_in", "d_out"), bias: bool = True) -> list[Ref]:
    """A weight (d_in, d_out) and bias (d_out,), initialised like nn.Linear (uniform ±1/√d_in)."""
    refs = [rec.param(f"{prefix}.{w}", (d_in, d_out), axes, "uniform", d_in)]
    if bias:
        refs.append(rec.param(f"{prefix}.{b}", (d_out,), axes[1:], "uniform", d_in))
    return refs


def token_input(rec: Recorder, cfg: Config, inp: Inputs, prefix: str = "", axis: str = "pos") -> Ref:
    """X: the given embeddings, or token ids looked up in W_E."""
    if inp.embeddings is not None:
        return rec.input(f"{prefix}embed", inp.embeddings, (axis, "d_model"), "X",
                         "The input embeddings, one row per token, given to the run.")
    batched = cfg.model == "gpt"
    ids = inp.ids if batched else inp.ids[0]
    shape = (len(inp.ids), len(inp.ids[0])) if batched else (len(inp.ids[0]),)
    tokens = rec.input(f"{prefix}tokens", ids, (("batch",) if batched else ()) + (axis,), "ids",
                       "The token ids of the input text.", shape=shape)
    W_E = rec.param(f"{prefix}W_E", (cfg.d_vocab, cfg.d_model), ("vocab", "d_model"), "normal", sym="W_E")
    return rec.op("embed", f"{prefix}embed", tokens, W_E, sym="X",
                  note="Each token id picks its row of W_E: the token's learned vector.")


def attention_core(rec: Recorder, p: str, q: Ref, k: Ref, v: Ref, d_k: int, causal: bool) -> Ref:
    """softmax(Q·Kᵀ/√d_k [+ mask])·V, one recorded step per operation."""
    s = rec.op("matmul", f"{p}.scores", q, k, transpose_b=True, sym="S",  # (T, T)
               note="Scores: how well each query matches each key, as a dot product. Row i is query i.")
    s = rec.op("scale", f"{p}.scaled", s, divisor=math.sqrt(d_k), label="√d_k", source=f"np.sqrt({d_k})",
               sym="S'", note=f"Divide by √d_k = √{d_k} = {math.sqrt(d_k):g}: dot products grow with d_k, and "
                              "scaling keeps softmax out of its flat, saturated regions.")
    if causal:
        s = rec.op("mask", f"{p}.masked", s, sym="Sₘ")
    a = rec.op("softmax", f"{p}.pattern", s, sym="A",  # (T, T), rows sum to 1
               note="Attention weights: softmax of each row of scores. Row i says how much query i takes "
                    "from each position.")
    return rec.op("weighted_sum", f"{p}.z", a, v, sym="Z",
                  note="Each output is the sum of the value vectors weighted by the attention weights.")


def multi_head_attention(rec: Recorder, cfg: Config, p: str, x_q: Ref, x_kv: Ref, causal: bool) -> Ref:
    """h heads, each with its own W_Q, W_K (d×m) and W_V (d×l); concatenate; project with W_O (h·l × d)."""
    d, h, m = cfg.d_model, cfg.n_heads, cfg.head_dim
    proj = {}
    for name, x in (("Q", x_q), ("K", x_kv), ("V", x_kv)):
        W = rec.param(f"{p}.W_{name}", (h, d, m), ("head", "d_model", "d_head"), "uniform", d)
        b = rec.param(f"{p}.b_{name}", (h, m), ("head", "d_head"), "uniform", d)
        proj[name] = rec.op("linear_heads", f"{p}.{name.lower()}", x, W, b, sym=name,  # (h, T, m)
                            note=f"{name} for every head: X·W_{name} + b_{name}, a different projection per head.")
    z = attention_core(rec, p, proj["Q"], proj["K"], proj["V"], m, causal)  # (h, T, m)
    cat = rec.op("merge_heads", f"{p}.concat", z, sym="Z_cat",  # (T, h·m)
                 note=f"Concatenate the {h} heads' outputs side by side: {h} × {m} = {h * m} columns.")
    W_O, b_O = linear_params(rec, p, h * m, d, "W_O", "b_O", ("concat", "d_model"))
    return rec.op("linear", f"{p}_out", cat, W_O, b_O, sym="O",  # (T, d)
                  note="Project the concatenated heads back to d_model with W_O.")


def simple(rec: Recorder, cfg: Config, inp: Inputs) -> None:
    """Self-attention with no trainable weights (Build an LLM from Scratch, §3.3): X·Xᵀ, normalise, ·X."""
    x = token_input(rec, cfg, inp)  # (T, d)
    s = rec.op("matmul", "attn.scores", x, x, transpose_b=True, sym="S",  # (T, T)
               note="Attention scores: the dot product of every input with every other; similar vectors score high.")
    if cfg.normalize == "sum":
        a = rec.op("sum_normalize", "attn.pattern", s, sym="A")
    else:
        a = rec.op("softmax", "attn.pattern", s, sym="A",
                   note="Attention weights: softmax of each row, so weights are positive and sum to 1.")
    rec.op("weighted_sum", "attn.z", a, x, sym="Z",  # (T, d)
           note="Context vectors: each is the attention-weighted sum of all the input vectors.")


def single_head(rec: Recorder, cfg: Config, inp: Inputs, causal: bool = False) -> None:
    """Scaled dot-product attention with one head: Q, K, V projections, softmax(Q·Kᵀ/√d_k)·V."""
    x = token_input(rec, cfg, inp)  # (T, d)
    d, m = cfg.d_model, cfg.head_dim
    proj = {}
    for name in ("Q", "K", "V"):
        W, b = linear_params(rec, "attn", d, m, f"W_{name}", f"b_{name}", ("d_model", "d_head"))
        proj[name] = rec.op("linear", f"attn.{name.lower()}", x, W, b, sym=name,  # (T, m)
                            note=f"{ {'Q': 'Queries', 'K': 'Keys', 'V': 'Values'}[name]}: X·W_{name} + b_{name}.")
    attention_core(rec, "attn", proj["Q"], proj["K"], proj["V"], m, causal)


def attention(rec: Recorder, cfg: Config, inp: Inputs) -> None:
    single_head(rec, cfg, inp, causal=False)


def causal(rec: Recorder, cfg: Config, inp: Inputs) -> None:
    single_head(rec, cfg, inp, causal=True)


def multihead(rec: Recorder, cfg: Config, inp: Inputs) -> None:
    """Multi-head self-attention over the inputs."""
    x = token_input(rec, cfg, inp)
    multi_head_attention(rec, cfg, "attn", x, x, causal=False)


def synthesizer(rec: Recorder, cfg: Config, inp: Inputs) -> None:
    """Dense synthesizer attention (Tay et al. 2020; CS224N a5): the attention logits come from X alone,
    ReLU(X·W₁ + b₁)·W₂ + b₂ per head, with a causal mask; there is no Q·Kᵀ and no √d scaling."""
    x = token_input(rec, cfg, inp)  # (T, d)
    d, h, m, T = cfg.d_model, cfg.n_heads, cfg.head_dim, inp.seq_len
    W1 = rec.param("attn.W_1", (h, d, m), ("head", "d_model", "d_head"), "uniform", d)
    b1 = rec.param("attn.b_1", (h, m), ("head", "d_head"), "uniform", d)
    hid = rec.op("linear_heads", "attn.hidden", x, W1, b1, sym="H",  # (h, T, m)
                 note="Each head maps every token through its own W₁ (no keys are involved).")
    hid = rec.op("relu", "attn.relu", hid, sym="R")
    W2 = rec.param("attn.W_2", (m, cfg.n_ctx), ("d_head", "pos"), "uniform", m)
    b2 = rec.param("attn.b_2", (cfg.n_ctx,), ("pos",), "uniform", m)
    W2 = rec.op("slice", "attn.W_2_used", W2, axis=-1, stop=T, sym="W₂[:, :T]",
                note=f"W₂ has a column per context position ({cfg.n_ctx}); a sequence of {T} uses the first {T}.")
    b2 = rec.op("slice", "attn.b_2_used", b2, axis=-1, stop=T, sym="b₂[:T]")
    s = rec.op("linear", "attn.scores", hid, W2, b2, sym="S",  # (h, T, T)
               note="Synthesized scores: ReLU(X·W₁ + b₁)·W₂ + b₂. Row i comes from token i alone.")
    s = rec.op("mask", "attn.masked", s, sym="Sₘ")
    a = rec.op("softmax", "attn.pattern", s, sym="A")
    W_V = rec.param("attn.W_V", (h, d, m), ("head", "d_model", "d_head"), "uniform", d)
    b_V = rec.param("attn.b_V", (h, m), ("head", "d_head"), "uniform", d)
    v = rec.op("linear_heads", "attn.v", x, W_V, b_V, sym="V")  # (h, T, m)
    z = rec.op("weighted_sum", "attn.z", a, v, sym="Z")
    cat = rec.op("merge_heads", "attn.concat", z, sym="Z_cat")
    W_O, b_O = linear_params(rec, "attn", h * m, d, "W_O", "b_O", ("concat", "d_model"))
    rec.op("linear", "attn_out", cat, W_O, b_O, sym="O", note="Project the concatenated heads with W_O.")
