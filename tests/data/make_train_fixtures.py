"""Generate ``tests/data/train/``: a folder ``explain train`` wrote, what transformers computes on it, and
torch's AdamW on given parameters and gradients.

This is a script, not a test. Run it once with the fixture venv (torch, transformers, tokenizers)::

    /work/torchenv/bin/python tests/data/make_train_fixtures.py

It writes:

- ``tiny/``: ``explain train gpt --steps 20 --batch-size 4 --d-model 16 --heads 2 --layers 2 --d-ff 32
  --context 16 --seed 3`` on the built-in corpus (explain is run in a subprocess, from this checkout);
- ``tiny_expected.npz``: for each text ``i``, ``tokens_i`` (the ids transformers' ``PreTrainedTokenizerFast``
  gives, from the folder's tokenizer.json) and ``logits_i``, from ``GPT2LMHeadModel.from_pretrained(tiny)`` cast
  to float64, and ``loss_i`` (transformers' own next-token loss with ``labels=input_ids``);
- ``adamw.npz``: ``p0:NAME``, ``g1:NAME``…``g3:NAME`` (seeded), and ``p3:NAME``, the parameters after three
  ``torch.optim.AdamW`` steps (lr 0.01, betas (0.9, 0.999), eps 1e-8, weight_decay 0.1 on the 2-D ones, 0 on
  the 1-D ones, as explain's AdamW groups them), float64.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import torch
from transformers import GPT2LMHeadModel, PreTrainedTokenizerFast

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
OUT = HERE / "train"
TEXTS = ["the cat sat on the mat .", "your journey starts with one step", "Thinking machines are smart !",
         "the zebra is happy"]  # the last has a word the vocabulary lacks: <unk>


def tiny() -> None:
    folder = OUT / "tiny"
    cmd = [sys.executable, "-m", "explain", "train", "gpt", "--steps", "20", "--batch-size", "4", "--d-model", "16",
           "--heads", "2", "--layers", "2", "--d-ff", "32", "--context", "16", "--seed", "3", "-o", str(folder)]
    subprocess.run(cmd, check=True, cwd=ROOT, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    tok = PreTrainedTokenizerFast(tokenizer_file=str(folder / "tokenizer.json"))
    model = GPT2LMHeadModel.from_pretrained(folder).double().eval()
    out = {}
    for i, text in enumerate(TEXTS):
        ids = tok(text, add_special_tokens=False)["input_ids"]
        x = torch.tensor([ids])
        with torch.no_grad():
            r = model(x, labels=x)
        out[f"text_{i}"] = np.array(text)
        out[f"tokens_{i}"] = np.array(ids, dtype=np.int64)
        out[f"logits_{i}"] = r.logits[0].numpy().astype(np.float64)
        out[f"loss_{i}"] = np.array(float(r.loss), dtype=np.float64)
    out["n_texts"] = np.array(len(TEXTS))
    np.savez(OUT / "tiny_expected.npz", **out)


def adamw() -> None:
    rng = np.random.default_rng(0)
    shapes = {"W": (3, 4), "b": (4,), "W3": (2, 3, 2)}
    p0 = {k: rng.standard_normal(s) for k, s in shapes.items()}
    grads = [{k: rng.standard_normal(s) for k, s in shapes.items()} for _ in range(3)]
    params = {k: torch.tensor(v, dtype=torch.float64, requires_grad=True) for k, v in p0.items()}
    opt = torch.optim.AdamW([{"params": [params["W"], params["W3"]], "weight_decay": 0.1},
                             {"params": [params["b"]], "weight_decay": 0.0}], lr=0.01, betas=(0.9, 0.999), eps=1e-8)
    for g in grads:
        for k, p in params.items():
            p.grad = torch.tensor(g[k], dtype=torch.float64)
        opt.step()
    out = {f"p0:{k}": v for k, v in p0.items()}
    for i, g in enumerate(grads, 1):
        out.update({f"g{i}:{k}": v for k, v in g.items()})
    out.update({f"p3:{k}": p.detach().numpy() for k, p in params.items()})
    np.savez(OUT / "adamw.npz", **out)


if __name__ == "__main__":
    OUT.mkdir(exist_ok=True)
    tiny()
    adamw()
