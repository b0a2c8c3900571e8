"""Make ``tests/data/bert/``: what transformers' BertModel computes, in float64, for the configs ``explain``'s
``bert`` is checked against (tests/models/test_bert_reference.py), with the sentence head sentence-transformers puts
on it (mean pooling over the real tokens, L2 normalisation) and the loss 1 − cos(text 1, text 2).

This is a script, not a test. It needs torch and transformers (not dependencies of explain); run it once with
the fixture venv::

    /work/torchenv/bin/python tests/data/make_bert_fixtures.py

For each config (``CONFIGS``) it writes ``bert/<name>_weights.npz`` (random weights under explain's parameter
names, converted here by a mapping written independently of explain's checkpoint reader),
``bert/<name>_expected.npz``: the steps (named as explain names them), ``grad:<param>`` (every parameter's
gradient of the loss, by autograd; the pooler's are zero: the sentence head does not use it), ``tokens`` (the
batch, right-padded with ``PAD``) and ``lengths``; and ``bert/<name>_config.json`` (explain's options).

It also writes ``bert/hf_bert/``, a Hugging Face folder as all-MiniLM-L6-v2's is laid out (config.json,
model.safetensors in float32, a WordPiece tokenizer.json whose post-processor adds [CLS] … [SEP] and which pads
and truncates every text to 24 tokens, as MiniLM's does to 128), and ``bert/hf_bert_expected.npz``: each text's
ids (``tokenizers``' encode with padding and truncation off) and the sentence head of BertModel run in float64 on
the stored float32 weights (the checkpoint reader's test).

BertModel computes in the model's dtype throughout (its softmax too); the only thing changed here is the value
a padded key's score gets: transformers adds the dtype's most negative number, explain writes −inf; both give
the key a weight of exactly 0, and the fixture stores −inf where the mask applies so the step compares as it is.
The padded positions' own rows (a <pad> query) are computed by both but used by neither; the test compares the
real positions only, so the pad id does not matter.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import torch
import transformers.models.bert.modeling_bert as mb
from transformers import BertConfig, BertModel

OUT = Path(__file__).resolve().parent / "bert"
PAD = 0
# name -> explain's options and the batch of token ids (before padding)
CONFIGS = {
    "default": dict(options=dict(d_model=8, n_heads=2, n_layers=2, d_ff=32, d_vocab=48, n_ctx=32, ln_eps=1e-12),
                    tokens=[[2, 11, 7, 23, 5, 3], [2, 9, 7, 30, 14, 3]]),
    "padded": dict(options=dict(d_model=16, n_heads=4, n_layers=3, d_ff=24, d_vocab=60, n_ctx=12, ln_eps=1e-12),
                   tokens=[[2, 41, 17, 8, 33, 25, 3], [2, 52, 6, 3], [2, 41, 19, 8, 44, 3]]),
}

CAPTURED: list[dict] = []  # one dict per attention call, in order


def eager(module, query, key, value, attention_mask, scaling=None, dropout=0.0, **kwargs):
    """transformers' eager attention, the same arithmetic, keeping every intermediate."""
    scores = torch.matmul(query, key.transpose(2, 3))
    scaled = scores * scaling
    w = scaled
    got = dict(q=query, k=key, v=value, scores=scores, scaled=scaled)
    if attention_mask is not None:
        w = w + attention_mask
        hidden = (attention_mask < 0).expand_as(w)
        got["pad_masked"] = torch.where(hidden, torch.tensor(-torch.inf, dtype=w.dtype), w)
    w = torch.softmax(w, dim=-1)
    z = torch.matmul(w, value)
    CAPTURED.append(dict(got, pattern=w, z=z))
    return z.transpose(1, 2).contiguous(), w


mb.eager_attention_forward = eager


def build(name: str, o: dict) -> BertModel:
    config = BertConfig(vocab_size=o["d_vocab"], hidden_size=o["d_model"], num_hidden_layers=o["n_layers"],
                        num_attention_heads=o["n_heads"], intermediate_size=o["d_ff"], hidden_act="gelu",
                        max_position_embeddings=o["n_ctx"], type_vocab_size=2, layer_norm_eps=o["ln_eps"],
                        hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0, pad_token_id=PAD,
                        attn_implementation="eager")
    model = BertModel(config, add_pooling_layer=True).double().eval()
    g = torch.Generator().manual_seed(sum(map(ord, name)))
    with torch.no_grad():  # weights large enough that every step's numbers differ visibly
        for pname, p in model.named_parameters():
            if pname.endswith("LayerNorm.weight"):
                p.copy_(1 + 0.2 * torch.randn(p.shape, generator=g, dtype=torch.float64))
            elif pname.endswith("bias"):
                p.copy_(0.1 * torch.randn(p.shape, generator=g, dtype=torch.float64))
            else:
                p.copy_((0.5 if "embeddings" in pname else 0.3) * torch.randn(p.shape, generator=g,
                                                                                dtype=torch.float64))
    return model


def to_explain(model: BertModel, o: dict, grads: bool = False) -> dict[str, np.ndarray]:
    """Every parameter (or its gradient) under explain's name and in explain's layout (x·W: [in, out])."""
    sd = {}
    for n, p in model.named_parameters():
        value = p if not grads else (p.grad if p.grad is not None else torch.zeros_like(p))
        sd[n] = value.detach().numpy()
    h, d = o["n_heads"], o["d_model"]
    m = d // h
    out = {"W_E": sd["embeddings.word_embeddings.weight"], "W_pos": sd["embeddings.position_embeddings.weight"],
           "W_type": sd["embeddings.token_type_embeddings.weight"],
           "embed_ln.w": sd["embeddings.LayerNorm.weight"], "embed_ln.b": sd["embeddings.LayerNorm.bias"],
           "pooler.W": sd["pooler.dense.weight"].T, "pooler.b": sd["pooler.dense.bias"]}
    for i in range(o["n_layers"]):
        hf, ex = f"encoder.layer.{i}.", f"blocks.{i}."
        for s, theirs in (("Q", "query"), ("K", "key"), ("V", "value")):
            w = sd[hf + f"attention.self.{theirs}.weight"]  # [h·m, d]: head j is rows j·m … j·m + m − 1
            out[ex + f"attn.W_{s}"] = w.reshape(h, m, d).transpose(0, 2, 1)  # (h, d, m)
            out[ex + f"attn.b_{s}"] = sd[hf + f"attention.self.{theirs}.bias"].reshape(h, m)
        out[ex + "attn.W_O"] = sd[hf + "attention.output.dense.weight"].T
        out[ex + "attn.b_O"] = sd[hf + "attention.output.dense.bias"]
        out[ex + "ln1.w"] = sd[hf + "attention.output.LayerNorm.weight"]
        out[ex + "ln1.b"] = sd[hf + "attention.output.LayerNorm.bias"]
        out[ex + "mlp.W_in"] = sd[hf + "intermediate.dense.weight"].T
        out[ex + "mlp.b_in"] = sd[hf + "intermediate.dense.bias"]
        out[ex + "mlp.W_out"] = sd[hf + "output.dense.weight"].T
        out[ex + "mlp.b_out"] = sd[hf + "output.dense.bias"]
        out[ex + "ln2.w"] = sd[hf + "output.LayerNorm.weight"]
        out[ex + "ln2.b"] = sd[hf + "output.LayerNorm.bias"]
    return {k: np.ascontiguousarray(v, dtype=np.float64) for k, v in out.items()}


def steps(model: BertModel, o: dict, batch: list[list[int]]) -> tuple[dict[str, np.ndarray], torch.Tensor]:
    """The forward's intermediate values under explain's step names, the sentence head's, and the loss."""
    got: dict[str, torch.Tensor] = {}
    hooks = []

    def keep(name, what="out"):
        def hook(mod, args, out):
            got[name] = args[0] if what == "in" else out
        return hook

    emb = model.embeddings
    for mod, name in ((emb.word_embeddings, "embed"), (emb.token_type_embeddings, "type_embed"),
                      (emb.position_embeddings, "pos_embed"), (emb.LayerNorm, "embed_ln")):
        hooks.append(mod.register_forward_hook(keep(name)))
    hooks.append(emb.LayerNorm.register_forward_hook(keep("embed_sum", "in")))
    for i, layer in enumerate(model.encoder.layer):
        b = f"blocks.{i}."
        att, inter, out = layer.attention, layer.intermediate, layer.output
        for mod, name, what in ((att.self, b + "attn.concat", "out"), (att.output.dense, b + "attn_out", "out"),
                                (att.output.LayerNorm, b + "add1", "in"), (att.output.LayerNorm, b + "ln1", "out"),
                                (inter.dense, b + "mlp.pre", "out"), (inter, b + "mlp.post", "out"),
                                (out.dense, b + "mlp_out", "out"), (out.LayerNorm, b + "add2", "in"),
                                (out.LayerNorm, b + "ln2", "out")):
            hooks.append(mod.register_forward_hook(keep(name, what)))
    CAPTURED.clear()
    lengths = [len(t) for t in batch]
    T = max(lengths)
    ids = torch.tensor([t + [PAD] * (T - len(t)) for t in batch])
    mask = torch.tensor([[1] * n + [0] * (T - n) for n in lengths])
    hidden = model(input_ids=ids, attention_mask=mask).last_hidden_state  # (B, T, d)
    for hk in hooks:
        hk.remove()
    if isinstance(got["blocks.0.attn.concat"], tuple):
        for i in range(o["n_layers"]):
            got[f"blocks.{i}.attn.concat"] = got[f"blocks.{i}.attn.concat"][0]
    got["embed_typed"] = got["embed"] + got["type_embed"]  # transformers adds in this order: word + type, + pos
    got["pos_embed"] = got["pos_embed"][0]
    for i, cap in enumerate(CAPTURED):
        got.update({f"blocks.{i}.attn.{k}": v for k, v in cap.items()})
    # sentence-transformers' Pooling (mean over the real tokens) and Normalize, written out
    m = mask.unsqueeze(-1).to(hidden.dtype)
    pooled = (hidden * m).sum(1) / m.sum(1).clamp(min=1e-9)
    norm = torch.nn.functional.normalize(pooled, p=2, dim=1)
    cos = norm @ norm.T
    loss = 1 - cos[0, 1]
    got.update({"sentence.pooled": pooled, "sentence.norm": norm, "sentence.cos": cos, "loss": loss})
    assert torch.equal(got[f"blocks.{o['n_layers'] - 1}.ln2"], hidden)
    return {k: v.detach().numpy().astype(np.float64) for k, v in got.items()}, loss


FOLDER_TEXTS = ["A man is eating food.", "A man is eating a piece of bread.", "The girl is carrying a baby."]
CORPUS = FOLDER_TEXTS + ["The cat sat on the mat. The dog is happy, and the cat is hungry!",
                         "A woman is playing the guitar. Two men are riding horses.", "playing played plays"]


def wordpiece():
    """A WordPiece tokenizer (BERT's normaliser and pre-tokenizer) trained on the corpus, with BERT's template
    post-processor, and padding and truncation to 24 as a downloaded sentence-transformers tokenizer.json has."""
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers

    tok = Tokenizer(models.WordPiece(unk_token="[UNK]", max_input_chars_per_word=100))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.decoder = decoders.WordPiece()
    trainer = trainers.WordPieceTrainer(vocab_size=120, special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"])
    tok.train_from_iterator(CORPUS, trainer)
    cls, sep = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    tok.post_processor = processors.TemplateProcessing(single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
                                                       special_tokens=[("[CLS]", cls), ("[SEP]", sep)])
    tok.enable_padding(length=24, pad_id=0, pad_token="[PAD]")
    tok.enable_truncation(max_length=24)
    return tok


def folder() -> None:
    tok = wordpiece()
    o = dict(d_model=16, n_heads=2, n_layers=2, d_ff=32, d_vocab=tok.get_vocab_size(), n_ctx=24, ln_eps=1e-12)
    model = build("hf_bert", o).float()  # stored as MiniLM's: float32
    path = OUT / "hf_bert"
    model.save_pretrained(path, safe_serialization=True)
    tok.save(str(path / "tokenizer.json"))
    tok.no_padding()
    tok.no_truncation()
    batch = [tok.encode(t).ids for t in FOLDER_TEXTS]
    model = model.double()  # float32 weights, computed in float64
    with torch.no_grad():
        expected, _ = steps(model, o, batch)
    T = max(len(b) for b in batch)
    np.savez(OUT / "hf_bert_expected.npz", ids=np.array([b + [PAD] * (T - len(b)) for b in batch], dtype=np.int64),
             lengths=np.array([len(b) for b in batch], dtype=np.int64), texts=np.array(FOLDER_TEXTS),
             **{k: expected[k] for k in ("sentence.pooled", "sentence.norm", "sentence.cos", "embed_ln")})
    print(f"hf_bert: {tok.get_vocab_size()} tokens, ids {batch[0]}, cos {expected['sentence.cos'][0, 1]:.6f}")


def main() -> None:
    OUT.mkdir(exist_ok=True)
    folder()
    for name, case in CONFIGS.items():
        o, batch = case["options"], case["tokens"]
        model = build(name, o)
        expected, loss = steps(model, o, batch)
        loss.backward()
        expected.update({f"grad:{k}": v for k, v in to_explain(model, o, grads=True).items()})
        T = max(len(t) for t in batch)
        expected["tokens"] = np.array([t + [PAD] * (T - len(t)) for t in batch], dtype=np.int64)
        expected["lengths"] = np.array([len(t) for t in batch], dtype=np.int64)
        np.savez(OUT / f"{name}_weights.npz", **to_explain(model, o))
        np.savez(OUT / f"{name}_expected.npz", **expected)
        (OUT / f"{name}_config.json").write_text(json.dumps(o, indent=1) + "\n")
        print(f"{name}: loss {loss.item():.6f}, cos {expected['sentence.cos'][0, 1]:.6f}, "
              f"{len(expected)} arrays")


if __name__ == "__main__":
    main()
