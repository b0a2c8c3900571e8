"""The module of each op kind, so that a kind's module is imported the first time the kind is asked for
(:func:`explain.ops.base.get`): a run loads the kinds it records, not all 23 modules. tests/ops/test_ops_lazy.py
holds this table to what the modules register, so a new kind that is not here fails there.

It imports nothing.
"""

from __future__ import annotations

KINDS_OF: dict[str, tuple[str, ...]] = {
    "activations": ("gelu_erf",), "cache": ("kv_append",),
    "elementwise": ("add", "scale", "mask", "relu", "gelu", "neg"),
    "embedding": ("input", "embed", "pos_embed", "sinusoid"),
    "experts": ("expert_linear", "expert_swiglu", "expert_sum"), "flash": ("tile_normalize",),
    "gated": ("rms_norm", "swiglu", "geglu"), "gates": ("sigmoid", "mul"), "grad": ("accumulate", "sgd", "adamw"),
    "interp": ("head_result", "stack_parts", "frozen_norm", "part_logits", "total", "patch"),
    "linear": ("linear", "linear_heads"), "masks": ("pad_mask", "window_mask"),
    "normalize": ("softmax", "sum_normalize", "log_softmax", "layer_norm"), "objective": ("mse", "pick", "mean"),
    "pairs": ("pair_parts", "rank_parts", "pair_total"),
    "products": ("matmul", "weighted_sum", "merge_heads", "slice"), "recovered": ("recovered",),
    "rotary": ("rope", "repeat_kv"), "routing": ("route", "keep"),
    "sampling": ("last_position", "temperature", "top_k", "top_p", "uniform", "sample", "argmax"),
    "sentence": ("mean_pool", "l2_normalize", "cosine_loss"),
    "tiled": ("tile_scores", "tile_max", "tile_rescale", "tile_exp", "tile_sum", "tile_acc"),
    "tokens": ("bpe_merge", "wordpiece_match", "join_ids"),
}
MODULE_OF: dict[str, str] = {kind: module for module, kinds in KINDS_OF.items() for kind in kinds}
