"""Small GGUF files for the tests, written with the ``gguf`` package's own writer from the weights of a Hugging
Face folder (tests/data/llama/hf_llama), the way llama.cpp's convert_hf_to_gguf.py writes a LlamaForCausalLM:
Hugging Face names renamed, q and k rows permuted for interleaved RoPE (``permute`` below is the converter's
own), shapes as stored ([out, in] in numpy order), norms in F32, the matrices in the type asked for, and the
tokenizer as its vocabulary and merges with a pre-tokenizer name."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

HF = Path(__file__).resolve().parents[1] / "data" / "llama" / "hf_llama"
_BLOCK = {"input_layernorm": "attn_norm", "self_attn.q_proj": "attn_q", "self_attn.k_proj": "attn_k",
          "self_attn.v_proj": "attn_v", "self_attn.o_proj": "attn_output", "post_attention_layernorm": "ffn_norm",
          "mlp.gate_proj": "ffn_gate", "mlp.up_proj": "ffn_up", "mlp.down_proj": "ffn_down"}


def permute(weights: np.ndarray, n_head: int, n_head_kv: int | None) -> np.ndarray:
    """convert_hf_to_gguf.py's LlamaModel.permute, as written there."""
    if n_head_kv is not None and n_head != n_head_kv:
        n_head = n_head_kv
    return (weights.reshape(n_head, 2, weights.shape[0] // n_head // 2, *weights.shape[1:])
            .swapaxes(1, 2)
            .reshape(weights.shape))


def hf_tensors(folder: Path = HF) -> dict[str, np.ndarray]:
    from safetensors.numpy import load_file

    return {k: v.astype(np.float64) for k, v in load_file(str(folder / "model.safetensors")).items()}


def write_gguf(path: Path, qtype: str = "F32", pre: str = "smollm", permute_qk: bool = True,
               folder: Path = HF, arch: str = "llama", eps: object = None, tokens: list | None = None,
               merges: list | None = None) -> Path:
    """Write ``folder``'s model as a GGUF: matrices in ``qtype`` (F32, Q8_0, Q4_1, …), norms in F32. ``eps``
    replaces the RMS epsilon (a float, or a string: a hostile file); ``tokens`` and ``merges`` replace the
    tokenizer's lists (hostile ones: numbers, merges without their space)."""
    import gguf

    cfg = json.loads((folder / "config.json").read_text())
    tok = json.loads((folder / "tokenizer.json").read_text())
    h, kv = cfg["num_attention_heads"], cfg["num_key_value_heads"]
    w = gguf.GGUFWriter(str(path), arch)
    w.add_context_length(cfg["max_position_embeddings"])
    w.add_embedding_length(cfg["hidden_size"])
    w.add_block_count(cfg["num_hidden_layers"])
    w.add_feed_forward_length(cfg["intermediate_size"])
    w.add_head_count(h)
    w.add_head_count_kv(kv)
    w.add_rope_freq_base(cfg["rope_parameters"]["rope_theta"])
    if isinstance(eps, str):
        w.add_string(f"{arch}.attention.layer_norm_rms_epsilon", eps)
    else:
        w.add_layer_norm_rms_eps(cfg["rms_norm_eps"] if eps is None else eps)
    w.add_rope_dimension_count(cfg["hidden_size"] // h)
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre(pre)
    vocab = tok["model"]["vocab"]
    w.add_token_list(tokens if tokens is not None else [t for t, _ in sorted(vocab.items(), key=lambda kv_: kv_[1])])
    w.add_token_merges(merges if merges is not None else
                       [m if isinstance(m, str) else " ".join(m) for m in tok["model"]["merges"]])
    w.add_eos_token_id(0)
    q = gguf.GGMLQuantizationType[qtype]
    for name, arr in hf_tensors(folder).items():
        base, kind = name.rsplit(".", 1)
        if base.startswith("model.layers."):
            i, rest = base[len("model.layers."):].split(".", 1)
            out = f"blk.{i}.{_BLOCK[rest]}.{kind}"
            if permute_qk and rest == "self_attn.q_proj":
                arr = permute(arr, h, h)
            elif permute_qk and rest == "self_attn.k_proj":
                arr = permute(arr, h, kv)
        else:
            out = {"model.embed_tokens": "token_embd", "model.norm": "output_norm", "lm_head": "output"}[base] + \
                  "." + kind
        if arr.ndim == 1 or qtype == "F32":
            w.add_tensor(out, arr.astype(np.float32))
        else:
            w.add_tensor(out, gguf.quants.quantize(arr.astype(np.float32), q), raw_dtype=q)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path
