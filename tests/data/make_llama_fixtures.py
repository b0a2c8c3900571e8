"""Make ``tests/data/llama/``: what transformers' LlamaForCausalLM and Qwen2ForCausalLM compute, in float64, for the
configs ``explain``'s ``llama`` is checked against (tests/models/test_llama_reference.py).

This is a script, not a test. It needs torch and transformers (not dependencies of explain); run it once with
the fixture venv::

    /work/torchenv/bin/python tests/data/make_llama_fixtures.py

For each config (``CONFIGS``) it writes ``llama/<name>_weights.npz`` (random weights under explain's parameter
names, converted here by a mapping written independently of explain's checkpoint reader) and
``llama/<name>_expected.npz``: the steps (named as explain names them), ``grad:<param>`` (every parameter's
gradient of the loss, by autograd), and ``generated`` (``generate(do_sample=False)``'s new tokens, with the
cache) with ``generated_logits`` (the logits each new token was chosen from).

transformers computes three things in float32 even in a float64 model: RMSNorm (it casts to float32), the
rotary frequencies and angles, and the attention softmax (and its loss casts the logits to float32, so the loss
is taken here with torch's cross_entropy on the float64 logits). They are patched here to compute in the model's
dtype, the same formulas; otherwise the reference would carry float32 rounding (1e-7) and could not check 1e-10.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import torch
import transformers.models.llama.modeling_llama as ml
import transformers.models.qwen2.modeling_qwen2 as mq
from transformers import LlamaConfig, LlamaForCausalLM, Qwen2Config, Qwen2ForCausalLM

OUT = Path(__file__).resolve().parent / "llama"
TOKENS = [3, 41, 4, 17, 5, 9, 2]
NEW = 6
# name -> (transformers class, its config, explain's options)
CONFIGS = {
    "default": dict(d_model=8, n_heads=2, n_kv_heads=1, n_layers=2, d_ff=16, d_vocab=48, tie_embeddings=True,
                    qkv_bias=False, rope_theta=10000.0, ln_eps=1e-5),
    "gqa": dict(d_model=16, n_heads=4, n_kv_heads=2, n_layers=2, d_ff=24, d_vocab=50, tie_embeddings=False,
                qkv_bias=False, rope_theta=500000.0, ln_eps=1e-6),
    "qwen2": dict(d_model=12, n_heads=2, n_kv_heads=1, n_layers=2, d_ff=20, d_vocab=46, tie_embeddings=True,
                  qkv_bias=True, rope_theta=1000000.0, ln_eps=1e-6),
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


CAPTURED: list[dict] = []  # one dict per attention call, in order


def eager(module, query, key, value, attention_mask, scaling, dropout=0.0, **kwargs):
    k, v = ml.repeat_kv(key, module.num_key_value_groups), ml.repeat_kv(value, module.num_key_value_groups)
    scores = torch.matmul(query, k.transpose(2, 3))
    w = scores * scaling
    if attention_mask is not None:
        w = w + attention_mask
    w = torch.softmax(w, dim=-1)
    z = torch.matmul(w, v)
    CAPTURED.append(dict(rot_q=query, rot_k=key, k_rep=k, v_rep=v, scores=scores, scaled=scores * scaling,
                         pattern=w, z=z))
    return z.transpose(1, 2).contiguous(), w


for mod in (ml, mq):
    getattr(mod, [n for n in dir(mod) if n.endswith("RMSNorm")][0]).forward = rms_forward
    getattr(mod, [n for n in dir(mod) if n.endswith("RotaryEmbedding")][0]).forward = rope_forward
    mod.eager_attention_forward = eager


def build(name: str, o: dict) -> torch.nn.Module:
    common = dict(vocab_size=o["d_vocab"], hidden_size=o["d_model"], intermediate_size=o["d_ff"],
                  num_hidden_layers=o["n_layers"], num_attention_heads=o["n_heads"],
                  num_key_value_heads=o["n_kv_heads"], rms_norm_eps=o["ln_eps"], max_position_embeddings=o.get("n_ctx", 32),
                  tie_word_embeddings=o["tie_embeddings"], rope_parameters={"rope_type": "default",
                                                                            "rope_theta": o["rope_theta"]},
                  attn_implementation="eager", bos_token_id=None, eos_token_id=None, pad_token_id=None)
    if o["qkv_bias"]:
        model = Qwen2ForCausalLM(Qwen2Config(**common, use_sliding_window=False))
    else:
        model = LlamaForCausalLM(LlamaConfig(**common, attention_bias=False, mlp_bias=False))
    model = model.double().eval()
    g = torch.Generator().manual_seed(sum(map(ord, name)))
    with torch.no_grad():  # weights large enough that every step's numbers differ visibly
        for pname, p in model.named_parameters():
            if pname.endswith("norm.weight"):
                p.copy_(1 + 0.2 * torch.randn(p.shape, generator=g, dtype=torch.float64))
            else:
                p.copy_((0.5 if "embed" in pname else 0.3) * torch.randn(p.shape, generator=g, dtype=torch.float64))
    return model


def to_explain(model: torch.nn.Module, o: dict, grads: bool = False) -> dict[str, np.ndarray]:
    """Every parameter (or its gradient) under explain's name and in explain's layout."""
    sd = {n: (p.grad if grads else p).detach().numpy() for n, p in model.named_parameters()}
    h, kv, d, m = o["n_heads"], o["n_kv_heads"], o["d_model"], o["d_model"] // o["n_heads"]
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
        out[ex + "mlp.W_gate"] = sd[hf + "mlp.gate_proj.weight"].T
        out[ex + "mlp.W_in"] = sd[hf + "mlp.up_proj.weight"].T
        out[ex + "mlp.W_out"] = sd[hf + "mlp.down_proj.weight"].T
    return {k: np.ascontiguousarray(v, dtype=np.float64) for k, v in out.items()}


def steps(model: torch.nn.Module, o: dict) -> tuple[dict[str, np.ndarray], torch.Tensor]:
    """The forward's intermediate values under explain's step names, and the loss."""
    got: dict[str, torch.Tensor] = {}
    hooks = []

    def keep(name, what="out"):
        def hook(mod, args, out):
            got[name] = args[0] if what == "in" else out
        return hook

    h, kv, m = o["n_heads"], o["n_kv_heads"], o["d_model"] // o["n_heads"]
    for i, layer in enumerate(model.model.layers):
        b = f"blocks.{i}."
        att, mlp = layer.self_attn, layer.mlp
        for mod, name, what in ((layer.input_layernorm, b + "resid_pre", "in"), (layer.input_layernorm, b + "ln1", "out"),
                                (att.q_proj, b + "attn.q", "out"), (att.k_proj, b + "attn.k", "out"),
                                (att.v_proj, b + "attn.v", "out"), (att.o_proj, b + "attn.concat", "in"),
                                (att.o_proj, b + "attn_out", "out"),
                                (layer.post_attention_layernorm, b + "resid_mid", "in"),
                                (layer.post_attention_layernorm, b + "ln2", "out"), (mlp.gate_proj, b + "mlp.pre", "out"),
                                (mlp.up_proj, b + "mlp.pre_linear", "out"), (mlp.down_proj, b + "mlp.post", "in"),
                                (mlp.down_proj, b + "mlp_out", "out")):
            hooks.append(mod.register_forward_hook(keep(name, what)))
    hooks += [model.model.norm.register_forward_hook(keep("final_in", "in")),
              model.model.norm.register_forward_hook(keep("ln_final")),
              model.lm_head.register_forward_hook(keep("logits"))]
    CAPTURED.clear()
    ids = torch.tensor([TOKENS])
    logits = model(ids).logits  # transformers' own loss casts the logits to float32: the same loss in float64
    loss = torch.nn.functional.cross_entropy(logits[0, :-1], ids[0, 1:])
    for hk in hooks:
        hk.remove()
    T = len(TOKENS)
    out = {"embed": got["blocks.0.resid_pre"]}
    for i in range(o["n_layers"]):
        b = f"blocks.{i}."
        for s, n in (("q", h), ("k", kv), ("v", kv)):
            got[b + f"attn.{s}"] = got[b + f"attn.{s}"].view(1, T, n, m).transpose(1, 2)
        for key, val in CAPTURED[i].items():
            if key in ("k_rep", "v_rep") and kv == h:
                continue  # explain records no repeat when every query head has its own key head
            got[b + "attn." + key] = val
        got[b + "resid_post"] = got[f"blocks.{i + 1}.resid_pre"] if i + 1 < o["n_layers"] else got["final_in"]
        out.update({k: v for k, v in got.items() if k.startswith(b) and not k.endswith("resid_pre")})
    out.update(ln_final=got["ln_final"], logits=got["logits"], loss=loss)
    return {k: v.detach().numpy().astype(np.float64) for k, v in out.items()}, loss


# --- Hugging Face folders with a byte-level BPE tokenizer (the checkpoint reader's and the GGUF reader's tests) ---
FOLDERS = {  # name -> options; vocabulary 300: the 256 bytes and 44 merges; rows of 32 for the GGUF quant blocks
    "hf_llama": dict(d_model=32, n_heads=4, n_kv_heads=2, n_layers=2, d_ff=64, d_vocab=300, tie_embeddings=False,
                     qkv_bias=False, rope_theta=10000.0, ln_eps=1e-5, n_ctx=64),
    "hf_qwen2": dict(d_model=12, n_heads=2, n_kv_heads=1, n_layers=2, d_ff=20, d_vocab=300, tie_embeddings=True,
                     qkv_bias=True, rope_theta=1000000.0, ln_eps=1e-6, n_ctx=64),
}
ROWS = [0, 25, -1]  # the positions whose logits are kept (the file stays small)
TEXT = "The capital of France is Paris. In 2024, 1234 cafés served crème brûlée; ça coûte 12€!"
CORPUS = [TEXT, "the cat sat on the mat", "The cat is happy", "Paris is the capital of France", "café crème"] * 5


def tokenizer():
    """Byte-level BPE trained to 300 tokens with GPT-2's split (so merges of digits exist: the pre-tokenizers
    then differ on numbers), saved with SmolLM2's pre-tokenizer (each digit apart, then byte-level)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=300, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  special_tokens=[], show_progress=False)
    tok.train_from_iterator(CORPUS, trainer)
    assert tok.get_vocab_size() == 300, tok.get_vocab_size()
    tok.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.Digits(individual_digits=True),
                                                 pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)])
    return tok


def reference_tokenizers(tok) -> None:
    """For each GGUF pre-tokenizer name explain maps, a tokenizer.json with the same vocabulary and merges and
    the pre-tokenizer as that model's own tokenizer.json spells it (regexes from transformers' sources)."""
    from transformers.integrations.gguf.gguf_tokenizer_mapping import _LLAMA3_SPLIT
    from transformers.models.qwen2.tokenization_qwen2 import PRETOKENIZE_REGEX as QWEN2_SPLIT

    byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}

    def split(regex):
        return {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": regex}, "behavior": "Isolated", "invert": False},
            dict(byte_level, use_regex=False)]}

    pre = {"smollm": {"type": "Sequence", "pretokenizers": [{"type": "Digits", "individual_digits": True},
                                                            byte_level]},
           "gpt-2": byte_level, "llama-bpe": split(_LLAMA3_SPLIT), "qwen2": split(QWEN2_SPLIT)}
    doc = json.loads(tok.to_str())
    for name, p in pre.items():
        (OUT / "pre_tokenizers").mkdir(exist_ok=True)
        (OUT / "pre_tokenizers" / f"{name}.json").write_text(json.dumps(dict(doc, pre_tokenizer=p)))


def folder(name: str, o: dict, tok) -> None:
    model = build(name, o)
    path = OUT / name
    model.save_pretrained(path, safe_serialization=True)
    tok.save(str(path / "tokenizer.json"))
    ids = tok.encode(TEXT).ids
    with torch.no_grad():
        logits = model(torch.tensor([ids])).logits[0].numpy()
        gen = model.generate(torch.tensor([ids]), do_sample=False, max_new_tokens=4, min_new_tokens=4,
                             attention_mask=torch.ones(1, len(ids), dtype=torch.long))
    np.savez(path / "expected.npz", ids=np.array(ids, dtype=np.int64), logits=logits[ROWS].astype(np.float64),
             generated=gen[0, len(ids):].numpy().astype(np.int64), text=np.array(TEXT))
    for extra in ("generation_config.json",):
        (path / extra).unlink(missing_ok=True)
    print(f"{name}: {len(ids)} tokens, generated {gen[0, len(ids):].tolist()}")


def main() -> None:
    OUT.mkdir(exist_ok=True)
    tok = tokenizer()
    reference_tokenizers(tok)
    for name, o in FOLDERS.items():
        folder(name, o, tok)
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
        np.savez(OUT / f"{name}_weights.npz", **to_explain(model, o))
        np.savez(OUT / f"{name}_expected.npz", **expected)
        (OUT / f"{name}_config.json").write_text(json.dumps(o, indent=1) + "\n")
        print(f"{name}: loss {loss.item():.6f}, generated {expected['generated'].tolist()}")


if __name__ == "__main__":
    main()
