"""The step names the interpretability tools build, in one place (no other module spells them):

- the logit lens of residual point ``blocks.3.resid_mid``: ``lens.blocks.3.resid_mid.ln_final``, ``….logits`` and ``….probs``;
- direct logit attribution: ``attr.blocks.0.attn.result`` (each head's write), ``attr.parts``, ``attr.normed``,
  ``attr.contributions``, ``attr.total``;
- activation patching of step S: the clean run's value ``patch.clean.S`` and the patched step ``patch.S``.
"""

from __future__ import annotations

LENS, ATTR, PATCH = "lens", "attr", "patch"


def lens_scope(point: str) -> str:
    """The scope the lens of residual ``point`` records in: ``lens.blocks.0.resid_pre``."""
    return f"{LENS}.{point}"


def lens_logits(point: str) -> str:
    return f"{lens_scope(point)}.logits"


def lens_probs(point: str) -> str:
    return f"{lens_scope(point)}.probs"


def head_result(layer: int) -> str:
    return f"{ATTR}.blocks.{layer}.attn.result"


def attr(name: str) -> str:
    """``attr.parts``, ``attr.normed``, ``attr.contributions``, ``attr.total``."""
    return f"{ATTR}.{name}"


def patch_clean(step: str) -> str:
    return f"{PATCH}.clean.{step}"


def patched(step: str) -> str:
    return f"{PATCH}.{step}"


def resid_pre(layer: int) -> str:
    return f"blocks.{layer}.resid_pre"


def resid_mid(layer: int) -> str:
    return f"blocks.{layer}.resid_mid"


def resid_post(layer: int) -> str:
    return f"blocks.{layer}.resid_post"
