"""Small Gemma 3 GGUF files for the tests, written with the ``gguf`` package's own writer from the weights of a
Hugging Face folder (tests/data/gemma/hf_gemma), the way llama.cpp's convert_hf_to_gguf.py writes a
Gemma3ForCausalLM: Hugging Face names renamed to gemma3's, every norm weight stored as 1 + w (the converter adds
the 1 that Gemma's RMSNorm adds at run time), q and k NOT permuted (gemma3 rotates halves in llama.cpp too), the
output tied (no ``output`` tensor), and the SentencePiece vocabulary as pieces, scores and types
(tests/data/gemma/spm_vocab.json). Like the converter it stores neither the layer pattern, nor the local θ, nor
the attention scale, unless asked (``pattern``, ``scale``)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parents[1] / "data" / "gemma"
HF = DATA / "hf_gemma"
_BLOCK = {"input_layernorm": "attn_norm", "self_attn.q_proj": "attn_q", "self_attn.k_proj": "attn_k",
          "self_attn.v_proj": "attn_v", "self_attn.o_proj": "attn_output", "self_attn.q_norm": "attn_q_norm",
          "self_attn.k_norm": "attn_k_norm", "post_attention_layernorm": "post_attention_norm",
          "pre_feedforward_layernorm": "ffn_norm", "post_feedforward_layernorm": "post_ffw_norm",
          "mlp.gate_proj": "ffn_gate", "mlp.up_proj": "ffn_up", "mlp.down_proj": "ffn_down"}


def hf_tensors(folder: Path = HF) -> dict[str, np.ndarray]:
    from safetensors.numpy import load_file

    return {k: v.astype(np.float64) for k, v in load_file(str(folder / "model.safetensors")).items()}


def spm_vocab() -> dict:
    return json.loads((DATA / "spm_vocab.json").read_text(encoding="utf-8"))


def write_gguf(path: Path, qtype: str = "F32", folder: Path = HF, vocab: dict | None = None,
               plus_one: bool = True, pattern: int | list[bool] | None = None, scale: float | None = None,
               tensors: dict[str, np.ndarray] | None = None) -> Path:
    """Write ``folder``'s model as a gemma3 GGUF: matrices in ``qtype`` (F32, Q8_0, …), norms in F32 stored as
    1 + w (``plus_one``=False writes w as is, as a careless converter would)."""
    import gguf

    cfg = json.loads((folder / "config.json").read_text())
    vocab = vocab or spm_vocab()
    w = gguf.GGUFWriter(str(path), "gemma3")
    w.add_context_length(cfg["max_position_embeddings"])
    w.add_embedding_length(cfg["hidden_size"])
    w.add_block_count(cfg["num_hidden_layers"])
    w.add_feed_forward_length(cfg["intermediate_size"])
    w.add_head_count(cfg["num_attention_heads"])
    w.add_head_count_kv(cfg["num_key_value_heads"])
    w.add_key_length(cfg["head_dim"])
    w.add_value_length(cfg["head_dim"])
    w.add_rope_freq_base(cfg["rope_parameters"]["full_attention"]["rope_theta"])
    w.add_sliding_window(cfg["sliding_window"])
    w.add_layer_norm_rms_eps(cfg["rms_norm_eps"])
    if pattern is not None:
        w.add_sliding_window_pattern(pattern)
    if scale is not None:
        w.add_attention_scale(scale)
    w.add_tokenizer_model("llama")
    w.add_tokenizer_pre("default")
    w.add_token_list(vocab["tokens"])
    w.add_token_scores(vocab["scores"])
    w.add_token_types(vocab["types"])
    w.add_bos_token_id(2)
    w.add_eos_token_id(1)
    w.add_unk_token_id(3)
    w.add_pad_token_id(0)
    w.add_add_bos_token(True)
    w.add_add_eos_token(False)
    w.add_add_space_prefix(False)
    q = gguf.GGMLQuantizationType[qtype]
    for name, arr in (tensors if tensors is not None else hf_tensors(folder)).items():
        base, kind = name.rsplit(".", 1)
        if base.startswith("model.layers."):
            i, rest = base[len("model.layers."):].split(".", 1)
            out = f"blk.{i}.{_BLOCK[rest]}.{kind}"
        else:
            out = {"model.embed_tokens": "token_embd", "model.norm": "output_norm", "lm_head": "output"}[base] + \
                  "." + kind
        if base.endswith("norm") and plus_one:
            arr = arr + 1.0  # llama.cpp's Gemma converter: data_torch + 1
        if arr.ndim == 1 or qtype == "F32" or arr.shape[-1] % 32:  # rows not whole blocks: F32, as llama.cpp
            w.add_tensor(out, arr.astype(np.float32))
        else:
            w.add_tensor(out, gguf.quants.quantize(arr.astype(np.float32), q), raw_dtype=q)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path
