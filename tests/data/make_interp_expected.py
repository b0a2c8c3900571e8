"""Make ``tests/data/interp/gpt2_tiny_expected.npz``: the logit lens, direct logit attribution and activation
patching of the tiny GPT-2 (``tests/data/gpt2_tiny``), computed with Hugging Face ``transformers`` and torch
forward hooks in float64, for ``tests/interp/test_interp_*.py`` to compare the engine against.

A script, not a test; it needs torch and transformers (the shared fixture venv)::

    /work/torchenv/bin/python tests/data/make_interp_expected.py

Nothing is downloaded. What it writes (T tokens, L layers, H heads, V words):

- ``clean_ids``, ``corrupt_ids`` (T,), ``word``, ``vs`` (token ids of ``WORD`` and ``VS``);
- ``lens`` (2L+1, T, V): the residual before block 0, after each block's attention (the input of its ``ln_2``)
  and after each block, of the clean text, through ``ln_f`` and the tied unembedding;
- ``logits_clean``, ``logits_corrupt`` (T, V);
- ``attr_parts`` (n, d): the clean run's final residual at the last position split into wte, wpe, each head's
  z_h·W_O[h], each b_O and each MLP output, in the engine's order; ``attr_contrib`` (n + 1,): each part's
  contribution to logit[WORD] − logit[VS] with ln_f's scale frozen (TransformerLens's convention), the last
  entry ln_f's β through the same direction;
- ``patch_resid`` (L, T): logit[WORD] − logit[VS] at the last position of the corrupted run with block l's input
  at position p taken from the clean run (a forward pre-hook on block l);
- ``patch_head`` (L, H): the same with head h's z (the slice of ``c_proj``'s input) taken from the clean run at
  every position; ``patch_mlp`` (L, T): with block l's MLP output at position p taken from the clean run.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
from tokenizers import Tokenizer
from transformers import GPT2LMHeadModel

HERE = Path(__file__).resolve().parent
CKPT = HERE / "gpt2_tiny"
OUT = HERE / "interp" / "gpt2_tiny_expected.npz"
CLEAN, CORRUPT, WORD, VS = "The cat is", "The step is", " happy", " the"


def main() -> None:
    torch.set_grad_enabled(False)
    tok = Tokenizer.from_file(str(CKPT / "tokenizer.json"))
    ids = {k: tok.encode(t, add_special_tokens=False).ids for k, t in (("clean", CLEAN), ("corrupt", CORRUPT))}
    assert len(ids["clean"]) == len(ids["corrupt"]), ids
    (word,), (vs,) = tok.encode(WORD).ids, tok.encode(VS).ids
    model = GPT2LMHeadModel.from_pretrained(str(CKPT)).double().eval()
    tr = model.transformer
    L, H = len(tr.h), model.config.n_head
    d = model.config.n_embd
    m = d // H
    T = len(ids["clean"])
    W_U = model.lm_head.weight  # (V, d), tied to wte

    def run(which: str, hooks=()):
        handles = [register(fn) for register, fn in hooks]
        try:
            return model(torch.tensor([ids[which]])).logits[0]
        finally:
            for h in handles:
                h.remove()

    def diff(logits):
        return float(logits[-1, word] - logits[-1, vs])

    # the clean run's activations, caught by hooks
    cache: dict[str, torch.Tensor] = {}
    catch = []
    for i, block in enumerate(tr.h):
        catch += [(block.register_forward_pre_hook, _store(cache, f"pre{i}")),
                  (block.ln_2.register_forward_pre_hook, _store(cache, f"mid{i}")),
                  (block.attn.c_proj.register_forward_pre_hook, _store(cache, f"z{i}")),
                  (block.mlp.register_forward_hook, _store_out(cache, f"mlp{i}")),
                  (block.register_forward_hook, _store_out(cache, f"post{i}"))]
    logits_clean = run("clean", catch)
    clean = dict(cache)
    logits_corrupt = run("corrupt")

    # the logit lens of the clean run
    points = [clean["pre0"]] + [x for i in range(L) for x in (clean[f"mid{i}"], clean[f"post{i}"])]
    lens = np.stack([(tr.ln_f(x) @ W_U.T)[0].numpy() for x in points])

    # direct logit attribution at the last position, for logit[word] − logit[vs]
    ids_c = torch.tensor(ids["clean"])
    parts = [tr.wte(ids_c)[-1], tr.wpe(torch.arange(T))[-1]]
    for i, block in enumerate(tr.h):
        z = clean[f"z{i}"][0, -1]  # (h·m,) merged heads, at the last position
        W_O, b_O = block.attn.c_proj.weight, block.attn.c_proj.bias  # Conv1D: (in, out)
        parts += [z[h * m:(h + 1) * m] @ W_O[h * m:(h + 1) * m] for h in range(H)] + [b_O, clean[f"mlp{i}"][0, -1]]
    parts_t = torch.stack(parts)  # (n, d)
    final = clean[f"post{L - 1}"][0, -1]
    assert torch.allclose(parts_t.sum(0), final, atol=1e-12)
    scale = torch.sqrt(final.var(unbiased=False) + tr.ln_f.eps)
    u = W_U[word] - W_U[vs]
    normed = (parts_t - parts_t.mean(-1, keepdim=True)) / scale * tr.ln_f.weight
    contrib = torch.cat([normed @ u, (tr.ln_f.bias @ u)[None]])
    assert abs(float(contrib.sum()) - diff(logits_clean)) < 1e-10

    # activation patching with hooks: one patched run per cell
    def patch_pre(i, p):
        def hook(module, args):
            x = args[0].clone()
            x[:, p] = clean[f"pre{i}"][:, p]
            return (x,) + args[1:]
        return tr.h[i].register_forward_pre_hook, hook

    def patch_head(i, h):
        def hook(module, args):
            z = args[0].clone()
            z[..., h * m:(h + 1) * m] = clean[f"z{i}"][..., h * m:(h + 1) * m]
            return (z,)
        return tr.h[i].attn.c_proj.register_forward_pre_hook, hook

    def patch_mlp(i, p):
        def hook(module, args, out):
            out = out.clone()
            out[:, p] = clean[f"mlp{i}"][:, p]
            return out
        return tr.h[i].mlp.register_forward_hook, hook

    resid = np.array([[diff(run("corrupt", [patch_pre(i, p)])) for p in range(T)] for i in range(L)])
    head = np.array([[diff(run("corrupt", [patch_head(i, h)])) for h in range(H)] for i in range(L)])
    mlp = np.array([[diff(run("corrupt", [patch_mlp(i, p)])) for p in range(T)] for i in range(L)])
    OUT.parent.mkdir(exist_ok=True)
    np.savez(OUT, clean_ids=np.array(ids["clean"]), corrupt_ids=np.array(ids["corrupt"]), word=word, vs=vs,
             lens=lens, logits_clean=logits_clean.numpy(), logits_corrupt=logits_corrupt.numpy(),
             attr_parts=parts_t.numpy(), attr_contrib=contrib.numpy(), patch_resid=resid, patch_head=head,
             patch_mlp=mlp)
    print(f"wrote {OUT}: clean {diff(logits_clean):.6f}, corrupt {diff(logits_corrupt):.6f}")


def _store(cache, key):
    def hook(module, args):
        cache[key] = args[0].clone()
    return hook


def _store_out(cache, key):
    def hook(module, args, out):
        cache[key] = (out[0] if isinstance(out, tuple) else out).clone()
    return hook


if __name__ == "__main__":
    main()
