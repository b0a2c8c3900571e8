"""Make ``tests/data/gemma/``: what transformers' Gemma3ForCausalLM computes, in float64, for the configs
``explain``'s ``gemma`` is checked against (tests/models/test_gemma_reference.py), and a small Gemma 3 checkpoint
with a SentencePiece vocabulary for the checkpoint readers (tests/checkpoints/test_gemma_checkpoints.py).

This is a script, not a test. It needs torch, transformers, sentencepiece and gguf (not dependencies of
explain); run it once with the fixture venv::

    /work/torchenv/bin/python tests/data/make_gemma_fixtures.py

For each config of ``CONFIGS`` it writes ``gemma/<name>_weights.npz`` (random weights under explain's parameter
names, converted here by a mapping written independently of explain's checkpoint readers),
``gemma/<name>_config.json`` (explain's options) and ``gemma/<name>_expected.npz``: the steps (named as explain
names them), ``grad:<param>`` (every parameter's gradient of the loss, by autograd), and ``generated``
(``generate(do_sample=False)``'s new tokens, on transformers' sliding-window cache) with ``generated_logits``.

transformers computes four things in float32 even in a float64 model; they are patched here to compute in the
model's dtype with the same formulas, or the reference would carry float32 rounding (1e-7) and could not check
1e-10:
- ``Gemma3RMSNorm``: ``self._norm(x.float()) * (1.0 + self.weight.float())``;
- the rotary tables (``inv_freq`` made with ``dtype=torch.float``, the angles in ``.float()``);
- the embedding scale, a float32 buffer ``torch.tensor(hidden_size ** 0.5)`` (√8 rounded to float32): the
  Python float is used;
- the attention softmax (``dtype=torch.float32``), and the loss (taken here with cross_entropy on the float64
  logits).

``gemma/hf_gemma/`` is a Hugging Face folder (config.json in transformers 5's spelling: ``layer_types`` and
per-kind ``rope_parameters``; model.safetensors in float32; tokenizer.json) with ``expected.npz``: the ids of
``TEXT`` and of ``TOKENIZER_TEXTS`` (transformers' own tokenizer rebuilt from a GGUF of the same vocabulary,
``convert_gguf_tokenizer``), the logits at ``ROWS`` and four greedy tokens. Its vocabulary is a SentencePiece
BPE model trained here (``gemma/spm_vocab.json``: tokens, scores and types as a GGUF stores them, with Gemma's
quirks: multi-space tokens spelled with real spaces, newline/tab/HTML tokens user-defined, byte fallback). Its
six layers follow llama.cpp's gemma3 pattern (a full layer every 6th) and its attention scale is head_dim^-½, as
llama.cpp assumes for a GGUF that stores neither, so a GGUF written from it (tests/helpers/gemma_files.py) runs as
the folder does.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

import numpy as np
import torch
import transformers.models.gemma3.modeling_gemma3 as mg
from transformers import Gemma3ForCausalLM, Gemma3TextConfig

HERE = Path(__file__).resolve().parent
OUT = HERE / "gemma"
sys.path.insert(0, str(HERE.parent / "helpers"))
TOKENS = {"default": [3, 41, 4, 17, 5, 9, 2], "window": [3, 41, 4, 17, 5, 9, 2, 33, 12, 40, 7, 21]}
NEW = 6
KIND = {"sliding": "sliding_attention", "full": "full_attention"}
# name -> explain's options (the default case is the registry's default gemma: tests check they agree)
CONFIGS = {
    "default": dict(d_model=8, n_heads=2, n_kv_heads=1, d_head=4, n_layers=2, d_ff=16, d_vocab=48,
                    tie_embeddings=True, rope_theta=1000000.0, rope_local_base_freq=10000.0, sliding_window=4,
                    layer_types="sliding,full", query_pre_attn_scalar=4, ln_eps=1e-6),
    # the window binds (3 of 12 positions), head_dim is not d_model / heads, the attention scale is not
    # head_dim^-½, the output is untied, and two sliding layers sit around a full one
    "window": dict(d_model=16, n_heads=4, n_kv_heads=2, d_head=8, n_layers=3, d_ff=24, d_vocab=50,
                   tie_embeddings=False, rope_theta=1000000.0, rope_local_base_freq=10000.0, sliding_window=3,
                   layer_types="sliding,full,sliding", query_pre_attn_scalar=12, ln_eps=1e-6),
}


# --- float64 everywhere (see the docstring) ------------------------------------------------------------------
def rms_forward(self, x):
    return self._norm(x) * (1.0 + self.weight)


def rope_forward(self, x, position_ids, layer_type):
    dim = getattr(self, f"{layer_type}_inv_freq").shape[0] * 2
    theta = self.config.rope_parameters[layer_type]["rope_theta"]
    inv = 1.0 / (theta ** (torch.arange(0, dim, 2, dtype=torch.float64) / dim))
    freqs = position_ids[..., None].to(torch.float64) * inv
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos().to(x.dtype), emb.sin().to(x.dtype)


def embed_forward(self, input_ids):
    return torch.nn.Embedding.forward(self, input_ids) * self.scalar_embed_scale


CAPTURED: list[dict] = []  # one dict per attention call, in order


def eager(module, query, key, value, attention_mask, dropout=0.0, scaling=None, softcap=None, **kwargs):
    assert softcap is None
    k, v = mg.repeat_kv(key, module.num_key_value_groups), mg.repeat_kv(value, module.num_key_value_groups)
    scores = torch.matmul(query, k.transpose(2, 3))
    w = scores * scaling
    got = dict(rot_q=query, rot_k=key, k_rep=k, v_rep=v, scores=scores, scaled=w)
    if attention_mask is not None:
        keep = attention_mask if attention_mask.dtype == torch.bool else attention_mask == 0
        w = torch.where(keep, w, torch.tensor(float("-inf"), dtype=w.dtype))
        got["window_masked" if module.is_sliding else "masked"] = w
    w = torch.softmax(w, dim=-1)
    z = torch.matmul(w, v)
    CAPTURED.append(dict(got, pattern=w, z=z))
    return z.transpose(1, 2).contiguous(), w


mg.Gemma3RMSNorm.forward = rms_forward
mg.Gemma3RotaryEmbedding.forward = rope_forward
mg.Gemma3TextScaledWordEmbedding.forward = embed_forward
mg.eager_attention_forward = eager


def hf_config(o: dict) -> Gemma3TextConfig:
    return Gemma3TextConfig(
        vocab_size=o["d_vocab"], hidden_size=o["d_model"], intermediate_size=o["d_ff"],
        num_hidden_layers=o["n_layers"], num_attention_heads=o["n_heads"], num_key_value_heads=o["n_kv_heads"],
        head_dim=o["d_head"], rms_norm_eps=o["ln_eps"], max_position_embeddings=o.get("n_ctx", 32),
        tie_word_embeddings=o["tie_embeddings"], sliding_window=o["sliding_window"],
        layer_types=[KIND[k] for k in o["layer_types"].split(",")],
        rope_parameters={"sliding_attention": {"rope_type": "default", "rope_theta": o["rope_local_base_freq"]},
                         "full_attention": {"rope_type": "default", "rope_theta": o["rope_theta"]}},
        query_pre_attn_scalar=o["query_pre_attn_scalar"], attn_implementation="eager", bos_token_id=o.get("bos"),
        eos_token_id=o.get("eos"), pad_token_id=o.get("pad"))


def build(name: str, o: dict) -> torch.nn.Module:
    model = Gemma3ForCausalLM(hf_config(o)).double().eval()
    g = torch.Generator().manual_seed(sum(map(ord, name)))
    with torch.no_grad():  # weights large enough that every step's numbers differ visibly; norms' w near 0
        for pname, p in model.named_parameters():
            if pname.endswith("norm.weight"):
                p.copy_(0.2 * torch.randn(p.shape, generator=g, dtype=torch.float64))
            else:
                p.copy_((0.5 if "embed" in pname else 0.3) * torch.randn(p.shape, generator=g, dtype=torch.float64))
    return model


def to_explain(model: torch.nn.Module, o: dict, grads: bool = False) -> dict[str, np.ndarray]:
    """Every parameter (or its gradient) under explain's name and in explain's layout."""
    sd = {n: (p.grad if grads else p).detach().numpy() for n, p in model.named_parameters()}
    h, kv, d, m = o["n_heads"], o["n_kv_heads"], o["d_model"], o["d_head"]
    out = {"W_E": sd["model.embed_tokens.weight"], "ln_final.w": sd["model.norm.weight"]}
    if not o["tie_embeddings"]:
        out["unembed.W_U"] = sd["lm_head.weight"].T
    norms = {"ln1": "input_layernorm", "ln1_post": "post_attention_layernorm", "ln2": "pre_feedforward_layernorm",
             "ln2_post": "post_feedforward_layernorm", "attn.q_norm": "self_attn.q_norm",
             "attn.k_norm": "self_attn.k_norm"}
    for i in range(o["n_layers"]):
        hf, ex = f"model.layers.{i}.", f"blocks.{i}."
        for ours, theirs in norms.items():
            out[ex + ours + ".w"] = sd[hf + theirs + ".weight"]
        for s, n in (("q", h), ("k", kv), ("v", kv)):
            w = sd[hf + f"self_attn.{s}_proj.weight"]  # [n·m, d]: head j is rows j·m … j·m + m − 1
            out[ex + f"attn.W_{s.upper()}"] = w.reshape(n, m, d).transpose(0, 2, 1)  # (n, d, m)
        out[ex + "attn.W_O"] = sd[hf + "self_attn.o_proj.weight"].T
        out[ex + "mlp.W_gate"] = sd[hf + "mlp.gate_proj.weight"].T
        out[ex + "mlp.W_in"] = sd[hf + "mlp.up_proj.weight"].T
        out[ex + "mlp.W_out"] = sd[hf + "mlp.down_proj.weight"].T
    return {k: np.ascontiguousarray(v, dtype=np.float64) for k, v in out.items()}


def steps(model: torch.nn.Module, o: dict, tokens: list[int]) -> tuple[dict[str, np.ndarray], torch.Tensor]:
    """The forward's intermediate values under explain's step names, and the loss."""
    got: dict[str, torch.Tensor] = {}
    hooks = []

    def keep(name, what="out"):
        def hook(mod, args, out):
            got[name] = args[0] if what == "in" else out
        return hook

    h, kv, m = o["n_heads"], o["n_kv_heads"], o["d_head"]
    for i, layer in enumerate(model.model.layers):
        b = f"blocks.{i}."
        att, mlp = layer.self_attn, layer.mlp
        for mod, name, what in (
                (layer.input_layernorm, b + "resid_pre", "in"), (layer.input_layernorm, b + "ln1", "out"),
                (att.q_proj, b + "attn.q", "out"), (att.k_proj, b + "attn.k", "out"), (att.v_proj, b + "attn.v", "out"),
                (att.q_norm, b + "attn.q_norm", "out"), (att.k_norm, b + "attn.k_norm", "out"),
                (att.o_proj, b + "attn.concat", "in"), (att.o_proj, b + "attn_out", "out"),
                (layer.post_attention_layernorm, b + "ln1_post", "out"),
                (layer.pre_feedforward_layernorm, b + "resid_mid", "in"), (layer.pre_feedforward_layernorm, b + "ln2", "out"),
                (mlp.gate_proj, b + "mlp.pre", "out"), (mlp.up_proj, b + "mlp.pre_linear", "out"),
                (mlp.down_proj, b + "mlp.post", "in"), (mlp.down_proj, b + "mlp_out", "out"),
                (layer.post_feedforward_layernorm, b + "ln2_post", "out")):
            hooks.append(mod.register_forward_hook(keep(name, what)))
    hooks += [model.model.norm.register_forward_hook(keep("final_in", "in")),
              model.model.norm.register_forward_hook(keep("ln_final")),
              model.lm_head.register_forward_hook(keep("logits"))]
    CAPTURED.clear()
    ids = torch.tensor([tokens])
    logits = model(ids).logits
    loss = torch.nn.functional.cross_entropy(logits[0, :-1], ids[0, 1:])
    for hk in hooks:
        hk.remove()
    T = len(tokens)
    W_E = model.model.embed_tokens.weight
    out = {"embed": W_E[ids], "embed_scaled": got["blocks.0.resid_pre"]}
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


def generate(model: torch.nn.Module, tokens: list[int], new: int):
    with torch.no_grad():
        return model.generate(torch.tensor([tokens]), do_sample=False, max_new_tokens=new, min_new_tokens=new,
                              return_dict_in_generate=True, output_logits=True,
                              attention_mask=torch.ones(1, len(tokens), dtype=torch.long))


# --- a SentencePiece vocabulary and a Hugging Face folder ----------------------------------------------------
CORPUS = ["Once upon a time there was a little cat. The cat sat on the mat.",
          "The capital of France is Paris. In 2024, 1234 cafés served crème brûlée; ça coûte 12€!",
          "Hello  world\n\nIt's a <b>bold</b> move.\tTabs\tand    spaces.", "日本語のテキスト、ünïcödé 🙂",
          "once upon a time, the end.\n", "def f(x):\n    return x * 2  # doubled\n"] * 20
USER_DEFINED = ["\n", "\n\n", "▁▁", "▁▁▁", "\t", "<b>", "</b>"]  # Gemma's: runs of newlines, spaces, tabs; HTML


def spm_vocab() -> dict:
    """A SentencePiece BPE vocabulary trained on CORPUS with Gemma's tokenizer settings (no dummy prefix, no
    whitespace removal, byte fallback, digits split, ids 0-3 = <pad> <eos> <bos> <unk>), as a GGUF stores it:
    pieces, scores and types (1 normal, 2 unknown, 3 control, 4 user-defined, 6 byte). A user-defined run of
    spaces is spelled with real spaces, as in Gemma's own file."""
    import sentencepiece as spm

    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "corpus.txt").write_text("\n".join(c.replace("\n", " ") for c in CORPUS))
        spm.SentencePieceTrainer.train(
            input=str(Path(tmp) / "corpus.txt"), model_prefix=str(Path(tmp) / "m"), model_type="bpe",
            vocab_size=420, byte_fallback=True, split_digits=True, add_dummy_prefix=False,
            remove_extra_whitespaces=False, normalization_rule_name="identity", allow_whitespace_only_pieces=True,
            pad_id=0, eos_id=1, bos_id=2, unk_id=3, pad_piece="<pad>", eos_piece="<eos>", bos_piece="<bos>",
            control_symbols=["<mask>"], user_defined_symbols=USER_DEFINED,
            character_coverage=1.0, minloglevel=2)
        sp = spm.SentencePieceProcessor(model_file=str(Path(tmp) / "m.model"))
    tokens, scores, types = [], [], []
    for i in range(sp.get_piece_size()):
        piece = sp.id_to_piece(i)
        kind = (6 if sp.is_byte(i) else 2 if sp.is_unknown(i) else 3 if sp.is_control(i)
                else 4 if piece in USER_DEFINED else 1)
        if kind == 4 and set(piece) == {"▁"}:
            piece = " " * len(piece)
        tokens.append(piece)
        scores.append(float(sp.get_score(i)))
        types.append(kind)
    return dict(tokens=tokens, scores=scores, types=types)


FOLDER = dict(d_model=32, n_heads=2, n_kv_heads=1, d_head=16, n_layers=6, d_ff=48, tie_embeddings=True,
              rope_theta=1000000.0, rope_local_base_freq=10000.0, sliding_window=3,
              layer_types="sliding,sliding,sliding,sliding,sliding,full", query_pre_attn_scalar=16, ln_eps=1e-6,
              n_ctx=64, bos=2, eos=1, pad=0)
TEXT = "Once upon a time, the cat sat on the mat in Paris."
TOKENIZER_TEXTS = ["Once upon a", "The capital of France is Paris. In 2024, 1234 cafés — ça coûte 12€!",
                   "Hello  world\n\nIt's a <b>bold</b>\tmove   x", "  leading spaces and ünïcödé 🙂 日本語",
                   "def f(x):\n    return x * 2\n\n\n"]
ROWS = [0, 5, -1]


def from_gguf(path: Path, o: dict) -> torch.nn.Module:
    """The model of a gemma3 GGUF, read back with the gguf package as transformers' GGUF loader would (its
    Gemma2TensorProcessor: minus 1 from every norm; no q/k permutation); transformers' own loader needs
    accelerate, which the fixture venv does not have."""
    from gemma_files import _BLOCK
    from gguf import GGUFReader

    back = {v: k for k, v in _BLOCK.items()}
    sd = {}
    for t in GGUFReader(str(path)).tensors:
        arr = torch.from_numpy(np.array(t.data, dtype=np.float64).reshape(tuple(reversed(t.shape.tolist()))))
        base, kind = t.name.rsplit(".", 1)
        if base.startswith("blk."):
            _, i, rest = base.split(".", 2)
            name = f"model.layers.{i}.{back[rest]}.{kind}"
        else:
            name = {"token_embd": "model.embed_tokens", "output_norm": "model.norm"}[base] + "." + kind
        sd[name] = arr - 1 if name.endswith("norm.weight") else arr
    model = Gemma3ForCausalLM(hf_config(o)).double().eval()
    missing, unexpected = model.load_state_dict(sd, strict=False)
    assert set(missing) <= {"lm_head.weight"} and not unexpected, (missing, unexpected)
    model.tie_weights()
    return model


def folder(vocab: dict) -> None:
    from gemma_files import write_gguf
    from transformers.integrations.gguf.gguf_tokenizer_mapping import convert_gguf_tokenizer, get_gguf_tokenizer

    o = dict(FOLDER, d_vocab=len(vocab["tokens"]))
    path = OUT / "hf_gemma"
    model = build("hf_gemma", o)
    model.float().save_pretrained(path, safe_serialization=True)  # float32 on disk, as a release is (bf16 aside)
    model.double()
    with torch.no_grad():  # the saved float32 weights, in float64: what a reader of the folder computes with
        for p in model.parameters():
            p.copy_(p.float().double())
    (path / "generation_config.json").unlink(missing_ok=True)
    cfg = json.loads((path / "config.json").read_text())
    cfg.pop("transformers_version", None)
    (path / "config.json").write_text(json.dumps(cfg, indent=2) + "\n")
    with tempfile.TemporaryDirectory() as tmp:  # transformers' own tokenizer of a GGUF of this vocabulary
        gguf_path = write_gguf(Path(tmp) / "v.gguf", "F32", folder=path, vocab=vocab)
        arch, tok_dict, tok_cfg = get_gguf_tokenizer(str(gguf_path))
        assert arch == "gemma3" and tok_cfg["add_bos_token"], (arch, tok_cfg)
        tok, _ = convert_gguf_tokenizer(arch, tok_dict)
        hf_gguf = from_gguf(gguf_path, o)
    tok.save(str(path / "tokenizer.json"))
    (path / "tokenizer_config.json").write_text(json.dumps({"add_bos_token": True, "add_eos_token": False}) + "\n")
    ids = [2] + tok.encode(TEXT, add_special_tokens=False).ids
    with torch.no_grad():
        logits = model(torch.tensor([ids])).logits[0].numpy()
        via_gguf = hf_gguf(torch.tensor([ids])).logits[0].numpy()
        gen = model.generate(torch.tensor([ids]), do_sample=False, max_new_tokens=4, min_new_tokens=4,
                             attention_mask=torch.ones(1, len(ids), dtype=torch.long))
    # the GGUF read back (norms stored as 1 + w, minus 1 on reading) agrees with the folder: a check of the
    # writer in tests/helpers/gemma_files.py, whose files the tests read
    assert np.abs(via_gguf - logits).max() < 1e-4, np.abs(via_gguf - logits).max()
    texts = {f"ids_{i}": np.array(tok.encode(t, add_special_tokens=False).ids, dtype=np.int64)
             for i, t in enumerate(TOKENIZER_TEXTS)}
    np.savez(path / "expected.npz", ids=np.array(ids, dtype=np.int64), logits=logits[ROWS].astype(np.float64),
             generated=gen[0, len(ids):].numpy().astype(np.int64), text=np.array(TEXT),
             tokenizer_texts=np.array(TOKENIZER_TEXTS), **texts)
    print(f"hf_gemma: {len(ids)} tokens, generated {gen[0, len(ids):].tolist()}; via GGUF "
          f"{np.abs(via_gguf - logits).max():.1e}")


def main() -> None:
    OUT.mkdir(exist_ok=True)
    vocab = spm_vocab()
    (OUT / "spm_vocab.json").write_text(json.dumps(vocab, ensure_ascii=False) + "\n")
    folder(vocab)
    for name, o in CONFIGS.items():
        tokens = TOKENS[name]
        model = build(name, o)
        expected, loss = steps(model, o, tokens)
        loss.backward()
        expected.update({f"grad:{k}": v for k, v in to_explain(model, o, grads=True).items()})
        gen = generate(model, tokens, NEW)
        expected["generated"] = gen.sequences[0, len(tokens):].numpy().astype(np.int64)
        expected["generated_logits"] = torch.stack(gen.logits, 1)[0].numpy().astype(np.float64)
        expected["tokens"] = np.array(tokens, dtype=np.int64)
        np.savez_compressed(OUT / f"{name}_weights.npz", **to_explain(model, o))
        np.savez_compressed(OUT / f"{name}_expected.npz", **expected)
        (OUT / f"{name}_config.json").write_text(json.dumps(o, indent=1) + "\n")
        print(f"{name}: loss {loss.item():.6f}, generated {expected['generated'].tolist()}")


if __name__ == "__main__":
    main()
