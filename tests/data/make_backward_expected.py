"""Generate tests/data/backward/*.npz: every gradient of every model, from PyTorch autograd in float64.

Run once with a Python that has torch (``/work/venv-hf/bin/python tests/data/make_backward_expected.py [CASE...]``,
every case by default, or only the named ones); the tests read the .npz files and need no torch.

Independence: explain is used only for what a user would hand to another tool, namely the parameters it
initialises (as ``explain params`` writes them), the token ids its tokenizer gives, and the config. Each model
is written again below in torch from its paper-level description, with torch's own ops (``torch.softmax``,
``F.layer_norm``, ``F.gelu``, autograd); nothing of explain's kernels, ops or models is called. Every forward
value that has a gradient is kept with ``retain_grad`` under explain's step name, so ``<step>.grad`` is
``tensor.grad``.

Each file holds: ``case`` (JSON: model and run options), ``param:<name>`` (the weights), ``given:<name>`` (the
objective's target or upstream gradient), ``loss``, ``grad:<name>`` for every step and parameter with a
gradient, and with ``lr`` also ``updated:<name>`` and ``loss_after``.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

ROOT = Path(__file__).resolve().parents[2]
OUT = Path(__file__).resolve().parent / "backward"
sys.path.insert(0, str(ROOT))

import explain  # noqa: E402  (only for the weights, the token ids and the config)

torch.set_default_dtype(torch.float64)

BIG = dict(d_model=16, n_heads=4, n_layers=2)
CASES: list[tuple[str, str, dict]] = [
    ("simple", "simple_default", {}),
    ("simple", "simple_sum", dict(normalize="sum")),
    ("simple", "simple_embeddings", dict(embeddings="journey")),
    ("simple", "simple_big", dict(d_model=16)),
    ("attention", "attention_default", {}),
    ("attention", "attention_big", dict(d_model=16)),
    ("attention", "attention_target", dict(output_target="random")),
    ("causal", "causal_default", {}),
    ("causal", "causal_big", dict(d_model=16, text="Your journey starts with one small step")),
    ("multihead", "multihead_default", {}),
    ("multihead", "multihead_big", dict(d_model=16, n_heads=4)),
    ("multihead", "multihead_grad_output", dict(grad_output="random")),
    ("synthesizer", "synthesizer_default", {}),
    ("synthesizer", "synthesizer_big", dict(d_model=16, n_heads=4)),
    ("encoder", "encoder_default", {}),
    ("encoder", "encoder_big", dict(BIG)),
    ("multihead", "multihead_book", dict(causal=True, qkv_bias=False, d_out=3)),  # the book's §3.6 options
    ("transformer", "transformer_default", {}),  # §3.4: one W_E for both embeddings and the logits
    ("transformer", "transformer_big", dict(BIG)),
    ("transformer", "transformer_untied", dict(tie_embeddings=False)),
    ("transformer", "transformer_padded", dict(text=["the cat sat on the mat", "a dog"],
                                               target=["le chat", "un chien est assis"])),
    ("gpt", "gpt_default", {}),
    ("gpt", "gpt_big", dict(BIG, text=["The cat is happy", "The dog is hungry"])),
    ("gpt", "gpt_lr", dict(lr=0.5)),
    ("gpt", "gpt_padded", dict(text=["the cat sat on the mat", "a dog"])),  # key padding mask, ignore_index
]


class Model:
    """Holds the parameters (leaf tensors) and every named intermediate, as explain names them."""

    def __init__(self, params: dict[str, np.ndarray]) -> None:
        self.p = {k: torch.tensor(v, requires_grad=True) for k, v in params.items()}
        self.acts: dict[str, torch.Tensor] = {}

    def keep(self, name: str, t: torch.Tensor) -> torch.Tensor:
        if t.requires_grad:
            t.retain_grad()
        self.acts[name] = t
        return t


def sinusoidal(n: int, d: int) -> torch.Tensor:
    pe = torch.zeros(n, d)
    pos = torch.arange(n, dtype=torch.float64)[:, None]
    for i in range(0, d, 2):
        angle = pos[:, 0] / 10000 ** (i / d)
        pe[:, i] = torch.sin(angle)
        if i + 1 < d:
            pe[:, i + 1] = torch.cos(angle)
    return pe


def heads(m: Model, name: str, x, W, b=None):
    """x (…, T, d) with per-head W (h, d, k), b (h, k) or none (qkv_bias=False) → (…, h, T, k)."""
    y = torch.einsum("...td,hdk->...htk", x, W)
    return m.keep(name, y if b is None else y + b[:, None, :])


def attention(m: Model, p: str, q, k, v, causal: bool, pad=None):
    s = m.keep(f"{p}.scores", q @ k.transpose(-1, -2))
    s = m.keep(f"{p}.scaled", s / math.sqrt(q.shape[-1]))
    if causal:
        T = s.shape[-1]
        s = m.keep(f"{p}.masked", s.masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), float("-inf")))
    if pad is not None:  # (B, S), True at a <pad> key: as torch's key_padding_mask, whole columns per sequence
        s = m.keep(f"{p}.pad_masked", s.masked_fill(pad[:, None, None, :], float("-inf")))
    a = m.keep(f"{p}.pattern", torch.softmax(s, dim=-1))
    return m.keep(f"{p}.z", a @ v)


def mha(m: Model, p: str, xq, xkv, causal: bool, pad=None):
    P = m.p
    q = heads(m, f"{p}.q", xq, P[f"{p}.W_Q"], P.get(f"{p}.b_Q"))
    k = heads(m, f"{p}.k", xkv, P[f"{p}.W_K"], P.get(f"{p}.b_K"))
    v = heads(m, f"{p}.v", xkv, P[f"{p}.W_V"], P.get(f"{p}.b_V"))
    z = attention(m, p, q, k, v, causal, pad)
    cat = m.keep(f"{p}.concat", z.transpose(-3, -2).flatten(-2))
    return m.keep(f"{p}_out", cat @ P[f"{p}.W_O"] + P[f"{p}.b_O"])


def ln(m: Model, name: str, x):
    w, b = m.p[f"{name}.w"], m.p[f"{name}.b"]
    return m.keep(name, F.layer_norm(x, (x.shape[-1],), w, b, eps=1e-5))


def ff(m: Model, p: str, x, act: str):
    P = m.p
    pre = m.keep(f"{p}.mlp.pre", x @ P[f"{p}.mlp.W_in"] + P[f"{p}.mlp.b_in"])
    post = m.keep(f"{p}.mlp.post", torch.relu(pre) if act == "relu" else F.gelu(pre, approximate="tanh"))
    return m.keep(f"{p}.mlp_out", post @ P[f"{p}.mlp.W_out"] + P[f"{p}.mlp.b_out"])


def tokens_in(m: Model, prefix: str, ids, emb):
    if emb is not None:
        return m.keep(f"{prefix}embed", torch.tensor(emb, requires_grad=True))
    W_E = m.p.get(f"{prefix}W_E", m.p.get("W_E"))  # the transformer's shared W_E (§3.4) has no prefix
    return m.keep(f"{prefix}embed", W_E[torch.tensor(ids)])


def with_positions(m: Model, prefix: str, ids, emb, d: int):
    x = tokens_in(m, prefix, ids, emb)
    if emb is None or prefix == "decoder.":
        x = m.keep(f"{prefix}embed_scaled", x * math.sqrt(d))
    return m.keep(f"{prefix}blocks.0.resid_pre", x + sinusoidal(x.shape[-2], d))


def encoder_stack(m: Model, prefix: str, x, layers: int, pad=None):
    for i in range(layers):
        p = f"{prefix}blocks.{i}"
        x = ln(m, f"{p}.ln1", m.keep(f"{p}.add1", x + mha(m, f"{p}.attn", x, x, False, pad)))
        x = ln(m, f"{p}.ln2", m.keep(f"{p}.add2", x + ff(m, p, x, "relu")))
    return x


def nll(m: Model, log_probs, targets):
    """Mean of −log p(target) over the targets that are not −100 (torch's ignore_index: padding)."""
    t = torch.tensor(targets)
    keep = t != -100
    picked = log_probs.gather(-1, t.clamp(min=0)[..., None])[..., 0]
    picked = m.keep("correct_log_probs", torch.where(keep, picked, torch.zeros(())))
    per = m.keep("token_loss", -picked)
    return m.keep("loss", per[keep].mean())


def padding(given: dict, name: str):
    """The recorded (B, S) key padding as a bool tensor, or None when the batch needed no padding."""
    return torch.tensor(given[name]).bool() if name in given else None


def forward(model: str, m: Model, cfg, given: dict) -> torch.Tensor:
    """The model's output (or its loss, for gpt and transformer)."""
    P, d, emb = m.p, cfg.d_model, given.get("embeddings")
    ids = given.get("tokens")
    if model == "simple":
        x = tokens_in(m, "", ids, emb)
        s = m.keep("attn.scores", x @ x.T)
        a = torch.softmax(s, -1) if cfg.normalize == "softmax" else s / s.sum(-1, keepdim=True)
        return m.keep("attn.z", m.keep("attn.pattern", a) @ x)
    if model in ("attention", "causal"):
        x = tokens_in(m, "", ids, emb)
        q, k, v = (m.keep(f"attn.{n.lower()}", x @ P[f"attn.W_{n}"] + P[f"attn.b_{n}"]) for n in "QKV")
        return attention(m, "attn", q, k, v, model == "causal")
    if model == "multihead":
        x = tokens_in(m, "", ids, emb)
        return mha(m, "attn", x, x, cfg.causal)
    if model == "synthesizer":
        x = tokens_in(m, "", ids, emb)
        T = x.shape[-2]
        hid = torch.relu(heads(m, "attn.hidden", x, P["attn.W_1"], P["attn.b_1"]))
        m.keep("attn.relu", hid)
        w2, b2 = m.keep("attn.W_2_used", P["attn.W_2"][:, :T]), m.keep("attn.b_2_used", P["attn.b_2"][:T])
        s = m.keep("attn.scores", hid @ w2 + b2)
        s = m.keep("attn.masked", s.masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), float("-inf")))
        a = m.keep("attn.pattern", torch.softmax(s, -1))
        v = heads(m, "attn.v", x, P["attn.W_V"], P["attn.b_V"])
        cat = m.keep("attn.concat", m.keep("attn.z", a @ v).transpose(-3, -2).flatten(-2))
        return m.keep("attn_out", cat @ P["attn.W_O"] + P["attn.b_O"])
    if model == "encoder":
        return encoder_stack(m, "", with_positions(m, "", ids, emb, d), cfg.n_layers)
    if model == "transformer":
        src_pad, tgt_pad = padding(given, "encoder.key_padding"), padding(given, "decoder.key_padding")
        memory = encoder_stack(m, "encoder.", with_positions(m, "encoder.", given["encoder.tokens"], None, d),
                               cfg.n_layers, src_pad)
        y = with_positions(m, "decoder.", given["decoder.tokens"], None, d)
        for i in range(cfg.n_layers):
            p = f"decoder.blocks.{i}"
            y = ln(m, f"{p}.ln1", m.keep(f"{p}.add1", y + mha(m, f"{p}.self_attn", y, y, True, tgt_pad)))
            y = ln(m, f"{p}.ln2", m.keep(f"{p}.add2", y + mha(m, f"{p}.cross_attn", y, memory, False, src_pad)))
            y = ln(m, f"{p}.ln3", m.keep(f"{p}.add3", y + ff(m, p, y, "relu")))
        if "W_E" in P:  # §3.4: the pre-softmax linear is the shared embedding matrix, transposed, no bias
            logits = m.keep("logits", y @ P["W_E"].T)
        else:
            logits = m.keep("logits", y @ P["unembed.W_U"] + P["unembed.b_U"])
        m.keep("probs", torch.softmax(logits, -1))
        return nll(m, m.keep("log_probs", torch.log_softmax(logits, -1)), given["targets"])
    if model == "gpt":
        tok = tokens_in(m, "", ids, None)
        T = tok.shape[-2]
        x = m.keep("blocks.0.resid_pre", tok + m.keep("pos_embed", P["W_pos"][:T]))
        for i in range(cfg.n_layers):
            p = f"blocks.{i}"
            h = ln(m, f"{p}.ln1", x)
            x = m.keep(f"{p}.resid_mid", x + mha(m, f"{p}.attn", h, h, True, padding(given, "key_padding")))
            x = m.keep(f"{p}.resid_post", x + ff(m, p, ln(m, f"{p}.ln2", x), "gelu"))
        logits = m.keep("logits", ln(m, "ln_final", x) @ P["W_E"].T)
        m.keep("probs", torch.softmax(logits, -1))
        lp = m.keep("log_probs", torch.log_softmax(logits, -1))
        return nll(m, m.keep("log_probs_pred", lp[:, :-1]), given["targets"])
    raise ValueError(model)


def loss_of(model: str, m: Model, cfg, given: dict) -> torch.Tensor:
    out = forward(model, m, cfg, given)
    if model in ("gpt", "transformer"):
        return out
    if "grad_output" in given:
        return (out * torch.tensor(given["grad_output"])).sum()  # ∂L/∂out = the given gradient
    # without a given target, explain's documented default: standard normal from default_rng([seed, 13])
    default = np.random.default_rng([cfg.seed, 13]).standard_normal(tuple(out.shape))
    target = torch.tensor(given.get("output_target", default))
    return m.keep("loss", ((out - target) ** 2).mean())


def make(model: str, case: str, options: dict) -> None:
    opts = dict(options)
    rng = np.random.default_rng(13)
    if opts.get("embeddings") == "journey":  # the inputs of "Build an LLM from Scratch", §3.3
        opts["embeddings"] = np.array([[0.43, 0.15, 0.89], [0.55, 0.87, 0.66], [0.57, 0.85, 0.64],
                                       [0.22, 0.58, 0.33], [0.77, 0.25, 0.10], [0.05, 0.80, 0.55]])
    objective = {k: opts.pop(k) for k in ("output_target", "grad_output") if k in opts}
    lr = opts.pop("lr", None)
    trace = explain.run(model, **opts)  # forward only: the weights, the token ids, the config
    cfg = trace.config
    out_shape = next(s for s in reversed(trace.steps) if s.op != "input").shape
    given = {n: trace[n].output for n in ("tokens", "encoder.tokens", "decoder.tokens", "targets", "key_padding",
                                          "encoder.key_padding", "decoder.key_padding") if n in trace}
    if "embeddings" in opts:
        given["embeddings"] = np.asarray(opts["embeddings"], dtype=np.float64)
    for k in objective:
        given[k] = rng.standard_normal(out_shape)
    m = Model(trace.params)
    loss = loss_of(model, m, cfg, given)
    loss.backward()
    data = {"case": np.array(json.dumps({"model": model, "options": {k: (v.tolist() if isinstance(v, np.ndarray)
                                                                         else v) for k, v in opts.items()},
                                         "objective": sorted(objective), "lr": lr})),
            "loss": np.array(loss.item())}
    data.update({f"param:{k}": v for k, v in trace.params.items()})
    data.update({f"given:{k}": v for k, v in given.items() if k in ("output_target", "grad_output", "embeddings")})
    for name, t in {**m.acts, **m.p}.items():
        if t.grad is not None:
            data[f"grad:{name}"] = t.grad.numpy().copy()
    if lr is not None:
        with torch.no_grad():
            new = {k: (v - lr * v.grad).numpy() for k, v in m.p.items() if v.grad is not None}
        data.update({f"updated:{k}": v for k, v in new.items()})
        after = loss_of(model, Model({**trace.params, **new}), cfg, given)
        data["loss_after"] = np.array(after.item())
    OUT.mkdir(exist_ok=True)
    np.savez_compressed(OUT / f"{case}.npz", **data)
    print(f"{case}: loss {loss.item():.6g}, {sum(k.startswith('grad:') for k in data)} gradients")


if __name__ == "__main__":
    wanted = set(sys.argv[1:])  # case names, to write only those (default: every case)
    for model, case, options in CASES:
        if not wanted or case in wanted:
            make(model, case, options)
