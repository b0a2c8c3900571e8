"""The size keys a checkpoint's metadata holds (a config.json's, a GGUF file's) and the run option each sets, so
that a value past an option's maximum is refused naming the key and the file, not a flag the user never typed
(``--d-model 1,000,000,000 is above the maximum`` for a config.json's hidden_size, issue 36)."""

from __future__ import annotations

from explain.core.errors import WeightsError
from explain.core.options import OPTION

# The option each config.json key sets: a value past the option's maximum names the key and the file, not the flag
KEY_OPTION = {"hidden_size": "d_model", "num_attention_heads": "n_heads", "num_hidden_layers": "n_layers",
              "intermediate_size": "d_ff", "vocab_size": "d_vocab", "max_position_embeddings": "n_ctx",
              "num_key_value_heads": "n_kv_heads", "head_dim": "d_head", "embedding_length": "d_model",
              "attention.head_count": "n_heads", "block_count": "n_layers", "feed_forward_length": "d_ff",
              "context_length": "n_ctx", "q_lora_rank": "q_lora_rank", "kv_lora_rank": "kv_lora_rank",
              "qk_nope_head_dim": "qk_nope_head_dim", "qk_rope_head_dim": "qk_rope_head_dim", "v_head_dim": "v_head_dim",
              "n_routed_experts": "n_experts", "num_local_experts": "n_experts", "num_experts": "n_experts",
              "n_group": "n_group", "topk_group": "topk_group", "num_experts_per_tok": "experts_per_token",
              "moe_intermediate_size": "moe_d_ff", "n_shared_experts": "n_shared_experts",
              "shared_expert_intermediate_size": "shared_d_ff"}


def capped(where: str, key: str, v: int) -> int:
    """``v`` read from the file's ``key``, refused above the maximum of the option it sets (explain.core.limits); a key
    that sets no capped option as it is."""
    option = KEY_OPTION.get(key.removeprefix("llama."))
    top = OPTION[option].max if option else None
    if top is not None and v > top:
        raise WeightsError(f"{where}: {key} is {v:,}, above explain's maximum of {top:,}")
    return v
