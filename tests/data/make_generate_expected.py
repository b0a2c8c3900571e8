"""Generate ``tests/data/generate/expected.npz``: what ``transformers`` generates from the ``gpt2_tiny`` fixture.

This is a script, not a test (pytest collects only ``test_*.py``). It needs ``torch`` and ``transformers``,
which the project does not depend on; run it once with the separate venv::

    /work/venv-hf/bin/python tests/data/make_generate_expected.py

It writes, for each prompt ``i`` (``n_prompts`` of them):

- ``prompt_i`` (int64, (T,)): the prompt's token ids (tokenizer.json, no added tokens);
- ``greedy_i`` (int64, (20,)): ``model.generate(do_sample=False, max_new_tokens=20)`` with the end-of-text
  token not stopping the generation (``eos_token_id`` unset), the new tokens only;
- ``scores_i`` (float64, (20, vocab)): the logits at each new position, from a float64 forward of the prompt
  and the new tokens before it (``generate``'s own ``output_logits`` are cast to float32; they agree to 1e-4).

and, as independent references for the sampling filters, on ``filter_logits`` (float64, (vocab,): the logits at
the first new position of prompt 0) transformers' own logits warpers in float64: ``temperature_0.7``,
``top_k_5``, ``top_p_0.9`` (cut entries are -inf) and ``t_3_top_k_6_top_p_0.95`` (temperature 3, then
top-k 6, then top-p 0.95, in that order, as ``generate`` applies them).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
import transformers
from tokenizers import Tokenizer
from transformers import GPT2LMHeadModel
from transformers.generation.logits_process import (
    TemperatureLogitsWarper,
    TopKLogitsWarper,
    TopPLogitsWarper,
)

HERE = Path(__file__).resolve().parent
CKPT = HERE / "gpt2_tiny"
OUT = HERE / "generate" / "expected.npz"
PROMPTS = ["The cat is happy", "Thinking machines"]  # with 20 new tokens, within n_positions 32
NEW = 20


def main() -> None:
    tok = Tokenizer.from_file(str(CKPT / "tokenizer.json"))
    model = GPT2LMHeadModel.from_pretrained(CKPT, attn_implementation="eager").double().eval()
    model.generation_config.eos_token_id = None  # generate all 20 tokens, through any <|endoftext|>
    model.generation_config.pad_token_id = 0
    arrays: dict[str, np.ndarray] = {"n_prompts": np.array(len(PROMPTS), dtype=np.int64)}
    with torch.no_grad():
        for i, text in enumerate(PROMPTS):
            ids = tok.encode(text).ids
            x = torch.tensor([ids], dtype=torch.long)
            out = model.generate(x, do_sample=False, max_new_tokens=NEW, return_dict_in_generate=True,
                                 output_logits=True, attention_mask=torch.ones_like(x))
            new = out.sequences[0, len(ids):].numpy().astype(np.int64)
            assert len(new) == NEW, len(new)
            # generate's own output_logits are cast to float32; recompute each new position's logits in float64
            # with a full forward of the prompt and the tokens before it (no cache), and check they agree
            seq = out.sequences[0]
            scores = np.stack([model(seq[None, :len(ids) + n]).logits[0, -1].numpy() for n in range(NEW)])
            assert scores.dtype == np.float64 and scores.shape == (NEW, model.config.vocab_size)
            np.testing.assert_allclose(scores, torch.stack(out.logits, dim=1)[0].numpy(), rtol=0, atol=1e-4)
            assert (scores.argmax(-1) == new).all()
            arrays[f"prompt_{i}"] = np.array(ids, dtype=np.int64)
            arrays[f"greedy_{i}"] = new
            arrays[f"scores_{i}"] = scores
            print(f"{text!r} -> {tok.decode(new.tolist())!r}")
        z = torch.tensor(arrays["scores_0"][:1])  # (1, vocab)
        arrays["filter_logits"] = z[0].numpy()
        ids0 = torch.from_numpy(arrays["prompt_0"][None, :])
        warped = {
            "temperature_0.7": TemperatureLogitsWarper(0.7)(ids0, z.clone()),
            "top_k_5": TopKLogitsWarper(5)(ids0, z.clone()),
            "top_p_0.9": TopPLogitsWarper(0.9)(ids0, z.clone()),
            "t_3_top_k_6_top_p_0.95": TopPLogitsWarper(0.95)(ids0, TopKLogitsWarper(6)(
                ids0, TemperatureLogitsWarper(3.0)(ids0, z.clone()))),
        }
        for name, w in warped.items():
            arrays[name] = w[0].numpy().astype(np.float64)
            print(name, "keeps", int(np.isfinite(arrays[name]).sum()), "tokens")
    OUT.parent.mkdir(exist_ok=True)
    np.savez(OUT, **arrays)
    print("transformers", transformers.__version__, "torch", torch.__version__)


if __name__ == "__main__":
    main()
