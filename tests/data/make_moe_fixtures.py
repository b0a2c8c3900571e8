"""Make ``tests/data/moe/``: what transformers' MixtralForCausalLM and Qwen2MoeForCausalLM compute in float64, and a
DeepSeek-V3-style router (sigmoid scores, a choosing-only bias, experts in groups, the kept weights renormalised
and scaled, shared experts, a dense first layer) on Llama blocks, written out in torch below, for the mixture-of-
experts configs ``explain``'s ``llama`` is checked against (tests/models/test_moe_reference.py).

This is a script, not a test. It needs torch and transformers (not dependencies of explain); run it once with
the fixture venv::

    /work/torchenv/bin/python tests/data/make_moe_fixtures.py

For each config (``CONFIGS``) it writes ``moe/<name>_weights.npz`` (random weights under explain's parameter
names, converted by a mapping written here, apart from explain's checkpoint reader), ``moe/<name>_config.json``
(explain's options) and ``moe/<name>_expected.npz``: every step explain records (named as explain names them:
the router's logits and scores, the 0/1 choice, the kept weights, every expert's gate, up, SwiGLU and down over
every position, (1, E, T, width), the rows of the tokens it did not take 0, the weighted sum, the shared expert
and its gate),
``grad:<param>`` (every parameter's gradient of the loss, by autograd; the choosing bias has none: choosing is not
differentiable) and ``generated`` (greedy ``generate``'s new tokens).

**Near ties.** After drawing the weights, one router row per MoE layer is moved so that at one position the last
expert chosen and the first one not chosen differ by ``GAP`` (and, in the grouped router, at another position the
last group kept and the first one dropped): the fixtures then check that explain ranks by the exact value. The
gaps reached are printed and stored (``near_ties``).

**float64.** transformers computes in float32 whatever the dtype: RMSNorm, the rotary tables, the attention
softmax, and the routers (Mixtral's ``softmax(router_logits.float())``, Qwen2-MoE's ``softmax(…, dtype=float)``,
DeepSeek-V3's ``F.linear(h.float(), w.float())``). Those forwards are patched below to stay in the input's dtype
(the same formulas). The experts run transformers' eager loop (``experts_implementation="eager"``; its grouped
kernel has no float64), copied here with a record of each expert's intermediate values. The DeepSeek-style
module is checked against transformers' own ``DeepseekV3MoE`` (its router patched to float64 the same way) to
1e-12 before anything is written.

Also written: Hugging Face folders for the checkpoint reader (``hf_mixtral`` in transformers 4's per-expert
layout ``block_sparse_moe.experts.E.w1/w2/w3``, ``hf_mixtral_stacked`` in transformers 5's stacked
``mlp.experts.gate_up_proj``/``down_proj``, ``hf_qwen2_moe`` per expert with its shared expert, each with the
llama fixtures' byte-level tokenizer and the logits and greedy tokens transformers gives), and config.json files
alone (``configs/``) with the parameter counts transformers gives on the meta device (``counts.json``).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
import transformers.models.deepseek_v3.modeling_deepseek_v3 as mds
import transformers.models.llama.modeling_llama as ml
import transformers.models.mixtral.modeling_mixtral as mm
import transformers.models.qwen2_moe.modeling_qwen2_moe as mq
from safetensors.numpy import save_file
from transformers import (
    DeepseekV3Config,
    LlamaConfig,
    LlamaForCausalLM,
    MixtralConfig,
    MixtralForCausalLM,
    Qwen2MoeConfig,
    Qwen2MoeForCausalLM,
)

HERE = Path(__file__).resolve().parent
OUT = HERE / "moe"
TOKENS = [3, 17, 4, 29, 5, 11, 2, 23, 8]
NEW = 4
GAP = 1e-9  # how near the near ties are (in the score that chooses)

# name -> (kind, explain's options)
CONFIGS = {
    "mixtral": ("mixtral", dict(d_model=16, n_heads=4, n_kv_heads=2, n_layers=2, d_ff=12, d_vocab=48,
                                tie_embeddings=False, qkv_bias=False, rope_theta=1000000.0, ln_eps=1e-5,
                                n_experts=4, experts_per_token=2, router="softmax", norm_topk_prob=True)),
    "qwen2_moe": ("qwen2_moe", dict(d_model=12, n_heads=2, n_kv_heads=1, n_layers=3, d_ff=16, d_vocab=48,
                                    tie_embeddings=True, qkv_bias=True, rope_theta=1000000.0, ln_eps=1e-6,
                                    n_experts=6, experts_per_token=2, router="softmax", norm_topk_prob=False,
                                    moe_d_ff=8, n_shared_experts=1, shared_d_ff=12, shared_expert_gate=True,
                                    first_k_dense_replace=1)),
    "deepseek": ("deepseek", dict(d_model=16, n_heads=4, n_kv_heads=2, n_layers=3, d_ff=20, d_vocab=48,
                                  tie_embeddings=False, qkv_bias=False, rope_theta=10000.0, ln_eps=1e-6,
                                  n_experts=12, experts_per_token=3, router="sigmoid", n_group=4, topk_group=2,
                                  norm_topk_prob=True, routed_scaling_factor=2.5, moe_d_ff=6, n_shared_experts=2,
                                  first_k_dense_replace=1)),
}


# --- float64 everywhere (see the docstring) ------------------------------------------------------------------
def rms_forward(self, x):
    return self.weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.variance_epsilon))


def rope_forward(self, x, position_ids):
    dim = self.inv_freq.shape[0] * 2
    theta = self.config.rope_parameters["rope_theta"]
    inv = 1.0 / (theta ** (torch.arange(0, dim, 2, dtype=torch.float64) / dim))
    freqs = position_ids[..., None].to(torch.float64) * inv
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos().to(x.dtype), emb.sin().to(x.dtype)


ATTENTION: list[dict] = []  # one dict per attention call, in order


def eager(module, query, key, value, attention_mask, scaling, dropout=0.0, **kwargs):
    groups = module.num_key_value_groups
    k, v = ml.repeat_kv(key, groups), ml.repeat_kv(value, groups)
    scores = torch.matmul(query, k.transpose(2, 3))
    w = scores * scaling
    if attention_mask is not None:
        w = w + attention_mask
    w = torch.softmax(w, dim=-1)
    z = torch.matmul(w, v)
    ATTENTION.append(dict(rot_q=query, rot_k=key, k_rep=k, v_rep=v, scores=scores, scaled=scores * scaling,
                          pattern=w, z=z))
    return z.transpose(1, 2).contiguous(), w


ROUTERS: list[dict] = []  # one dict per router call, in order: logits, scores, choice, kept
EXPERTS: list[dict] = []  # one dict per experts call: e -> {pre, pre_linear, post, out}


def softmax_router(self, hidden_states):
    """Mixtral's and Qwen2-MoE's router (Qwen2-MoE renormalises only with norm_topk_prob), in float64."""
    h = hidden_states.reshape(-1, self.hidden_dim)
    logits = F.linear(h, self.weight)
    probs = torch.softmax(logits, dim=-1)
    top, idx = torch.topk(probs, self.top_k, dim=-1)
    if getattr(self, "norm_topk_prob", True):  # Mixtral's router always renormalises
        top = top / top.sum(dim=-1, keepdim=True)
    ROUTERS.append(dict(router_logits=logits, router_scores=probs, idx=idx, weights=top))
    return logits, top, idx


def experts_eager(self, hidden_states, top_k_index, top_k_weights):
    """transformers' eager experts loop (MixtralExperts / Qwen2MoeExperts.forward), recording each expert's values
    at the rows of the tokens it took (the other rows stay 0, as explain records them)."""
    final = torch.zeros_like(hidden_states)
    n, f = hidden_states.shape[0], self.intermediate_dim
    seen = {}
    with torch.no_grad():
        mask = F.one_hot(top_k_index, num_classes=self.num_experts + 1).permute(2, 1, 0)
        hit = torch.greater(mask.sum(dim=(-1, -2)), 0).nonzero()
    for e in hit:
        e = e[0]
        if e == self.num_experts:
            continue
        pos, tok = torch.where(mask[e])
        gate, up = F.linear(hidden_states[tok], self.gate_up_proj[e]).chunk(2, dim=-1)
        post = self.act_fn(gate) * up
        out = F.linear(post, self.down_proj[e])
        final.index_add_(0, tok, (out * top_k_weights[tok, pos, None]).to(final.dtype))
        rec = {}
        for key, val, width in (("pre", gate, f), ("pre_linear", up, f), ("post", post, f),
                                ("out", out, hidden_states.shape[1])):
            full = torch.zeros(n, width, dtype=val.dtype)
            full = full.index_copy(0, tok, val)
            rec[key] = full
        seen[int(e)] = rec
    EXPERTS.append(seen)
    return final


for mod in (ml, mm, mq, mds):
    for n in dir(mod):
        if n.endswith("RMSNorm"):
            getattr(mod, n).forward = rms_forward
        if n.endswith("RotaryEmbedding"):
            getattr(mod, n).forward = rope_forward
    mod.eager_attention_forward = eager
mm.MixtralTopKRouter.forward = softmax_router
mq.Qwen2MoeTopKRouter.forward = softmax_router
mm.MixtralExperts.forward = experts_eager
mq.Qwen2MoeExperts.forward = experts_eager


def deepseek_router_f64(self, hidden_states):
    """transformers' DeepseekV3TopkRouter.forward with its float32 casts dropped (the cross-check below)."""
    h = hidden_states.view(-1, self.hidden_dim)
    logits = F.linear(h, self.weight)
    scores = logits.sigmoid()
    choose = scores + self.e_score_correction_bias
    group_scores = choose.view(-1, self.num_group, self.num_experts // self.num_group).topk(2, dim=-1)[0].sum(-1)
    group_idx = torch.topk(group_scores, k=self.topk_group, dim=-1, sorted=False)[1]
    group_mask = torch.zeros_like(group_scores).scatter_(1, group_idx, 1)
    score_mask = group_mask.unsqueeze(-1).expand(-1, self.num_group, self.num_experts // self.num_group)
    choose = choose.masked_fill(~score_mask.reshape(-1, self.num_experts).bool(), float("-inf"))
    idx = torch.topk(choose, k=self.top_k, dim=-1, sorted=False)[1]
    w = scores.gather(1, idx)
    if self.norm_topk_prob:
        w = w / (w.sum(dim=-1, keepdim=True) + 1e-20)
    return logits, w * self.routed_scaling_factor, idx


mds.DeepseekV3TopkRouter.forward = deepseek_router_f64
mds.DeepseekV3Experts.forward = lambda self, h, i, w: _eager_plain(self, h, i, w)


def _eager_plain(self, h, idx, w):
    final = torch.zeros_like(h)
    for e in range(self.num_experts):
        tok, pos = torch.where(idx == e)
        if tok.numel() == 0:
            continue
        gate, up = F.linear(h[tok], self.gate_up_proj[e]).chunk(2, dim=-1)
        out = F.linear(self.act_fn(gate) * up, self.down_proj[e])
        final.index_add_(0, tok, out * w[tok, pos, None])
    return final


# --- the DeepSeek-V3-style mixture, written out ---------------------------------------------------------------
class DeepSeekStyleMoE(torch.nn.Module):
    """DeepSeek-V3's routed mixture (Liu et al. 2024, §2.1.2) on a Llama block: scores s = σ(x·Wᵀ); the choice
    ranks s + b (b: a per-expert bias used for choosing only); the experts are in ``n_group`` groups, each scored
    by the sum of its two best biased scores, and only the best ``topk_group`` groups take part; the top k experts
    among them are chosen; their weights are the unbiased s, renormalised (norm_topk_prob) and scaled by
    ``routed_scaling_factor``; the shared experts (one SwiGLU MLP of n_shared × the expert width) are added
    ungated."""

    def __init__(self, o: dict, g: torch.Generator) -> None:
        super().__init__()
        d, f, E = o["d_model"], o["moe_d_ff"], o["n_experts"]
        fs = f * o["n_shared_experts"]
        self.o = o

        def p(*shape, s=0.3):
            return torch.nn.Parameter(s * torch.randn(*shape, generator=g, dtype=torch.float64))

        self.router = p(E, d, s=0.6)
        self.register_buffer("bias", 0.15 * torch.randn(E, generator=g, dtype=torch.float64))
        self.gate_proj, self.up_proj, self.down_proj = p(E, f, d), p(E, f, d), p(E, d, f)
        self.shared_gate, self.shared_up, self.shared_down = p(fs, d), p(fs, d), p(d, fs)
        self.record: dict = {}

    def choose(self, h: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        o = self.o
        E, G = o["n_experts"], o["n_group"]
        logits = h @ self.router.T  # (N, E)
        scores = torch.sigmoid(logits)
        biased = scores + self.bias  # for choosing only
        groups = biased.view(-1, G, E // G).topk(2, dim=-1).values.sum(-1)  # (N, G)
        kept_groups = torch.zeros_like(groups).scatter(1, groups.topk(o["topk_group"], dim=-1).indices, 1.0)
        allowed = kept_groups.repeat_interleave(E // G, dim=1).bool()  # (N, E)
        idx = biased.masked_fill(~allowed, float("-inf")).topk(o["experts_per_token"], dim=-1).indices
        return logits, scores, idx, groups

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        o = self.o
        shape = x.shape
        h = x.reshape(-1, shape[-1])
        n, E = h.shape[0], o["n_experts"]
        logits, scores, idx, _ = self.choose(h)
        w = scores.gather(1, idx)
        if o["norm_topk_prob"]:
            w = w / w.sum(-1, keepdim=True)
        w = w * o["routed_scaling_factor"]
        choice = torch.zeros(n, E, dtype=h.dtype).scatter(1, idx, 1.0)
        kept = torch.zeros(n, E, dtype=h.dtype).scatter(1, idx, w)
        routed = torch.zeros_like(h)
        experts = {}
        for e in range(E):
            tok, pos = torch.where(idx == e)
            if tok.numel() == 0:
                continue
            gate, up = h[tok] @ self.gate_proj[e].T, h[tok] @ self.up_proj[e].T
            post = F.silu(gate) * up
            out = post @ self.down_proj[e].T
            routed = routed.index_add(0, tok, out * w[tok, pos, None])
            experts[e] = {}
            for key, val in (("pre", gate), ("pre_linear", up), ("post", post), ("out", out)):
                experts[e][key] = torch.zeros(n, val.shape[1], dtype=h.dtype).index_copy(0, tok, val)
        s_gate, s_up = h @ self.shared_gate.T, h @ self.shared_up.T
        s_post = F.silu(s_gate) * s_up
        s_out = s_post @ self.shared_down.T
        self.record = dict(router_logits=logits, router_scores=scores, choice=choice, kept_weights=kept,
                           routed=routed, experts=experts, shared=dict(pre=s_gate, pre_linear=s_up, post=s_post,
                                                                        out=s_out))
        return (routed + s_out).view(shape)


def check_against_transformers(moe: DeepSeekStyleMoE, x: torch.Tensor) -> float:
    """The module above against transformers' DeepseekV3MoE with the same weights (its router in float64)."""
    o = moe.o
    cfg = DeepseekV3Config(hidden_size=o["d_model"], n_routed_experts=o["n_experts"],
                           num_experts_per_tok=o["experts_per_token"], n_group=o["n_group"],
                           topk_group=o["topk_group"], moe_intermediate_size=o["moe_d_ff"],
                           n_shared_experts=o["n_shared_experts"], routed_scaling_factor=o["routed_scaling_factor"],
                           norm_topk_prob=o["norm_topk_prob"], hidden_act="silu")
    ref = mds.DeepseekV3MoE(cfg).double()
    with torch.no_grad():
        ref.gate.weight.copy_(moe.router)
        ref.gate.e_score_correction_bias = moe.bias.clone()
        ref.experts.gate_up_proj.copy_(torch.cat([moe.gate_proj, moe.up_proj], dim=1))
        ref.experts.down_proj.copy_(moe.down_proj)
        ref.shared_experts.gate_proj.weight.copy_(moe.shared_gate)
        ref.shared_experts.up_proj.weight.copy_(moe.shared_up)
        ref.shared_experts.down_proj.weight.copy_(moe.shared_down)
        ours, theirs = moe(x), ref(x)
    return float((ours - theirs).abs().max())


# --- the models -------------------------------------------------------------------------------------------------
def common(o: dict) -> dict:
    return dict(vocab_size=o["d_vocab"], hidden_size=o["d_model"], num_hidden_layers=o["n_layers"],
                num_attention_heads=o["n_heads"], num_key_value_heads=o["n_kv_heads"], rms_norm_eps=o["ln_eps"],
                max_position_embeddings=o.get("n_ctx", 32), tie_word_embeddings=o["tie_embeddings"],
                rope_parameters={"rope_type": "default", "rope_theta": o["rope_theta"]},
                attn_implementation="eager", experts_implementation="eager", bos_token_id=None,
                eos_token_id=None, pad_token_id=None)


def build(name: str, kind: str, o: dict) -> torch.nn.Module:
    g = torch.Generator().manual_seed(sum(map(ord, name.removesuffix("_stacked"))))
    if kind == "mixtral":
        model = MixtralForCausalLM(MixtralConfig(**common(o), intermediate_size=o["d_ff"],
                                                 num_local_experts=o["n_experts"],
                                                 num_experts_per_tok=o["experts_per_token"]))
    elif kind == "qwen2_moe":
        model = Qwen2MoeForCausalLM(Qwen2MoeConfig(
            **common(o), intermediate_size=o["d_ff"], num_experts=o["n_experts"],
            num_experts_per_tok=o["experts_per_token"], moe_intermediate_size=o["moe_d_ff"],
            shared_expert_intermediate_size=o["shared_d_ff"], norm_topk_prob=o["norm_topk_prob"],
            mlp_only_layers=list(range(o["first_k_dense_replace"])), decoder_sparse_step=1, qkv_bias=o["qkv_bias"],
            use_sliding_window=False))
    else:
        model = LlamaForCausalLM(LlamaConfig(**common(o), intermediate_size=o["d_ff"], attention_bias=False,
                                             mlp_bias=False))
    model = model.double().eval()
    with torch.no_grad():  # weights large enough that every step's numbers differ visibly
        for pname, p in model.named_parameters():
            if pname.endswith("norm.weight"):
                p.copy_(1 + 0.2 * torch.randn(p.shape, generator=g, dtype=torch.float64))
            elif pname.endswith("mlp.gate.weight"):  # the router: scores spread enough to choose clearly
                p.copy_(0.6 * torch.randn(p.shape, generator=g, dtype=torch.float64))
            else:
                p.copy_((0.5 if "embed" in pname else 0.3) * torch.randn(p.shape, generator=g, dtype=torch.float64))
    if kind == "deepseek":
        for i in range(o["first_k_dense_replace"], o["n_layers"]):
            model.model.layers[i].mlp = DeepSeekStyleMoE(o, g)
    return model


def moe_layers(o: dict) -> list[int]:
    return list(range(o.get("first_k_dense_replace", 0), o["n_layers"]))


def router_inputs(model: torch.nn.Module, ids: torch.Tensor) -> dict[int, torch.Tensor]:
    """Each layer's MLP input (post_attention_layernorm's output), at every position."""
    got: dict[int, torch.Tensor] = {}
    hooks = [layer.post_attention_layernorm.register_forward_hook(
        lambda m, a, out, i=i: got.__setitem__(i, out.detach().reshape(-1, out.shape[-1])))
        for i, layer in enumerate(model.model.layers)]
    with torch.no_grad():
        model(ids)
    for h in hooks:
        h.remove()
    return got


def choosing(kind: str, layer: torch.nn.Module, h: torch.Tensor) -> torch.Tensor:
    """The scores the choice ranks, at every position (N, E)."""
    if kind == "deepseek":
        m = layer.mlp
        return torch.sigmoid(h @ m.router.T) + m.bias
    return h @ layer.mlp.gate.weight.T  # softmax is monotone: ranking the logits ranks the probabilities


def set_score(kind: str, layer: torch.nn.Module, h: torch.Tensor, p: int, e: int, target: float) -> None:
    """Move router row e so that expert e's choosing score at position p is ``target``."""
    if kind == "deepseek":
        m = layer.mlp
        s = target - float(m.bias[e])
        assert 0 < s < 1, s
        logit, w = float(np.log(s / (1 - s))), m.router
    else:
        logit, w = target, layer.mlp.gate.weight
    x = h[p]
    with torch.no_grad():
        w[e] += (logit - float(w[e] @ x)) / float(x @ x) * x


def near_ties(kind: str, model: torch.nn.Module, o: dict, ids: torch.Tensor) -> list[dict]:
    """Make, in each MoE layer, the last expert chosen and the first not chosen nearly tie at one position (and,
    with groups, the last group kept and the first dropped at another); return the gaps reached. A move that
    would undo an earlier tie (a router row moves every position's score) is taken back and another tried."""
    k, out = o["experts_per_token"], []
    with torch.no_grad():
        for i in moe_layers(o):
            layer = model.model.layers[i]
            h = router_inputs(model, ids)[i]  # moving this layer's router does not change its input
            for p in range(1 + i, h.shape[0]):
                c = allowed(o, choosing(kind, layer, h))[p]
                order = c.argsort(descending=True)
                last, first_out = int(order[k - 1]), int(order[k])
                target = float(c[last]) - GAP
                if kind != "deepseek" or 0 < target - float(layer.mlp.bias[first_out]) < 1:
                    set_score(kind, layer, h, p, first_out, target)
                    break
            if o.get("n_group", 1) > 1:
                G, size = o["n_group"], o["n_experts"] // o["n_group"]
                candidates = []  # (position, expert): raise one of the dropped group's two best to the tie
                for q in range(h.shape[0]):
                    c = choosing(kind, layer, h)[q]
                    groups = c.view(G, size).topk(2).values.sum(-1)
                    order = groups.argsort(descending=True)
                    kept, dropped = int(order[o["topk_group"] - 1]), int(order[o["topk_group"]])
                    for j in c.view(G, size)[dropped].topk(2).indices.tolist():
                        e = dropped * size + j
                        candidates.append((q, e, float(c[e] + groups[kept] - groups[dropped]) - GAP))
                for q, e, target in candidates:
                    if q == p or not 0 < target - float(layer.mlp.bias[e]) < 1:
                        continue
                    saved = layer.mlp.router.clone()
                    set_score(kind, layer, h, q, e, target)
                    gaps = reached(o, choosing(kind, layer, h))
                    if gaps[0][p] < 2 * GAP and gaps[1][q] < 2 * GAP:
                        break
                    layer.mlp.router.copy_(saved)
        for i in moe_layers(o):  # what was reached, after every move
            expert, group = reached(o, choosing(kind, model.model.layers[i], router_inputs(model, ids)[i]))
            out.append(dict(layer=i, position=int(expert.argmin()), expert_gap=float(expert.min()),
                            group_gap=float(group.min()) if group is not None else float("nan")))
    return out


def reached(o: dict, c: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor | None]:
    """At every position, the gap between the last expert chosen and the first not chosen, and (with groups)
    between the last group kept and the first dropped."""
    k = o["experts_per_token"]
    top = allowed(o, c).sort(dim=-1, descending=True).values
    group = None
    if o.get("n_group", 1) > 1:
        g = c.view(c.shape[0], o["n_group"], -1).topk(2, dim=-1).values.sum(-1).sort(dim=-1, descending=True).values
        group = g[:, o["topk_group"] - 1] - g[:, o["topk_group"]]
    return top[:, k - 1] - top[:, k], group


def allowed(o: dict, c: torch.Tensor) -> torch.Tensor:
    """The choosing scores (N, E) with the experts of the dropped groups at −inf (all of them without groups)."""
    G = o.get("n_group", 1)
    if G == 1:
        return c
    size = o["n_experts"] // G
    groups = c.view(-1, G, size).topk(2, dim=-1).values.sum(-1)
    keep = torch.zeros_like(groups).scatter(1, groups.topk(o["topk_group"], dim=-1).indices, 1.0)
    return c.masked_fill(~keep.repeat_interleave(size, dim=1).bool(), float("-inf"))


# --- explain's names ------------------------------------------------------------------------------------------
def to_explain(kind: str, model: torch.nn.Module, o: dict, grads: bool = False) -> dict[str, np.ndarray]:
    """Every parameter (or its gradient) under explain's name and in explain's layout."""
    sd = {n: (p.grad if grads else p).detach().numpy() for n, p in model.named_parameters()}
    h, kv, d = o["n_heads"], o["n_kv_heads"], o["d_model"]
    m = d // h
    out = {"W_E": sd["model.embed_tokens.weight"], "ln_final.w": sd["model.norm.weight"]}
    if not o["tie_embeddings"]:
        out["unembed.W_U"] = sd["lm_head.weight"].T
    for i in range(o["n_layers"]):
        hf, ex = f"model.layers.{i}.", f"blocks.{i}."
        out[ex + "ln1.w"] = sd[hf + "input_layernorm.weight"]
        out[ex + "ln2.w"] = sd[hf + "post_attention_layernorm.weight"]
        for s, n in (("q", h), ("k", kv), ("v", kv)):
            w = sd[hf + f"self_attn.{s}_proj.weight"]  # [n·m, d]: head j is rows j·m … j·m + m − 1
            out[ex + f"attn.W_{s.upper()}"] = w.reshape(n, m, d).transpose(0, 2, 1)  # (n, d, m)
            if o["qkv_bias"]:
                out[ex + f"attn.b_{s.upper()}"] = sd[hf + f"self_attn.{s}_proj.bias"].reshape(n, m)
        out[ex + "attn.W_O"] = sd[hf + "self_attn.o_proj.weight"].T
        mlp = hf + "mlp."
        if i not in moe_layers(o):
            out[ex + "mlp.W_gate"] = sd[mlp + "gate_proj.weight"].T
            out[ex + "mlp.W_in"] = sd[mlp + "up_proj.weight"].T
            out[ex + "mlp.W_out"] = sd[mlp + "down_proj.weight"].T
            continue
        if kind == "deepseek":
            router, gate, up, down = (sd[mlp + n] for n in ("router", "gate_proj", "up_proj", "down_proj"))
            shared = (sd[mlp + "shared_gate"], sd[mlp + "shared_up"], sd[mlp + "shared_down"])
            if not grads:  # the choosing bias is a buffer: no gradient
                out[ex + "mlp.b_choice"] = model.model.layers[i].mlp.bias.numpy()
        else:
            router = sd[mlp + "gate.weight"]
            f = o.get("moe_d_ff", o["d_ff"])
            gate_up, down = sd[mlp + "experts.gate_up_proj"], sd[mlp + "experts.down_proj"]
            gate, up = gate_up[:, :f], gate_up[:, f:]
            shared = None
            if kind == "qwen2_moe":
                shared = tuple(sd[mlp + f"shared_expert.{n}_proj.weight"] for n in ("gate", "up", "down"))
                out[ex + "mlp.W_shared_gate"] = sd[mlp + "shared_expert_gate.weight"].T  # (d, 1)
        out[ex + "mlp.W_router"] = router.T  # (d, E)
        out[ex + "mlp.experts.W_gate"] = gate.transpose(0, 2, 1)  # (E, d, f): x·W per expert
        out[ex + "mlp.experts.W_in"] = up.transpose(0, 2, 1)
        out[ex + "mlp.experts.W_out"] = down.transpose(0, 2, 1)  # (E, f, d)
        if shared is not None:
            out[ex + "mlp.shared.W_gate"], out[ex + "mlp.shared.W_in"] = shared[0].T, shared[1].T
            out[ex + "mlp.shared.W_out"] = shared[2].T
    return {k: np.ascontiguousarray(v, dtype=np.float64) for k, v in out.items()}


def steps(kind: str, model: torch.nn.Module, o: dict) -> tuple[dict[str, np.ndarray], torch.Tensor]:
    """The forward's values under explain's step names, and the loss."""
    got: dict[str, torch.Tensor] = {}
    hooks = []

    def keep(name, what="out"):
        def hook(mod, args, out):
            got[name] = args[0] if what == "in" else out
        return hook

    for i, layer in enumerate(model.model.layers):
        b = f"blocks.{i}."
        att = layer.self_attn
        for mod, name, what in ((layer.input_layernorm, b + "resid_pre", "in"),
                                (layer.input_layernorm, b + "ln1", "out"), (att.o_proj, b + "attn_out", "out"),
                                (layer.post_attention_layernorm, b + "resid_mid", "in"),
                                (layer.post_attention_layernorm, b + "ln2", "out"), (layer.mlp, b + "mlp_out", "out"),
                                (att.q_proj, b + "attn.q", "out"), (att.k_proj, b + "attn.k", "out"),
                                (att.v_proj, b + "attn.v", "out"), (att.o_proj, b + "attn.concat", "in")):
            hooks.append(mod.register_forward_hook(keep(name, what)))
        if i not in moe_layers(o):
            mlp = layer.mlp
            for mod, name, what in ((mlp.gate_proj, b + "mlp.pre", "out"), (mlp.up_proj, b + "mlp.pre_linear", "out"),
                                    (mlp.down_proj, b + "mlp.post", "in")):
                hooks.append(mod.register_forward_hook(keep(name, what)))
        elif kind == "qwen2_moe":
            mlp = layer.mlp
            se = mlp.shared_expert
            for mod, name, what in ((se.gate_proj, b + "mlp.shared.pre", "out"),
                                    (se.up_proj, b + "mlp.shared.pre_linear", "out"),
                                    (se.down_proj, b + "mlp.shared.post", "in"),
                                    (se.down_proj, b + "mlp.shared.out", "out"),
                                    (mlp.shared_expert_gate, b + "mlp.shared_gate_pre", "out")):
                hooks.append(mod.register_forward_hook(keep(name, what)))
    hooks += [model.model.norm.register_forward_hook(keep("final_in", "in")),
              model.model.norm.register_forward_hook(keep("ln_final")),
              model.lm_head.register_forward_hook(keep("logits"))]
    ROUTERS.clear()
    EXPERTS.clear()
    ATTENTION.clear()
    ids = torch.tensor([TOKENS])
    logits = model(ids).logits  # transformers' own loss casts the logits to float32: the same loss in float64
    loss = F.cross_entropy(logits[0, :-1], ids[0, 1:])
    for hk in hooks:
        hk.remove()
    T, E = len(TOKENS), o.get("n_experts", 0)
    out = {"embed": got["blocks.0.resid_pre"]}
    for n, i in enumerate(moe_layers(o)):
        b = f"blocks.{i}.mlp."
        if kind == "deepseek":
            r = model.model.layers[i].mlp.record
            rec = {k: r[k] for k in ("router_logits", "router_scores", "choice", "kept_weights")}
            experts, shared = r["experts"], r["shared"]
            got.update({b + f"shared.{k}": v for k, v in shared.items()})
        else:
            r = ROUTERS[n]
            choice = torch.zeros(T, E, dtype=torch.float64).scatter(1, r["idx"], 1.0)
            kept = torch.zeros(T, E, dtype=torch.float64).scatter(1, r["idx"], r["weights"])
            rec = dict(router_logits=r["router_logits"], router_scores=r["router_scores"], choice=choice,
                       kept_weights=kept)
            experts = EXPERTS[n]
        got.update({b + k: v for k, v in rec.items()})
        routed = sum(kept_col[:, None] * experts[e]["out"] for e, kept_col in enumerate(rec["kept_weights"].T)
                     if e in experts)
        for key in ("pre", "pre_linear", "post", "out"):  # (1, E, T, width); an expert no token took: all 0
            width = o["d_model"] if key == "out" else o.get("moe_d_ff", o["d_ff"])
            got[b + f"experts.{key}"] = torch.stack([experts[e][key] if e in experts else
                                                     torch.zeros(T, width, dtype=torch.float64) for e in range(E)])[None]
        if kind == "qwen2_moe":
            got[b + "shared_gate"] = torch.sigmoid(got[b + "shared_gate_pre"])
            got[b + "shared_gated"] = got[b + "shared_gate"] * got[b + "shared.out"]
        if kind in ("qwen2_moe", "deepseek"):
            got[b + "routed"] = routed  # (checked through mlp_out; the sum order differs from transformers')
    h, kv, m = o["n_heads"], o["n_kv_heads"], o["d_model"] // o["n_heads"]
    for i in range(o["n_layers"]):
        b = f"blocks.{i}."
        for s, n in (("q", h), ("k", kv), ("v", kv)):
            got[b + f"attn.{s}"] = got[b + f"attn.{s}"].view(1, T, n, m).transpose(1, 2)
        for key, val in ATTENTION[i].items():
            if key not in ("k_rep", "v_rep") or kv < h:  # explain records no repeat when each head has its own
                got[b + "attn." + key] = val
        got[b + "resid_post"] = got[f"blocks.{i + 1}.resid_pre"] if i + 1 < o["n_layers"] else got["final_in"]
        out.update({k: v for k, v in got.items() if k.startswith(b) and not k.endswith("resid_pre")})
    out.update(ln_final=got["ln_final"], logits=got["logits"], loss=loss)
    return {k: v.detach().numpy().astype(np.float64) for k, v in out.items()}, loss


def generate(model: torch.nn.Module) -> np.ndarray:
    with torch.no_grad():
        gen = model.generate(torch.tensor([TOKENS]), do_sample=False, max_new_tokens=NEW, min_new_tokens=NEW,
                             attention_mask=torch.ones(1, len(TOKENS), dtype=torch.long))
    return gen[0, len(TOKENS):].numpy().astype(np.int64)


def greedy(model: torch.nn.Module, ids: list[int], n: int) -> list[int]:
    """Greedy tokens by running the whole text again each time (the DeepSeek-style module has no cache to mind)."""
    out = list(ids)
    with torch.no_grad():
        for _ in range(n):
            out.append(int(model(torch.tensor([out])).logits[0, -1].argmax()))
    return out[len(ids):]


# --- Hugging Face folders and config files -------------------------------------------------------------------------
FOLDER = dict(d_model=32, n_heads=4, n_kv_heads=2, n_layers=2, d_ff=24, d_vocab=300, tie_embeddings=False,
              qkv_bias=False, rope_theta=1000000.0, ln_eps=1e-5, n_ctx=64, n_experts=4, experts_per_token=2,
              router="softmax", norm_topk_prob=True)
FOLDER_QWEN = dict(d_model=16, n_heads=2, n_kv_heads=1, n_layers=2, d_ff=24, d_vocab=300, tie_embeddings=True,
                   qkv_bias=True, rope_theta=1000000.0, ln_eps=1e-6, n_ctx=64, n_experts=4, experts_per_token=2,
                   router="softmax", norm_topk_prob=False, moe_d_ff=8, n_shared_experts=1, shared_d_ff=20,
                   shared_expert_gate=True,
                   first_k_dense_replace=0)
TEXT = "The capital of France is Paris. In 2024, 1234 cafés served crème brûlée; ça coûte 12€!"
ROWS = [0, 25, -1]


def per_expert(sd: dict[str, np.ndarray], prefix: str, names: tuple[str, str, str]) -> dict:
    """transformers 5's stacked experts (gate_up_proj [E, 2f, d], down_proj [E, d, f]) as one tensor per expert
    (``experts.E.`` + names: w1/w3/w2 for Mixtral, gate_proj/up_proj/down_proj for Qwen2-MoE)."""
    out = {}
    for key in [k for k in sd if k.endswith("experts.gate_up_proj")]:
        layer = key[: -len("mlp.experts.gate_up_proj")]
        gate_up, down = sd[key], sd[layer + "mlp.experts.down_proj"]
        f = gate_up.shape[1] // 2
        for e in range(gate_up.shape[0]):
            base = f"{layer}{prefix}.experts.{e}."
            out[base + f"{names[0]}.weight"] = np.ascontiguousarray(gate_up[e, :f])
            out[base + f"{names[1]}.weight"] = np.ascontiguousarray(gate_up[e, f:])
            out[base + f"{names[2]}.weight"] = np.ascontiguousarray(down[e])
    return out


def folder(name: str, kind: str, o: dict, layout: str) -> None:
    """A folder for the checkpoint reader: config.json, model.safetensors (float32) in ``layout`` ("per-expert"
    or "stacked"), the llama fixtures' tokenizer.json, and what transformers computes from that folder."""
    model = build(name, kind, o).float()  # the file holds float32; transformers reads it back as float64 below
    path = OUT / name
    path.mkdir(parents=True, exist_ok=True)
    model.config.save_pretrained(path)
    sd = {k: v.detach().numpy() for k, v in model.state_dict().items()}
    if layout == "per-expert":
        if kind == "mixtral":
            moe = per_expert(sd, "block_sparse_moe", ("w1", "w3", "w2"))
            sd = {k.replace(".mlp.gate.", ".block_sparse_moe.gate."): v for k, v in sd.items()
                  if "experts.gate_up_proj" not in k and "experts.down_proj" not in k}
        else:
            moe = per_expert(sd, "mlp", ("gate_proj", "up_proj", "down_proj"))
            sd = {k: v for k, v in sd.items() if "experts.gate_up_proj" not in k and "experts.down_proj" not in k}
        sd.update(moe)
    if o["tie_embeddings"]:
        sd.pop("lm_head.weight", None)
    save_file({k: np.ascontiguousarray(v) for k, v in sd.items()}, str(path / "model.safetensors"),
              metadata={"format": "pt"})
    shutil.copy(HERE / "llama" / "hf_llama" / "tokenizer.json", path / "tokenizer.json")
    from tokenizers import Tokenizer

    ids = Tokenizer.from_file(str(path / "tokenizer.json")).encode(TEXT).ids
    # transformers reads the folder back (either layout), so the expected values are of what the file holds
    cls = MixtralForCausalLM if kind == "mixtral" else Qwen2MoeForCausalLM
    back = cls.from_pretrained(path, dtype=torch.float64, attn_implementation="eager",
                               experts_implementation="eager").eval()
    with torch.no_grad():
        logits = back(torch.tensor([ids])).logits[0].numpy()
        gen = back.generate(torch.tensor([ids]), do_sample=False, max_new_tokens=4, min_new_tokens=4,
                            attention_mask=torch.ones(1, len(ids), dtype=torch.long))
    np.savez(path / "expected.npz", ids=np.array(ids, dtype=np.int64), logits=logits[ROWS].astype(np.float64),
             generated=gen[0, len(ids):].numpy().astype(np.int64), text=np.array(TEXT))
    (path / "generation_config.json").unlink(missing_ok=True)
    print(f"{name} ({layout}): {len(ids)} tokens, generated {gen[0, len(ids):].tolist()}, "
          f"tensors {len(sd)}")


REAL = {  # config.json files alone (the published sizes), for `explain shapes --checkpoint DIR`
    "mixtral-8x7b": dict(architectures=["MixtralForCausalLM"], model_type="mixtral", vocab_size=32000,
                         hidden_size=4096, intermediate_size=14336, num_hidden_layers=32, num_attention_heads=32,
                         num_key_value_heads=8, num_local_experts=8, num_experts_per_tok=2,
                         max_position_embeddings=32768, rms_norm_eps=1e-5, rope_theta=1000000.0, sliding_window=None,
                         tie_word_embeddings=False, hidden_act="silu", bos_token_id=1, eos_token_id=2,
                         torch_dtype="bfloat16"),
    "qwen1.5-moe-a2.7b": dict(architectures=["Qwen2MoeForCausalLM"], model_type="qwen2_moe", vocab_size=151936,
                              hidden_size=2048, intermediate_size=5632, moe_intermediate_size=1408,
                              shared_expert_intermediate_size=5632, num_hidden_layers=24, num_attention_heads=16,
                              num_key_value_heads=16, num_experts=60, num_experts_per_tok=4, norm_topk_prob=False,
                              decoder_sparse_step=1, max_position_embeddings=8192, rms_norm_eps=1e-6,
                              rope_theta=1000000.0, use_sliding_window=False, sliding_window=32768,
                              tie_word_embeddings=False, hidden_act="silu", torch_dtype="bfloat16"),
}


def counts() -> dict:
    """Each REAL config's parameters as transformers counts them on the meta device."""
    out = {}
    for name, cfg in REAL.items():
        cls, ccls = (MixtralForCausalLM, MixtralConfig) if cfg["model_type"] == "mixtral" else \
            (Qwen2MoeForCausalLM, Qwen2MoeConfig)
        config = ccls(**{k: v for k, v in cfg.items() if k not in ("architectures", "model_type", "torch_dtype")})
        with torch.device("meta"):
            model = cls(config)
        total = sum(p.numel() for p in model.parameters())
        experts = sum(p.numel() for n, p in model.named_parameters() if ".mlp.experts." in n)
        E, k = cfg.get("num_local_experts", cfg.get("num_experts")), cfg["num_experts_per_tok"]
        out[name] = dict(total=total, routed_experts=experts, active=total - experts * (E - k) // E)
        path = OUT / "configs" / name
        path.mkdir(parents=True, exist_ok=True)
        (path / "config.json").write_text(json.dumps(cfg, indent=2) + "\n")
        print(f"{name}: {total:,} parameters, {out[name]['active']:,} active")
    return out


def main() -> None:
    OUT.mkdir(exist_ok=True)
    ids = torch.tensor([TOKENS])
    for name, (kind, o) in CONFIGS.items():
        model = build(name, kind, o)
        ties = near_ties(kind, model, o, ids)
        if kind == "deepseek":
            for i in moe_layers(o):
                h = router_inputs(model, ids)[i]
                diff = check_against_transformers(model.model.layers[i].mlp, h[None])
                assert diff < 1e-12, diff
                print(f"{name} layer {i}: the module against transformers' DeepseekV3MoE: {diff:.1e}")
        expected, loss = steps(kind, model, o)
        model.zero_grad()
        loss.backward()
        expected.update({f"grad:{k}": v for k, v in to_explain(kind, model, o, grads=True).items()})
        expected["generated"] = generate(model) if kind != "deepseek" else np.array(greedy(model, TOKENS, NEW))
        if kind != "deepseek":  # the cache and the whole text again agree
            assert expected["generated"].tolist() == greedy(model, TOKENS, NEW)
        expected["tokens"] = np.array(TOKENS, dtype=np.int64)
        expected["near_ties"] = np.array([[t["layer"], t["position"], t["expert_gap"], t["group_gap"]]
                                          for t in ties])  # per MoE layer: the smallest gaps and where
        np.savez_compressed(OUT / f"{name}_weights.npz", **to_explain(kind, model, o))
        np.savez_compressed(OUT / f"{name}_expected.npz", **expected)
        (OUT / f"{name}_config.json").write_text(json.dumps(o, indent=1) + "\n")
        print(f"{name}: loss {loss.item():.6f}, generated {expected['generated'].tolist()}, near ties {ties}")
    folder("hf_mixtral", "mixtral", FOLDER, "per-expert")
    folder("hf_mixtral_stacked", "mixtral", FOLDER, "stacked")
    folder("hf_qwen2_moe", "qwen2_moe", FOLDER_QWEN, "per-expert")
    (OUT / "configs").mkdir(exist_ok=True)
    (OUT / "configs" / "counts.json").write_text(json.dumps(counts(), indent=1) + "\n")


if __name__ == "__main__":
    main()
