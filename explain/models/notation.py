"""The notation of every step: its math symbol and its narration, in one table apart from the model code.

A row is ``(which steps, op kind, symbol, note)``; the first row for a step's name and kind wins. Which steps is
a step name (that step only) or an :class:`~explain.core.names.On`, matched on the parts of the step's name
(:func:`explain.core.names.step_name`: new token, stack, block, sublayer, leaf): ``On("attn.q")`` is every
attention's q in any block, ``On("ln1", block=True, stack="")`` block N's ln1, ``On("probs", new_token=True)`` a
generation's. A new token's steps read the prompt's rows unless a row is for them. A model's own rows come before
the shared ones. A note of
``None`` leaves the op kind's default note. Notes may name the config (``{d_model}``, ``{d_ff}``,
``{n_heads}``, ``{d_head}``, ``{n_ctx}``, ``{d_concat}`` = heads × d_head) and the step's attributes
(``{n}``, ``{stop}``; ``{sqrt_n}`` = √n).
"""

from __future__ import annotations

import math
from typing import Any

from explain.core.config import Config
from explain.core.names import On, StepName, as_first_token, param_name, step_name
from explain.models.notation_bert import BERT_ROWS
from explain.models.notation_gemma import GEMMA, GEMMA_CACHE, assumed_context
from explain.models.notation_mla import NOTATION as MLA_NOTATION
from explain.models.notation_mla import notation_context as mla_context
from explain.trace.recorder import Notation

Row = tuple[str | On, str, str, str | None]  # (that step, or the steps On matches; kind; symbol; note)


def _for_new_tokens(row: Row) -> bool:
    """A row for a generation's new tokens (gpt's, which llama and gemma share)."""
    return isinstance(row[0], On) and row[0].new_token


SHARED: list[Row] = [
    # inputs and embeddings
    (On("embed"), "input", "X", "The input embeddings, one row per token, given to the run."),
    (On("tokens"), "input", "ids", "The token ids of the input text."),
    (On("embed"), "embed", "X", "Each token id picks its row of W_E: the token's learned vector."),
    (On("embed_scaled"), "scale", "X'", "The paper multiplies the embeddings by √d_model = {sqrt_n:.4g} (§3.4)."),
    (On("pos_embed"), "sinusoid", "PE", None),
    (On("resid_pre", block=0), "add", "X₀", "Add the positional encoding, so the same word at two positions gives "
                                            "two different vectors."),
    # attention
    (On("attn.q"), "linear_heads", "Q", "Q for every head: X·W_Q{b_Q}, a different projection per head."),
    (On("attn.k"), "linear_heads", "K", "K for every head: X·W_K{b_K}, a different projection per head."),
    (On("attn.v"), "linear_heads", "V", "V for every head: X·W_V{b_V}, a different projection per head."),
    (On("attn.q"), "linear", "Q", "Queries: X·W_Q{b_Q}."),
    (On("attn.k"), "linear", "K", "Keys: X·W_K{b_K}."),
    (On("attn.v"), "linear", "V", "Values: X·W_V{b_V}."),
    (On("attn.scores"), "*", "S", "Scores: how well each query matches each key, as a dot product. Row i is query i."),
    (On("attn.scaled"), "*", "S'", "Divide by √d_k = √{n} = {sqrt_n:g}: dot products grow with d_k, and scaling "
                                   "keeps softmax out of its flat, saturated regions."),
    (On("attn.masked"), "*", "Sₘ", None),
    (On("attn.pad_masked"), "*", "Sₚ", None),
    (On("key_padding"), "input", "pad", "Which positions of each text are <pad> (1) rather than words (0): the keys "
                                        "the padding mask hides."),
    (On("attn.pattern"), "*", "A", "Attention weights: softmax of each row of scores. Row i says how much query i "
                                   "takes from each position."),
    (On("attn.z"), "*", "Z", "Each output is the sum of the value vectors weighted by the attention weights."),
    (On("attn.concat"), "*", "Z_cat", "Concatenate the {n_heads} heads' outputs side by side: {n_heads} × {d_value} "
                                      "= {d_concat} columns."),
    (On("attn_out"), "*", "O", "Project the concatenated heads to {d_out_text} with W_O."),
    # feed-forward
    (On("mlp.pre"), "*", "H", "Feed-forward, first layer: widen each position from {d_model} to {d_ff} features."),
    (On("mlp.post"), "*", "H'", None),
    (On("mlp_out"), "*", "F", "Feed-forward, second layer: back to d_model. Each position is transformed on its own."),
    # the original transformer's residual adds and post-LN norms
    (On("add1", block=True, stack="decoder"), "*", "x + sub", "Residual connection: add the masked self-attention "
                                                              "output to its input."),
    (On("add2", block=True, stack="decoder"), "*", "x + sub", "Residual connection: add the encoder-decoder "
                                                              "attention output to its input."),
    (On("add1", block=True), "*", "x + sub", "Residual connection: add the self-attention output to its input."),
    (On(("add2", "add3"), block=True), "*", "x + sub", "Residual connection: add the feed-forward output to its "
                                                       "input."),
    (On(("ln1", "ln2", "ln3"), block=True), "*", "N", "Layer norm after the residual add (post-LN)."),
    # output and loss
    ("logits", "*", "logits", "The final linear layer: one score per vocabulary word at each decoder position."),
    ("probs", "*", "P", "Softmax over the vocabulary: the next-word probabilities."),
    ("log_probs", "*", "log P", None),
    ("targets", "*", "y", "The correct next token at each position (in a padded batch, −100 where the next "
                          "token is <pad>: ignored, as torch's ignore_index)."),
    ("correct_log_probs", "*", "log p(y)", None),
    ("token_loss", "*", "ℓ", "Cross-entropy at each position: −log p(correct next token). p = 1 costs 0; p → 0 costs ∞."),
    ("loss", "*", "L", "The loss: the mean of −log p(correct next token) over positions (padded targets not "
                       "counted)."),
]

OWN: dict[str, list[Row]] = {
    "transformer": [
        ("logits", "*", "logits", "The final linear layer{unembed}: one score per vocabulary word at each decoder "
                                  "position."),
    ],
    "simple": [
        ("attn.scores", "*", "S",
         "Attention scores: the dot product of every input with every other; similar vectors score high."),
        ("attn.pattern", "softmax", "A", "Attention weights: softmax of each row, so weights are positive and sum to 1."),
        ("attn.pattern", "*", "A", None),
        ("attn.z", "*", "Z", "Context vectors: each is the attention-weighted sum of all the input vectors."),
    ],
    "synthesizer": [
        ("attn.hidden", "*", "H", "Each head maps every token through its own W₁ (no keys are involved)."),
        ("attn.relu", "*", "R", None),
        ("attn.W_2_used", "*", "W₂[:, :T]",
         "W₂ has a column per context position ({n_ctx}); a sequence of {stop} uses the first {stop}."),
        ("attn.b_2_used", "*", "b₂[:T]", None),
        ("attn.scores", "*", "S", "Synthesized scores: ReLU(X·W₁ + b₁)·W₂ + b₂. Row i comes from token i alone."),
        ("attn.pattern", "*", "A", None),
        ("attn.v", "*", "V", None),
        ("attn.z", "*", "Z", None),
        ("attn.concat", "*", "Z_cat", None),
        ("attn_out", "*", "O", "Project the concatenated heads with W_O."),
    ],
    "gpt": [
        # a generation's new tokens (explain.models.generate); their forward steps fall back to the rows below
        (On("next_logits", new_token=True), "*", "z", None),
        (On("temperature", new_token=True), "*", "z/T", None),
        (On("top_k", new_token=True), "*", "z_k", None),
        (On("top_p", new_token=True), "*", "z_p", None),
        (On("probs", new_token=True), "*", "P", "Softmax over the vocabulary: the probability of each token coming "
                                                "next."),
        (On("u", new_token=True), "*", "u", None),
        (On("next", new_token=True), "*", "next", None),
        (On("pos_embed", new_token=True), "*", "P", "The new token sits at position {start}: row {start} of W_pos."),
        (On("attn.k_cache", new_token=True), "*", "K_cache", None),
        (On("attn.v_cache", new_token=True), "*", "V_cache", None),
        (On("attn.scores", new_token=True), "*", "S", "Scores of the new position's query against every key, the "
                                                      "cached ones and its own: one row, nothing to mask (every key "
                                                      "is at or before it)."),
        (On("logits", new_token=True), "*", "logits", "The new position's logits: one score per vocabulary token for "
                                                      "the token after it."),
        ("pos_embed", "*", "P", "Learned positional embedding: row p of W_pos is added at position p."),
        ("blocks.0.resid_pre", "*", "x",
         "The residual stream starts as token embedding + position embedding (broadcast over the batch)."),
        (On("ln1", block=True, stack=""), "*", "x̂", "Pre-LN: normalise before attention (GPT-2)."),
        (On("resid_mid", block=True, stack=""), "*", "x", "Add the attention output to the residual stream."),
        (On("ln2", block=True, stack=""), "*", "x̂", "Pre-LN: normalise before the MLP."),
        (On("resid_post", block=True, stack=""), "*", "x", "Add the MLP output to the residual stream."),
        ("ln_final", "*", "x̂", "A last layer norm before the unembedding."),
        ("logits", "*", "logits", "Logits: the residual stream times W_Eᵀ (the unembedding is tied to the "
                                  "embedding), one score per vocabulary word at each position."),
        ("probs", "*", "P", "Softmax over the vocabulary: the next-token probabilities."),
        ("log_probs_pred", "*", "log P[:, :-1]",
         "Position t predicts token t+1; the last position has nothing after it to check against."),
    ],
}

OWN["llama"] = [
    *MLA_NOTATION,  # latent attention's steps (--attention mla): their own names, before gpt's generation rows
    *[row for row in OWN["gpt"] if _for_new_tokens(row)],  # a generation's new tokens read as gpt's
    ("embed", "*", "x", "Each token id picks its row of W_E. There is no position embedding: positions enter "
                        "through the rotation of Q and K in every block."),
    (On("ln1", block=True, stack=""), "*", "x̂", "Pre-norm: RMSNorm before attention."),
    (On("ln2", block=True, stack=""), "*", "x̂", "Pre-norm: RMSNorm before the MLP."),
    ("ln_final", "*", "x̂", "A last RMSNorm before the output layer."),
    (On("attn.q"), "linear_heads", "Q", "{q_note}"),
    (On("attn.rot_q"), "*", "Qᵣ", "Rotate {rotated_q}: pair {rope_pair} of the row at position p turns by "
                                  "p·θ^(−2i/{d_rope}), θ = {theta:g}."),
    (On("attn.rot_k"), "*", "Kᵣ", "Rotate {rotated_k} the same way, so Qᵣ·Kᵣᵀ depends on the distance between "
                                  "positions, not on where they are."),
    (On("attn.k_rep"), "*", "Kᵣ", "Grouped-query attention: {n_heads} query heads, {n_kv_heads} key/value head(s); "
                                  "query head h reads key head h // {group}."),
    (On("attn.v_rep"), "*", "V", "The values are shared the same way: query head h reads value head h // {group}."),
    (On("attn.scores"), "*", "S", "Scores: rotated queries against rotated keys. Row i is query i."),
    # a mixture of experts (explain.models.moe)
    (On("mlp.router_logits"), "*", "R", "The router's logits: x̂·W_router, one score per expert ({n_experts}) at "
                                        "each position."),
    (On("mlp.router_scores"), "softmax", "P", "Softmax over the {n_experts} experts: how much the router favours "
                                              "each (TransformerLens calls this hook_expert_weights)."),
    (On("mlp.router_scores"), "sigmoid", "s", "A sigmoid per expert, each score in (0, 1) on its own (DeepSeek-V3): "
                                              "they need not sum to 1."),
    (On("mlp.choice"), "*", "C", "The choice: each position goes to its top {experts_per_token} of {n_experts} "
                                 "experts{grouping} (1 = taken). A tie goes to the lower expert index."),
    (On("mlp.kept_weights"), "*", "w", "The chosen experts' weights{kept}; the others weigh 0."),
    (On("mlp.experts.pre"), "*", "G", "Every expert's gate x̂·W_gate[e], {d_model} → {expert_dim}, at the positions "
                                      "routed to it; the other rows are 0 (greyed)."),
    (On("mlp.experts.pre_linear"), "*", "U", "Every expert's up projection x̂·W_in[e], at the positions routed to it."),
    (On("mlp.experts.post"), "*", "H", "SwiGLU per expert: silu(G) ⊙ U (0 where the expert took no token: silu(0)·0)."),
    (On("mlp.experts.out"), "*", "O", "Every expert's down projection H·W_out[e], back to {d_model}: what each "
                                      "expert says about each token it took."),
    (On("mlp.routed"), "*", "F_r", "The mixture: at each position, Σ over its experts of weight × expert output."),
    (On("mlp.shared.pre"), "*", "G_s", "The shared expert's gate: x̂·W_gate, {d_model} → {shared_dim}, at every "
                                       "position (every token uses it)."),
    (On("mlp.shared.pre_linear"), "*", "U_s", "The shared expert's up projection x̂·W_in."),
    (On("mlp.shared.post"), "*", "H_s", "SwiGLU: silu(G_s) ⊙ U_s."),
    (On("mlp.shared.out"), "*", "O_s", "The shared expert's output, H_s·W_out, back to {d_model}."),
    (On("mlp.shared_gate_pre"), "*", "g", "The shared expert's gate logit, x̂·w, one number per position (Qwen2-MoE)."),
    (On("mlp.shared_gate"), "*", "σ_s", "σ of the gate logit: how much of the shared expert each position takes."),
    (On("mlp.shared_gated"), "*", "O_s'", "The shared expert's output scaled by its gate, position by position."),
    (On("mlp_out"), "expert_sum", "F", "The mixture: at each position, Σ over its experts of weight × expert output "
                                       "(no shared expert)."),
    (On("mlp_out"), "add", "F", "The routed experts' mixture plus the shared expert{shared_gate}."),
    (On("mlp.pre"), "*", "G", "The gate: x̂·W_gate, {d_model} → {d_ff} features (no bias)."),
    (On("mlp.pre_linear"), "*", "U", "The up projection: x̂·W_in, {d_model} → {d_ff} features (no bias)."),
    (On("mlp.post"), "*", "H", "SwiGLU: silu(G) ⊙ U, the gate deciding how much of each feature of U passes."),
    (On("mlp_out"), "*", "F", "The down projection: H·W_out, back to {d_model} features."),
    (On("resid_mid", block=True, stack=""), "*", "x", "Add the attention output to the residual stream."),
    (On("resid_post", block=True, stack=""), "*", "x", "Add the MLP output to the residual stream."),
    ("logits", "*", "logits", "Logits: the residual stream times {unembed_llama}, one score per vocabulary word at "
                              "each position."),
    ("probs", "*", "P", "Softmax over the vocabulary: the next-token probabilities."),
    ("log_probs_pred", "*", "log P[:, :-1]",
     "Position t predicts token t+1; the last position has nothing after it to check against."),
]

OWN["gemma"] = [*GEMMA_CACHE, *[row for row in OWN["gpt"] if _for_new_tokens(row)], *GEMMA]

OWN["bert"] = BERT_ROWS

_found: dict[tuple[str, str, str], tuple[str, str | None]] = {}  # (model, step, kind) -> (sym, note template)


def _is_for(which: str | On, name: str, parts: StepName) -> bool:
    """Whether a row is for the step ``name`` (taken apart as ``parts``)."""
    return which == name if isinstance(which, str) else which.matches(parts)


def _match(model: str, name: str, kind: str) -> tuple[str, str | None]:
    """The first row for this step, looked up once per (model, step name, kind) in the process: runs repeat
    the same names, and the recorder asks for every step."""
    key = (model, name, kind)
    hit = _found.get(key)
    if hit is None:
        parts = step_name(name)
        hit = next(((sym, note) for which, k, sym, note in OWN.get(model, []) + SHARED
                    if k in ("*", kind) and _is_for(which, name, parts)), None)
        if hit is None:  # a generation's gen.N.blocks.0.ln1 reads as blocks.0.ln1 unless a row is for new tokens
            hit = _match(model, param_name(name), kind) if parts.new_token is not None else (parts.leaf, None)
        _found[key] = hit
    return hit


def _moe_context(cfg: Config) -> dict[str, Any]:
    """What the mixture-of-experts rows say of the config (nothing when the MLP is dense)."""
    if cfg.n_experts is None:
        return {}
    grouping = (f", among the experts of its best {cfg.topk_group} of {cfg.n_group} groups (a group's score: the sum "
                "of its 2 best)" if cfg.n_group > 1 else "")
    if cfg.router == "sigmoid":
        grouping += ", ranked by score + a per-expert choosing bias b"
    scale = f", × {cfg.routed_scaling_factor:g}" if cfg.routed_scaling_factor != 1 else ""
    kept = (f": their scores renormalised to sum to 1 (for softmax scores, the same as a softmax over the chosen "
            f"experts' logits){scale}" if cfg.norm_topk_prob else f": their scores as they are{scale}")
    return dict(n_experts=cfg.n_experts, experts_per_token=cfg.experts_per_token, grouping=grouping, kept=kept,
                expert_dim=cfg.expert_dim, shared_dim=cfg.shared_dim,
                shared_gate=", scaled by its gate" if cfg.shared_expert_gate else "")


def notation(cfg: Config) -> Notation:
    """The lookup the recorder calls for each step of a ``cfg.model`` run: (name, kind, attrs) → (sym, note)."""
    model = cfg.model
    context = dict(d_model=cfg.d_model, d_ff=cfg.ff_dim, n_heads=cfg.n_heads, d_head=cfg.head_dim, n_ctx=cfg.n_ctx,
                   d_concat=cfg.n_heads * cfg.head_dim,
                   d_out_text="d_model" if cfg.out_dim == cfg.d_model else f"d_out = {cfg.out_dim}",
                   unembed=", the embedding matrix W_E transposed (§3.4: both embedding layers and this pre-softmax "
                           "linear share one matrix)" if cfg.tie_embeddings else "",
                   unembed_llama="W_Eᵀ (tied to the embedding)" if cfg.tie_embeddings else "its own W_U",
                   n_kv_heads=cfg.kv_heads, group=cfg.n_heads // max(cfg.kv_heads, 1), half=cfg.head_dim // 2,
                   rope_theta=cfg.rope_theta, local_theta=cfg.local_theta, sliding_window=cfg.sliding_window,
                   **assumed_context(cfg),
                   **_moe_context(cfg), d_value=cfg.head_dim, d_rope=cfg.head_dim,
                   q_note="Q for every head: X·W_Q" + (" + b_Q" if cfg.qkv_bias else " (no bias)")
                   + ", a different projection per head.",
                   rope_pair=f"(i, i + {cfg.head_dim // 2})", rotated_q="every query", rotated_k="every key",
                   **{f"b_{n}": f" + b_{n}" if cfg.qkv_bias else " (no bias)" for n in "QKV"})
    if cfg.attention == "mla":  # latent attention: the values' width, the rotary parts (interleaved pairs)
        context.update(mla_context(cfg), rope_pair="(2i, 2i + 1)", rotated_q="the rotary part of every query",
                       rotated_k="the shared rotary key")
        context.update(d_concat=cfg.n_heads * context["d_value"])

    def lookup(name: str, kind: str, attrs: dict[str, Any]) -> tuple[str, str | None]:
        sym, note = _match(model, as_first_token(name), kind)  # every new token's steps share one cache entry
        if note and "{" in note:
            values = dict(context, **attrs)
            if "n" in attrs:
                values["sqrt_n"] = math.sqrt(attrs["n"])
            note = note.format(**values)
        return sym, note

    return lookup
