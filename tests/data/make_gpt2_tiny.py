"""Generate the tiny GPT-2 checkpoint fixture in ``tests/data/gpt2_tiny/``.

This is a script, not a test (pytest collects only ``test_*.py``). It needs
Hugging Face ``transformers``, ``torch``, ``tokenizers``, ``safetensors`` and
``numpy``, which the project itself does not depend on; use a separate venv::

    python3 -m venv /work/venv-hf
    /work/venv-hf/bin/pip install torch==2.13.0        # CPU wheel
    /work/venv-hf/bin/pip install transformers tokenizers safetensors numpy
    /work/venv-hf/bin/python tests/data/make_gpt2_tiny.py

Nothing is downloaded: the tokenizer is trained and the model is built from a
config, both from the sentences below.

It writes, into ``tests/data/gpt2_tiny/`` (next to this script):

- ``model.safetensors``, ``config.json``, ``generation_config.json``: a
  2-layer, 2-head, 16-wide GPT-2 (``GPT2LMHeadModel.save_pretrained``, float32
  weights, safetensors format). The random init is perturbed (every LayerNorm
  weight/bias and every bias gets small seeded noise, so a wrong key mapping
  cannot hide behind ones and zeros) and then trained for a few hundred Adam
  steps on the sentences so that its predictions are not uniform.
- ``tokenizer.json`` (+ ``tokenizer_config.json`` and whatever
  ``PreTrainedTokenizerFast.save_pretrained`` writes): a byte-level BPE
  tokenizer trained with ``tokenizers`` on the sentences, GPT-2 style
  (ByteLevel pre-tokenizer/decoder, ``<|endoftext|>`` special token).
- ``expected.npz``: for each input ``i`` in 0..N-1 (N = ``n_inputs``):
  ``text_i`` (unicode scalar array), ``tokens_i`` (int64, (seq,)),
  ``logits_i`` (float64, (seq, vocab)) and ``loss_i`` (float64 scalar, the HF
  next-token loss with ``labels=input_ids``: mean cross-entropy of logits[:-1]
  against tokens[1:], recomputed in float64 because HF's loss upcasts to
  float32 only, and checked against HF's to 1e-5), all computed by ``transformers``
  in float64 from exactly the float32 values stored in ``model.safetensors``.
  Loadable with ``np.load(..., allow_pickle=False)``.
- ``README.md``: provenance and versions.

``tests/data/check_gpt2_tiny.py`` checks the result with a plain numpy GPT-2.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import safetensors.torch
import tokenizers
import torch
import transformers
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

OUT_DIR = Path(__file__).resolve().parent / "gpt2_tiny"
EOT = "<|endoftext|>"
VOCAB_SIZE = 300  # asked of the BPE trainer: 256 byte symbols + 1 special + merges
SEED = 0
TRAIN_STEPS = 300

SENTENCES = [
    "The cat is happy",
    "The cat is happy today",
    "The dog is happy",
    "The cat sat on the mat",
    "The dog sat on the log",
    "Your journey starts with one step",
    "Every journey starts with a single step",
    "One step at a time",
    "Thinking Machines",
    "Thinking machines learn from data",
    "Machines are thinking about words",
    "A transformer reads one token at a time",
    "Attention looks at the tokens before it",
    "The model predicts the next token",
    "The next word is often easy to guess",
    "Language models learn patterns in text",
    "The sun is bright and the sky is blue",
    "The cat likes the sun",
    "Happy cats sleep in the sun",
    "She starts her day with a cup of tea",
    "He writes one line of code at a time",
    "We learn by doing one small step",
    "The weights are tiny but the ideas are big",
    "Reading code is like reading a story",
    "The step function moves the model forward",
    "Small models are easy to explain",
    "Each layer adds a little more meaning",
    "The happy dog runs in the park",
    "Your cat is happy with you",
    "Thinking is a journey",
]

INPUTS = [
    "The cat is happy",
    "Your journey starts with one step",
    # "zebra", "café" and "ünder" never occur in training: unknown words fall
    # back to byte-level pieces, including multi-byte UTF-8.
    "The zebra at the café is ünder the sun",
]


def train_tokenizer() -> Tokenizer:
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    trainer = trainers.BpeTrainer(
        vocab_size=VOCAB_SIZE,
        min_frequency=2,
        special_tokens=[EOT],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(SENTENCES, trainer=trainer)
    return tok


def perturb(model: GPT2LMHeadModel, gen: torch.Generator) -> None:
    """Give every LayerNorm weight/bias and every bias small seeded noise."""
    with torch.no_grad():
        for name, p in model.named_parameters():
            noise = torch.randn(p.shape, generator=gen, dtype=p.dtype)
            if name.endswith(".bias"):
                p.add_(0.1 * noise)
            elif ".ln_" in name and name.endswith(".weight"):  # ln_1, ln_2, ln_f
                p.add_(0.1 * noise)


def train(model: GPT2LMHeadModel, tok: Tokenizer, eot_id: int) -> float:
    n_pos = model.config.n_positions
    # Each sentence is one document ending in <|endoftext|>, as in GPT-2 training.
    seqs = [(tok.encode(s).ids + [eot_id])[:n_pos] for s in SENTENCES]
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    model.train()
    loss_val = float("nan")
    for _ in range(TRAIN_STEPS):
        opt.zero_grad()
        total = 0.0
        for ids in seqs:
            x = torch.tensor([ids])
            out = model(input_ids=x, labels=x)
            (out.loss / len(seqs)).backward()
            total += out.loss.item()
        opt.step()
        loss_val = total / len(seqs)
    model.eval()
    return loss_val


def main() -> None:
    torch.manual_seed(SEED)
    gen = torch.Generator().manual_seed(SEED + 1)

    tok = train_tokenizer()
    vocab_size = tok.get_vocab_size()
    eot_id = tok.token_to_id(EOT)

    config = GPT2Config(
        vocab_size=vocab_size,
        n_positions=32,
        n_embd=16,
        n_layer=2,
        n_head=2,
        activation_function="gelu_new",
        resid_pdrop=0.0,
        embd_pdrop=0.0,
        attn_pdrop=0.0,
        layer_norm_epsilon=1e-5,
        bos_token_id=eot_id,
        eos_token_id=eot_id,
    )
    torch.manual_seed(SEED)
    model = GPT2LMHeadModel(config)
    perturb(model, gen)
    final_train_loss = train(model, tok, eot_id)

    if OUT_DIR.exists():
        shutil.rmtree(OUT_DIR)
    OUT_DIR.mkdir(parents=True)
    model.save_pretrained(OUT_DIR, safe_serialization=True)
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, bos_token=EOT, eos_token=EOT, unk_token=EOT)
    fast.save_pretrained(OUT_DIR)
    tok.save(str(OUT_DIR / "tokenizer.json"))  # the raw tokenizers file, written last

    # Reload exactly what was written, then compute in float64.
    stored = safetensors.torch.load_file(str(OUT_DIR / "model.safetensors"))
    assert all(t.dtype == torch.float32 for t in stored.values())
    ref = GPT2LMHeadModel.from_pretrained(OUT_DIR, attn_implementation="eager")
    for name, t in ref.state_dict().items():
        if name in stored:
            assert torch.equal(t, stored[name]), name
    assert torch.equal(ref.lm_head.weight, stored["transformer.wte.weight"])  # tied
    ref = ref.double().eval()

    reloaded = Tokenizer.from_file(str(OUT_DIR / "tokenizer.json"))
    arrays: dict[str, np.ndarray] = {"n_inputs": np.array(len(INPUTS), dtype=np.int64)}
    with torch.no_grad():
        for i, text in enumerate(INPUTS):
            ids = reloaded.encode(text).ids
            assert ids == tok.encode(text).ids
            assert reloaded.decode(ids) == text
            assert len(ids) <= config.n_positions
            x = torch.tensor([ids], dtype=torch.long)
            out = ref(input_ids=x, labels=x)
            assert out.logits.dtype == torch.float64
            arrays[f"text_{i}"] = np.array(text, dtype=np.str_)
            arrays[f"tokens_{i}"] = np.array(ids, dtype=np.int64)
            arrays[f"logits_{i}"] = out.logits[0].numpy().astype(np.float64)
            # HF's ForCausalLMLoss upcasts logits with .float(), i.e. to float32, even for a
            # float64 model; store the same loss (mean next-token cross-entropy) in float64.
            loss64 = torch.nn.functional.cross_entropy(out.logits[0, :-1], x[0, 1:])
            assert loss64.dtype == torch.float64
            assert abs(loss64.item() - out.loss.item()) < 1e-5 * max(1.0, loss64.item())
            arrays[f"loss_{i}"] = np.array(loss64.item(), dtype=np.float64)
            top = out.logits[0].argmax(-1).tolist()
            print(f"input {i}: {text!r} -> {len(ids)} tokens, loss {loss64.item():.6f} (HF {out.loss.item():.6f})")
            print("   next-token argmax:", [reloaded.id_to_token(t) for t in top])
    np.savez(OUT_DIR / "expected.npz", **arrays)

    versions = {
        "transformers": transformers.__version__,
        "torch": torch.__version__,
        "tokenizers": tokenizers.__version__,
        "safetensors": safetensors.__version__,
        "numpy": np.__version__,
    }
    write_readme(vocab_size, final_train_loss, versions)

    total = sum(f.stat().st_size for f in OUT_DIR.iterdir())
    print(f"vocab {vocab_size}, final train loss {final_train_loss:.4f}, folder {total} bytes")
    print(json.dumps(versions))
    assert total < 1_000_000, total


def write_readme(vocab_size: int, train_loss: float, versions: dict[str, str]) -> None:
    lines = [
        "# gpt2_tiny: a tiny GPT-2 checkpoint fixture",
        "",
        "Generated by `tests/data/make_gpt2_tiny.py`; do not edit by hand. Nothing here came",
        "from a model hub: the byte-level BPE tokenizer was trained with `tokenizers` on ~30",
        "sentences written in that script, and the model is a freshly initialised Hugging Face",
        f"`GPT2LMHeadModel` (2 layers, 2 heads, n_embd 16, n_positions 32, vocab {vocab_size}),",
        "seeded, with every LayerNorm weight/bias and every bias perturbed,",
        f"then trained for {TRAIN_STEPS} Adam steps on the same sentences (final train loss {train_loss:.3f}).",
        "",
        "- `model.safetensors`, `config.json`, `generation_config.json`: written by",
        "  `save_pretrained(safe_serialization=True)`; float32 weights, `lm_head.weight` tied to",
        "  `transformer.wte.weight` (not stored).",
        "- `tokenizer.json`, `tokenizer_config.json`: the byte-level BPE tokenizer; `<|endoftext|>`",
        "  is id 0 (also bos/eos in config.json). Inputs are encoded without any added token.",
        "- `expected.npz`: for each input i (`n_inputs` of them) `text_i`, `tokens_i` (int64),",
        "  `logits_i` (float64, (seq, vocab)) and `loss_i` (HF next-token loss, `labels=input_ids`:",
        "  mean cross-entropy of `logits[:-1]` vs `tokens[1:]`, recomputed in float64 since HF's own",
        "  loss is float32; the two agree to 1e-5),",
        "  computed by `transformers` in float64 from the stored float32 weights. Load with",
        "  `np.load(path, allow_pickle=False)`.",
        "",
        "Versions used:",
        "",
        *[f"- {k} {v}" for k, v in versions.items()],
        "",
        "Check with a plain numpy GPT-2 forward (needs only numpy and safetensors):",
        "`python tests/data/check_gpt2_tiny.py`.",
        "",
        "Regenerate (torch and transformers only in a separate venv; the project does not need them):",
        "",
        "```",
        "python3 -m venv /work/venv-hf",
        "/work/venv-hf/bin/pip install torch==2.13.0",
        "/work/venv-hf/bin/pip install transformers tokenizers safetensors numpy",
        "/work/venv-hf/bin/python tests/data/make_gpt2_tiny.py",
        "```",
        "",
    ]
    (OUT_DIR / "README.md").write_text("\n".join(lines))


if __name__ == "__main__":
    main()
