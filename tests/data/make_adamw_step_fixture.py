"""Generate ``tests/data/train/adamw_step.npz``: one ``torch.optim.AdamW`` step on the shipped trained GPT, as
transformers computes it, for ``explain run gpt --trained --optimizer adamw --lr 0.001``.

This is a script, not a test. Run it once with the fixture venv (torch, transformers)::

    /work/torchenv/bin/python tests/data/make_adamw_step_fixture.py

``GPT2LMHeadModel.from_pretrained(explain/checkpoints/trained/gpt-tiny)`` in float64 reads TEXT (ids from the folder's
tokenizer.json), computes the mean next-token cross-entropy from its float64 logits (its own ``labels=`` loss
would cast them to float32), backpropagates, and takes one AdamW step
(lr 0.001, betas (0.9, 0.999), eps 1e-8; weight decay 0.1 on the weight matrices: every 2-D parameter in
transformers' layout (wte, wpe, c_attn, c_proj, c_fc), 0 on biases and layer-norm gains, as nanoGPT groups them);
then the loss again. It writes ``loss``, ``loss_after``, ``ids``, ``p_next`` and ``p_next_after`` (p of each next token,
before and after), and for the parameters in KEPT ``grad:NAME`` and
``p1:NAME`` (after the step), and for the 1-D ones ``m:NAME`` and ``v:NAME`` (torch's exp_avg and exp_avg_sq), under
transformers' names.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
from transformers import GPT2LMHeadModel, PreTrainedTokenizerFast

HERE = Path(__file__).resolve().parent
SHIPPED = HERE.parents[1] / "explain" / "checkpoints" / "trained" / "gpt-tiny"
TEXT = "the cat sat on the mat"
LR = 0.001
KEPT = ("transformer.wte.weight", "transformer.h.0.attn.c_attn.weight", "transformer.h.0.attn.c_attn.bias",
        "transformer.h.1.ln_2.weight", "transformer.h.1.mlp.c_proj.bias")


def next_token_loss(model: GPT2LMHeadModel, x: torch.Tensor) -> torch.Tensor:
    """The mean cross-entropy of each next token, in float64 (transformers' own loss casts the logits to float32)."""
    logits = model(x).logits[0]
    return torch.nn.functional.cross_entropy(logits[:-1], x[0, 1:])


def p_next(model: GPT2LMHeadModel, x: torch.Tensor) -> np.ndarray:
    """p(the token that comes next) at each position but the last."""
    with torch.no_grad():
        p = torch.softmax(model(x).logits[0, :-1], -1)
    return p[torch.arange(x.shape[1] - 1), x[0, 1:]].numpy()


def main() -> None:
    tok = PreTrainedTokenizerFast(tokenizer_file=str(SHIPPED / "tokenizer.json"))
    model = GPT2LMHeadModel.from_pretrained(SHIPPED).double()
    model.train(False)  # no dropout (the shipped config has none either)
    ids = tok(TEXT, add_special_tokens=False)["input_ids"]
    x = torch.tensor([ids])
    params = dict(model.named_parameters())  # the tied lm_head shares wte's tensor: listed once
    before = p_next(model, x)
    loss = next_token_loss(model, x)
    loss.backward()
    decay = [p for p in params.values() if p.ndim >= 2]
    rest = [p for p in params.values() if p.ndim < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": rest, "weight_decay": 0.0}],
                            lr=LR, betas=(0.9, 0.999), eps=1e-8)
    grads = {k: p.grad.detach().numpy().copy() for k, p in params.items()}
    opt.step()
    with torch.no_grad():
        after = next_token_loss(model, x)
    out = {"text": np.array(TEXT), "ids": np.array(ids), "lr": np.array(LR),
           "loss": np.array(loss.item()), "loss_after": np.array(after.item()),
           "p_next": before, "p_next_after": p_next(model, x)}
    for k in KEPT:  # a few parameters of each kind (the loss after covers every update): a small fixture
        p = params[k]
        out.update({f"grad:{k}": grads[k], f"p1:{k}": p.detach().numpy().copy()})
        if p.ndim == 1:
            out.update({f"m:{k}": opt.state[p]["exp_avg"].numpy().copy(),
                        f"v:{k}": opt.state[p]["exp_avg_sq"].numpy().copy()})
    np.savez(HERE / "train" / "adamw_step.npz", **out)
    print(f"loss {float(loss):.12f} -> {float(after):.12f}; {len(params)} parameters")


if __name__ == "__main__":
    main()
