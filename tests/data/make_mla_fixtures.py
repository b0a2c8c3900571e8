"""Make ``tests/data/mla/``: what transformers' DeepseekV3ForCausalLM computes, in float64, for the configs
``explain``'s ``llama --attention mla`` is checked against (tests/models/test_mla_reference.py).

This is a script, not a test. It needs torch and transformers 5 (not dependencies of explain); run it once with
the fixture venv::

    /work/torchenv/bin/python tests/data/make_mla_fixtures.py

For each config (``CONFIGS``) it writes ``mla/<name>_config.json`` (explain's options), ``mla/<name>_weights.npz``
(random weights under explain's parameter names, converted by a mapping written here independently of explain's
checkpoint reader; the mixture of experts in issue 43's layout, the choosing bias as ``mlp.b_choice``) and
``mla/<name>_expected.npz``: the steps (named as explain names them), ``grad:<param>`` (every parameter's
gradient of the loss, by autograd; the choosing bias has none), the router's group scores (``moe:…``), and
``generated`` (``generate(do_sample=False)``'s new tokens, with the cache) with ``generated_logits``.

Latent attention (DeepSeek-V2 §2.1): queries through a rank-``q_lora_rank`` bottleneck with an RMSNorm; keys and
values from one latent of width ``kv_lora_rank`` (RMS-normed) and one rotary key of ``qk_rope_head_dim`` shared
by every head. Where explain's steps and transformers' tensors differ only in layout, it is undone here:

* transformers' interleaved rotation (``rope_interleave``) turns pairs (2i, 2i+1) and returns them de-interleaved
  (the rotated even dimensions, then the odd ones); explain turns the pairs in place, so the rotated query and
  key parts are put back in place here (a permutation of the last axis; every dot product is the same).
* ``kv_b_proj`` holds each head's no-rope key rows then its value rows; explain's ``W_UK`` and ``W_UV`` are the
  two parts (the paper's W^UK and W^UV).

transformers computes in float32, even in a float64 model: RMSNorm (a cast), the rotary frequencies and angles,
the attention softmax, and the router (``F.linear(h.float(), w.float()).sigmoid()``, its correction bias a
float32 buffer). Those forwards are patched here to compute in the model's dtype, the same formulas; otherwise
the reference would carry float32 rounding (1e-7) and could not check 1e-10. The experts run eagerly (the
grouped kernel has no float64). The loss is torch's cross_entropy on the float64 logits.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import torch
import transformers.models.deepseek_v3.modeling_deepseek_v3 as md
from transformers import DeepseekV3Config, DeepseekV3ForCausalLM

OUT = Path(__file__).resolve().parent / "mla"
TOKENS = [3, 41, 4, 17, 5, 9, 2]
NEW = 6
# name -> explain's options (the MoE ones as issue 43 names them) and the Hugging Face config's extra keys.
# Widths all differ (d_model 16, q rank 12, kv rank 8, no-rope 6, rope 4, value 5) so a mixed-up axis fails.
CONFIGS = {
    # DeepSeek-V3's block in small: latent attention, a dense first layer, then the grouped sigmoid router with a
    # choosing bias off zero, its scaling and a shared expert
    "v3": dict(d_model=16, n_heads=4, n_layers=2, d_ff=24, d_vocab=48, tie_embeddings=False, rope_theta=10000.0,
               ln_eps=1e-5, attention="mla", q_lora_rank=12, kv_lora_rank=8, qk_nope_head_dim=6,
               qk_rope_head_dim=4, v_head_dim=5,
               n_experts=8, experts_per_token=2, n_shared_experts=1, norm_topk_prob=True, router="sigmoid",
               n_group=4, topk_group=2, routed_scaling_factor=2.5, first_k_dense_replace=1, moe_d_ff=6),
    # latent attention on dense blocks only (first_k_dense_replace = every layer), tied, another θ
    "dense": dict(d_model=16, n_heads=2, n_layers=2, d_ff=20, d_vocab=46, tie_embeddings=True, rope_theta=50000.0,
                  ln_eps=1e-6, attention="mla", q_lora_rank=10, kv_lora_rank=6, qk_nope_head_dim=4,
                  qk_rope_head_dim=6, v_head_dim=7),
    # the same with the rotate-half layout (rope_interleave false): explain's --rope-layout half
    "half": dict(d_model=12, n_heads=3, n_layers=1, d_ff=16, d_vocab=47, tie_embeddings=False, rope_theta=10000.0,
                 ln_eps=1e-6, attention="mla", q_lora_rank=8, kv_lora_rank=6, qk_nope_head_dim=4,
                 qk_rope_head_dim=4, v_head_dim=3, rope_layout="half"),
}


# --- float64 everywhere (see the docstring) ------------------------------------------------------------------
def rms_forward(self, x):
    return self.weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.variance_epsilon))


def rope_forward(self, x, position_ids):
    dim = self.config.qk_rope_head_dim
    theta = self.config.rope_parameters["rope_theta"]
    inv = 1.0 / (theta ** (torch.arange(0, dim, 2, dtype=torch.float64) / dim))
    freqs = position_ids[..., None].to(torch.float64) * inv
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos().to(x.dtype), emb.sin().to(x.dtype)


def router_forward(self, hidden_states):
    """DeepseekV3TopkRouter.forward in the input's dtype (the original casts to float32)."""
    hidden_states = hidden_states.view(-1, self.hidden_dim)
    router_logits = torch.nn.functional.linear(hidden_states, self.weight)
    scores = router_logits.sigmoid()
    scores_for_choice = scores + self.e_score_correction_bias
    group_scores = (scores_for_choice.view(-1, self.num_group, self.num_experts // self.num_group)
                    .topk(2, dim=-1)[0].sum(dim=-1))
    group_idx = torch.topk(group_scores, k=self.topk_group, dim=-1, sorted=False)[1]
    group_mask = torch.zeros_like(group_scores)
    group_mask.scatter_(1, group_idx, 1)
    score_mask = (group_mask.unsqueeze(-1).expand(-1, self.num_group, self.num_experts // self.num_group)
                  .reshape(-1, self.num_experts))
    scores_for_choice = scores_for_choice.masked_fill(~score_mask.bool(), float("-inf"))
    topk_indices = torch.topk(scores_for_choice, k=self.top_k, dim=-1, sorted=False)[1]
    topk_weights = scores.gather(1, topk_indices)
    if self.norm_topk_prob:
        topk_weights = topk_weights / (topk_weights.sum(dim=-1, keepdim=True) + 1e-20)
    topk_weights = topk_weights * self.routed_scaling_factor
    ROUTER.append(dict(router_logits=router_logits, scores=scores, choice_scores=scores + self.e_score_correction_bias,
                       group_scores=group_scores, topk_indices=topk_indices, topk_weights=topk_weights))
    return router_logits, topk_weights, topk_indices


CAPTURED: list[dict] = []  # one dict per attention call, in order
ROUTER: list[dict] = []  # one dict per router call, in order


def eager(module, query, key, value, attention_mask, scaling, dropout=0.0, **kwargs):
    scores = torch.matmul(query, key.transpose(2, 3))
    w = scores * scaling
    if attention_mask is not None:
        w = w + attention_mask
    w = torch.softmax(w, dim=-1)
    z = torch.matmul(w, value)
    CAPTURED.append(dict(query=query, key=key, value=value, scores=scores, scaled=scores * scaling, pattern=w, z=z))
    return z.transpose(1, 2).contiguous(), w


md.DeepseekV3RMSNorm.forward = rms_forward
md.DeepseekV3RotaryEmbedding.forward = rope_forward
md.DeepseekV3TopkRouter.forward = router_forward
md.eager_attention_forward = eager


def hf_config(o: dict) -> DeepseekV3Config:
    moe = o if o.get("n_experts") else None
    n = o["n_layers"]
    return DeepseekV3Config(
        vocab_size=o["d_vocab"], hidden_size=o["d_model"], intermediate_size=o["d_ff"], num_hidden_layers=n,
        num_attention_heads=o["n_heads"], num_key_value_heads=o["n_heads"], rms_norm_eps=o["ln_eps"],
        max_position_embeddings=o.get("n_ctx", 32), tie_word_embeddings=o["tie_embeddings"],
        rope_parameters={"rope_type": "default", "rope_theta": o["rope_theta"]},
        rope_interleave=o.get("rope_layout", "interleaved") == "interleaved",
        q_lora_rank=o["q_lora_rank"], kv_lora_rank=o["kv_lora_rank"], qk_nope_head_dim=o["qk_nope_head_dim"],
        qk_rope_head_dim=o["qk_rope_head_dim"], v_head_dim=o["v_head_dim"],
        first_k_dense_replace=moe["first_k_dense_replace"] if moe else n,
        n_routed_experts=moe["n_experts"] if moe else 4, num_experts_per_tok=moe["experts_per_token"] if moe else 2,
        n_shared_experts=moe["n_shared_experts"] if moe else 1, n_group=moe["n_group"] if moe else 1,
        topk_group=moe["topk_group"] if moe else 1, norm_topk_prob=moe["norm_topk_prob"] if moe else True,
        routed_scaling_factor=moe["routed_scaling_factor"] if moe else 1.0,
        moe_intermediate_size=moe["moe_d_ff"] if moe else 4,
        num_mtp_layers=0, attn_implementation="eager", experts_implementation="eager",
        bos_token_id=None, eos_token_id=None, pad_token_id=None)


def build(name: str, o: dict) -> torch.nn.Module:
    model = DeepseekV3ForCausalLM(hf_config(o)).double().eval()
    g = torch.Generator().manual_seed(sum(map(ord, name)))
    with torch.no_grad():  # weights large enough that every step's numbers differ visibly
        for pname, p in model.named_parameters():
            if pname.endswith(("norm.weight", "layernorm.weight")):
                p.copy_(1 + 0.2 * torch.randn(p.shape, generator=g, dtype=torch.float64))
            else:
                p.copy_((0.5 if "embed" in pname else 0.3) * torch.randn(p.shape, generator=g, dtype=torch.float64))
        for layer in model.model.layers:  # the choosing bias off zero, so it changes which experts are chosen
            if isinstance(layer.mlp, md.DeepseekV3MoE):
                bias = layer.mlp.gate.e_score_correction_bias
                bias.data = 0.3 * torch.randn(bias.shape, generator=g, dtype=torch.float64)
    return model


def deinterleaved_back(x: torch.Tensor) -> torch.Tensor:
    """transformers' interleaved rotation returns (rotated evens, rotated odds): the pairs put back in place."""
    half = x.shape[-1] // 2
    out = torch.empty_like(x)
    out[..., 0::2], out[..., 1::2] = x[..., :half], x[..., half:]
    return out


def to_explain(model: torch.nn.Module, o: dict, grads: bool = False) -> dict[str, np.ndarray]:
    """Every parameter (or its gradient) under explain's name and in explain's layout."""
    sd = {n: (p.grad if grads else p).detach().numpy() for n, p in model.named_parameters()}
    h = o["n_heads"]
    dn, dr, dv = o["qk_nope_head_dim"], o["qk_rope_head_dim"], o["v_head_dim"]
    r, rq = o["kv_lora_rank"], o["q_lora_rank"]
    out = {"W_E": sd["model.embed_tokens.weight"], "ln_final.w": sd["model.norm.weight"]}
    if not o["tie_embeddings"]:
        out["unembed.W_U"] = sd["lm_head.weight"].T
    for i in range(o["n_layers"]):
        hf, ex = f"model.layers.{i}.", f"blocks.{i}."
        a = hf + "self_attn."
        out[ex + "ln1.w"] = sd[hf + "input_layernorm.weight"]
        out[ex + "ln2.w"] = sd[hf + "post_attention_layernorm.weight"]
        out[ex + "attn.W_DQ"] = sd[a + "q_a_proj.weight"].T  # (d, rq)
        out[ex + "attn.ln_q.w"] = sd[a + "q_a_layernorm.weight"]
        out[ex + "attn.W_UQ"] = sd[a + "q_b_proj.weight"].reshape(h, dn + dr, rq).transpose(0, 2, 1)  # (h, rq, dn+dr)
        out[ex + "attn.W_DKV"] = sd[a + "kv_a_proj_with_mqa.weight"].T[None]  # (1, d, r+dr): one shared head
        out[ex + "attn.ln_kv.w"] = sd[a + "kv_a_layernorm.weight"]
        kvb = sd[a + "kv_b_proj.weight"].reshape(h, dn + dv, r)  # head j: dn key rows, then dv value rows
        out[ex + "attn.W_UK"] = kvb[:, :dn].transpose(0, 2, 1)  # (h, r, dn)
        out[ex + "attn.W_UV"] = kvb[:, dn:].transpose(0, 2, 1)  # (h, r, dv)
        out[ex + "attn.W_O"] = sd[a + "o_proj.weight"].T  # (h·dv, d)
        if hf + "mlp.gate_proj.weight" in sd:
            out[ex + "mlp.W_gate"] = sd[hf + "mlp.gate_proj.weight"].T
            out[ex + "mlp.W_in"] = sd[hf + "mlp.up_proj.weight"].T
            out[ex + "mlp.W_out"] = sd[hf + "mlp.down_proj.weight"].T
        else:  # issue 43's layout: the router (d, E), every expert's (E, d, f) / (E, f, d), the shared expert
            m, f = hf + "mlp.", o["moe_d_ff"]
            out[ex + "mlp.W_router"] = sd[m + "gate.weight"].T
            gate_up, down = sd[m + "experts.gate_up_proj"], sd[m + "experts.down_proj"]  # [E, 2f, d], [E, d, f]
            out[ex + "mlp.experts.W_gate"] = gate_up[:, :f].transpose(0, 2, 1)
            out[ex + "mlp.experts.W_in"] = gate_up[:, f:].transpose(0, 2, 1)
            out[ex + "mlp.experts.W_out"] = down.transpose(0, 2, 1)
            for ours, theirs in (("W_gate", "gate_proj"), ("W_in", "up_proj"), ("W_out", "down_proj")):
                out[ex + f"mlp.shared.{ours}"] = sd[m + f"shared_experts.{theirs}.weight"].T
    return {k: np.ascontiguousarray(v, dtype=np.float64) for k, v in out.items()}


def steps(model: torch.nn.Module, o: dict) -> tuple[dict[str, np.ndarray], torch.Tensor]:
    """The forward's intermediate values under explain's step names, and the loss."""
    got: dict[str, torch.Tensor] = {}
    hooks = []

    def keep(name, what="out"):
        def hook(mod, args, out):
            got[name] = args[0] if what == "in" else out
        return hook

    h, T = o["n_heads"], len(TOKENS)
    dn, dr, r = o["qk_nope_head_dim"], o["qk_rope_head_dim"], o["kv_lora_rank"]
    interleaved = o.get("rope_layout", "interleaved") == "interleaved"
    moe_layers = []
    for i, layer in enumerate(model.model.layers):
        b = f"blocks.{i}."
        att, mlp = layer.self_attn, layer.mlp
        mods = [(layer.input_layernorm, b + "resid_pre", "in"), (layer.input_layernorm, b + "ln1", "out"),
                (att.q_a_proj, b + "attn.q_a", "out"), (att.q_a_layernorm, b + "attn.ln_q", "out"),
                (att.q_b_proj, b + "attn.q", "out"), (att.kv_a_proj_with_mqa, b + "attn.kv_a", "out"),
                (att.kv_a_layernorm, b + "attn.ln_kv", "out"), (att.o_proj, b + "attn.concat", "in"),
                (att.o_proj, b + "attn_out", "out"), (layer.post_attention_layernorm, b + "resid_mid", "in"),
                (layer.post_attention_layernorm, b + "ln2", "out")]
        if isinstance(mlp, md.DeepseekV3MoE):
            moe_layers.append(i)
            sh = mlp.shared_experts
            mods += [(mlp, b + "mlp_out", "out"), (sh.gate_proj, b + "mlp.shared.pre", "out"),
                     (sh.up_proj, b + "mlp.shared.pre_linear", "out"), (sh.down_proj, b + "mlp.shared.post", "in"),
                     (sh.down_proj, b + "mlp.shared.out", "out"), (mlp.experts, b + "mlp.routed", "out")]
        else:
            mods += [(mlp.gate_proj, b + "mlp.pre", "out"), (mlp.up_proj, b + "mlp.pre_linear", "out"),
                     (mlp.down_proj, b + "mlp.post", "in"), (mlp.down_proj, b + "mlp_out", "out")]
        hooks += [m.register_forward_hook(keep(name, what)) for m, name, what in mods]
    hooks += [model.model.norm.register_forward_hook(keep("final_in", "in")),
              model.model.norm.register_forward_hook(keep("ln_final")),
              model.lm_head.register_forward_hook(keep("logits"))]
    CAPTURED.clear()
    ROUTER.clear()
    ids = torch.tensor([TOKENS])
    logits = model(ids).logits
    loss = torch.nn.functional.cross_entropy(logits[0, :-1], ids[0, 1:])
    for hk in hooks:
        hk.remove()
    put_back = deinterleaved_back if interleaved else (lambda x: x)
    out = {"embed": got["blocks.0.resid_pre"]}
    for i in range(o["n_layers"]):
        b = f"blocks.{i}."
        cap = CAPTURED[i]
        q = got[b + "attn.q"].view(1, T, h, dn + dr).transpose(1, 2)  # (B, h, T, dn+dr), rope part as stored
        kv_a = got[b + "attn.kv_a"].view(1, 1, T, r + dr)  # (B, 1, T, r+dr): one head shared by all
        rot_q = put_back(cap["query"][..., dn:])
        rot_k = put_back(cap["key"][:, :1, :, dn:])  # every head's copy is the one shared rotary key
        k_nope = cap["key"][..., :dn]
        q_nope = q[..., :dn]
        got.update({
            b + "attn.q": q, b + "attn.q_nope": q_nope, b + "attn.q_rope": q[..., dn:], b + "attn.rot_q": rot_q,
            b + "attn.kv_a": kv_a, b + "attn.kv_latent": kv_a[..., :r], b + "attn.k_rope": kv_a[..., r:],
            b + "attn.ln_kv": got[b + "attn.ln_kv"].view(1, 1, T, r), b + "attn.rot_k": rot_k,
            b + "attn.k_nope": k_nope, b + "attn.v": cap["value"],
            b + "attn.scores_nope": q_nope @ k_nope.transpose(-1, -2),
            b + "attn.scores_rope": rot_q @ rot_k.transpose(-1, -2),
            b + "attn.scores": cap["scores"], b + "attn.scaled": cap["scaled"], b + "attn.pattern": cap["pattern"],
            b + "attn.z": cap["z"]})
        got[b + "resid_post"] = got[f"blocks.{i + 1}.resid_pre"] if i + 1 < o["n_layers"] else got["final_in"]
        out.update({k: v for k, v in got.items() if k.startswith(b) and not k.endswith("resid_pre")})
    for i, rt in zip(moe_layers, ROUTER):  # the router's values: (B·T, E) rows, as explain's (B, T, E)
        b = f"blocks.{i}.mlp."
        E = o["n_experts"]
        chosen = torch.zeros(T, E, dtype=torch.float64).scatter(1, rt["topk_indices"], 1.0)
        kept = torch.zeros(T, E, dtype=torch.float64).scatter(1, rt["topk_indices"], rt["topk_weights"])
        out.update({b + "router_logits": rt["router_logits"].view(1, T, E),
                    b + "router_scores": rt["scores"].view(1, T, E), b + "choice": chosen.view(1, T, E),
                    b + "kept_weights": kept.view(1, T, E)})
        out[f"moe:{b}group_scores"] = rt["group_scores"]  # no step of explain's: for a tutorial's numbers
    out.update(ln_final=got["ln_final"], logits=got["logits"], loss=loss)
    return {k: v.detach().numpy().astype(np.int64 if v.dtype == torch.int64 else np.float64)
            for k, v in out.items()}, loss


# --- Hugging Face folders and DeepSeek-V3's config.json -----------------------------------------------------------
FOLDER = dict(d_model=32, n_heads=4, n_layers=2, d_ff=24, d_vocab=300, tie_embeddings=False, rope_theta=10000.0,
              ln_eps=1e-6, attention="mla", q_lora_rank=12, kv_lora_rank=8, qk_nope_head_dim=6, qk_rope_head_dim=4,
              v_head_dim=5, n_experts=8, experts_per_token=2, n_shared_experts=1, norm_topk_prob=True,
              router="sigmoid", n_group=4, topk_group=2, routed_scaling_factor=2.5, first_k_dense_replace=1,
              moe_d_ff=6, n_ctx=64)
TEXT = "The capital of France is Paris. In 2024, 1234 cafés served crème brûlée; ça coûte 12€!"
ROWS = [0, 25, -1]
# DeepSeek-V3's config.json as published (deepseek-ai/DeepSeek-V3; auto_map and quantization_config left out):
# transformers' DeepseekV3Config defaults are these sizes; the rope scaling (YaRN) does not change a shape
V3 = dict(architectures=["DeepseekV3ForCausalLM"], model_type="deepseek_v3", vocab_size=129280, hidden_size=7168,
          intermediate_size=18432, moe_intermediate_size=2048, num_hidden_layers=61, num_nextn_predict_layers=1,
          num_attention_heads=128, num_key_value_heads=128, n_shared_experts=1, n_routed_experts=256, ep_size=1,
          routed_scaling_factor=2.5, kv_lora_rank=512, q_lora_rank=1536, qk_rope_head_dim=64, v_head_dim=128,
          qk_nope_head_dim=128, topk_method="noaux_tc", n_group=8, topk_group=4, num_experts_per_tok=8,
          moe_layer_freq=1, first_k_dense_replace=3, norm_topk_prob=True, scoring_func="sigmoid", aux_loss_alpha=0.001,
          seq_aux=True, hidden_act="silu", max_position_embeddings=163840, initializer_range=0.02, rms_norm_eps=1e-6,
          use_cache=True, rope_theta=10000, rope_scaling={"beta_fast": 32, "beta_slow": 1, "factor": 40,
                                                          "mscale": 1.0, "mscale_all_dim": 1.0,
                                                          "original_max_position_embeddings": 4096, "type": "yarn"},
          attention_bias=False, attention_dropout=0.0, bos_token_id=0, eos_token_id=1, tie_word_embeddings=False,
          torch_dtype="bfloat16")


def per_expert(sd: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """transformers 5's stacked experts as one tensor per expert, as DeepSeek's own files store them
    (``mlp.experts.E.gate_proj/up_proj/down_proj.weight``)."""
    out = {}
    for key in [k for k in sd if k.endswith("mlp.experts.gate_up_proj")]:
        layer = key[: -len("experts.gate_up_proj")]
        gate_up, down = sd.pop(key), sd.pop(layer + "experts.down_proj")
        f = gate_up.shape[1] // 2
        for e in range(gate_up.shape[0]):
            out[f"{layer}experts.{e}.gate_proj.weight"] = gate_up[e, :f]
            out[f"{layer}experts.{e}.up_proj.weight"] = gate_up[e, f:]
            out[f"{layer}experts.{e}.down_proj.weight"] = down[e]
    return {**sd, **out}


def folder(name: str, layout: str) -> None:
    """A deepseek_v3 folder for the checkpoint reader: config.json, the weights (float32) in ``layout``
    ("stacked", transformers 5's one model.safetensors; "per-expert", DeepSeek's, in two shards with an index),
    the llama fixtures' tokenizer.json, and what transformers computes from that folder."""
    import shutil

    from safetensors.numpy import save_file

    model = build("hf_deepseek_v3", FOLDER).float()  # both layouts hold the same weights
    path = OUT / name
    path.mkdir(parents=True, exist_ok=True)
    model.config.save_pretrained(path)
    sd = {k: np.ascontiguousarray(v.detach().numpy()) for k, v in model.state_dict().items()}
    if layout == "stacked":
        save_file(sd, str(path / "model.safetensors"), metadata={"format": "pt"})
    else:
        sd = per_expert(sd)
        shards = {"model-00001-of-00002.safetensors": [k for k in sd if ".layers.1." not in k],
                  "model-00002-of-00002.safetensors": [k for k in sd if ".layers.1." in k]}
        for shard, keys in shards.items():
            save_file({k: np.ascontiguousarray(sd[k]) for k in keys}, str(path / shard), metadata={"format": "pt"})
        index = {"metadata": {}, "weight_map": {k: shard for shard, keys in shards.items() for k in keys}}
        (path / "model.safetensors.index.json").write_text(json.dumps(index, indent=1))
    shutil.copy(OUT.parent / "llama" / "hf_llama" / "tokenizer.json", path / "tokenizer.json")
    from tokenizers import Tokenizer

    ids = Tokenizer.from_file(str(path / "tokenizer.json")).encode(TEXT).ids
    back = DeepseekV3ForCausalLM.from_pretrained(path, dtype=torch.float64, attn_implementation="eager",
                                                 experts_implementation="eager").eval()
    for layer in back.model.layers:  # from_pretrained keeps the router's weight and bias in float32
        if isinstance(layer.mlp, md.DeepseekV3MoE):
            layer.mlp.gate.double()
    with torch.no_grad():
        logits = back(torch.tensor([ids])).logits[0].numpy()
        gen = back.generate(torch.tensor([ids]), do_sample=False, max_new_tokens=4, min_new_tokens=4,
                            attention_mask=torch.ones(1, len(ids), dtype=torch.long))
    np.savez(path / "expected.npz", ids=np.array(ids, dtype=np.int64), logits=logits[ROWS].astype(np.float64),
             generated=gen[0, len(ids):].numpy().astype(np.int64), text=np.array(TEXT))
    (path / "generation_config.json").unlink(missing_ok=True)
    print(f"{name} ({layout}): {len(ids)} tokens, generated {gen[0, len(ids):].tolist()}")


def v3_config() -> None:
    """DeepSeek-V3's config.json alone, and its parameters as transformers counts them on the meta device (without
    the next-token-prediction module, which transformers does not build): total, the routed experts', active."""
    path = OUT / "configs" / "deepseek-v3"
    path.mkdir(parents=True, exist_ok=True)
    (path / "config.json").write_text(json.dumps(V3, indent=1) + "\n")
    config = DeepseekV3Config(**{k: v for k, v in V3.items() if k not in ("architectures", "model_type",
                                                                           "torch_dtype", "rope_scaling",
                                                                           "rope_theta")})
    with torch.device("meta"):
        model = DeepseekV3ForCausalLM(config)
    total = sum(p.numel() for p in model.parameters())
    routed = sum(p.numel() for n, p in model.named_parameters() if ".mlp.experts." in n)
    E, k = V3["n_routed_experts"], V3["num_experts_per_tok"]
    counts = dict(total=total, routed_experts=routed, active=total - routed * (E - k) // E)
    (OUT / "configs" / "counts.json").write_text(json.dumps({"deepseek-v3": counts}, indent=1) + "\n")
    print(f"deepseek-v3: {counts}")


def main() -> None:
    OUT.mkdir(exist_ok=True)
    v3_config()
    folder("hf_deepseek_v3", "stacked")
    folder("hf_deepseek_v3_shards", "per-expert")
    for name, o in CONFIGS.items():
        model = build(name, o)
        expected, loss = steps(model, o)
        loss.backward()
        expected.update({f"grad:{k}": v for k, v in to_explain(model, o, grads=True).items()})
        with torch.no_grad():
            gen = model.generate(torch.tensor([TOKENS]), do_sample=False, max_new_tokens=NEW, min_new_tokens=NEW,
                                 return_dict_in_generate=True, output_logits=True,
                                 attention_mask=torch.ones(1, len(TOKENS), dtype=torch.long))
        expected["generated"] = gen.sequences[0, len(TOKENS):].numpy().astype(np.int64)
        expected["generated_logits"] = torch.stack(gen.logits, 1)[0].numpy().astype(np.float64)
        expected["tokens"] = np.array(TOKENS, dtype=np.int64)
        weights = to_explain(model, o)
        for i, layer in enumerate(model.model.layers):  # the choosing bias: a parameter of explain's (no gradient)
            if isinstance(layer.mlp, md.DeepseekV3MoE):
                weights[f"blocks.{i}.mlp.b_choice"] = layer.mlp.gate.e_score_correction_bias.detach().numpy()
        np.savez(OUT / f"{name}_weights.npz", **weights)
        np.savez(OUT / f"{name}_expected.npz", **expected)
        (OUT / f"{name}_config.json").write_text(json.dumps(o, indent=1) + "\n")
        print(f"{name}: loss {loss.item():.6f}, generated {expected['generated'].tolist()}, "
              f"{len(expected)} arrays")


if __name__ == "__main__":
    main()
