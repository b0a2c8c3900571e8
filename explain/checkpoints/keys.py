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
              "context_length": "n_ctx"}


def capped(where: str, key: str, v: int) -> int:
    """``v`` read from the file's ``key``, refused above the maximum of the option it sets (explain.core.limits)."""
    top = OPTION[KEY_OPTION[key.removeprefix("llama.")]].max
    if top is not None and v > top:
        raise WeightsError(f"{where}: {key} is {v:,}, above explain's maximum of {top:,}")
    return v
