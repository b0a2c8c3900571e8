"""The step names the interpretability tools build, from the prefixes of :mod:`explain.core.names` (the one module
that builds and parses step names; no other interp module spells one):

- the logit lens of residual point ``blocks.3.resid_mid``: ``lens.blocks.3.resid_mid.ln_final``, ``….logits``
  and ``….probs``;
- direct logit attribution: ``attrib.blocks.0.attn.result`` (each head's write), ``attrib.parts``,
  ``attrib.normed``, ``attrib.contributions``, ``attrib.total``;
- activation patching of step S: the clean run's value ``patch.clean.S`` and the patched step ``patch.S``;
- the residual stream's own steps, as the models name them (TransformerLens's hook names).
"""

from __future__ import annotations

from explain.core.names import ATTRIB, LENS, PATCH, gen_step, scoped

ATTR = ATTRIB  # the scope attribution records in


def lens_scope(point: str) -> str:
    """The scope the lens of residual ``point`` records in: ``lens.blocks.0.resid_pre``."""
    return scoped(LENS, point)


def lens_logits(point: str) -> str:
    return scoped(lens_scope(point), "logits")


def lens_probs(point: str) -> str:
    return scoped(lens_scope(point), "probs")


def lens_point(name: str) -> str:
    """The residual point a lens step reads: ``lens.blocks.0.resid_mid.probs`` → ``blocks.0.resid_mid``."""
    return name[len(LENS) + 1:].rsplit(".", 1)[0]


def point_phrase(point: str) -> str:
    """Where a lens read is taken, as a student reads it: ``blocks.0.resid_mid`` → "after block 0's attention",
    ``blocks.0.resid_post`` → "after block 0", the residual before block 0 → "at the embeddings" (a phrase of
    place like the others: the predictions pane said "the lens the embeddings")."""
    parts = point.split(".")
    if len(parts) == 3 and parts[0] == "blocks" and parts[1].isdigit():
        if parts[2] == "resid_mid":
            return f"after block {parts[1]}'s attention"
        if parts[2] == "resid_post":
            return f"after block {parts[1]}"
    return "at the embeddings"


def head_result(layer: int) -> str:
    """Each head's write in ``layer``, relative to the attribution's scope: ``blocks.0.attn.result``."""
    return f"blocks.{layer}.attn.result"


def attr(name: str) -> str:
    """``attrib.parts``, ``attrib.normed``, ``attrib.contributions``, ``attrib.total``."""
    return scoped(ATTRIB, name)


def patch_clean(step: str) -> str:
    return scoped(scoped(PATCH, "clean"), step)


def patched(step: str) -> str:
    return scoped(PATCH, step)


def patch_corrupt(step: str) -> str:
    """The corrupted run's own value of a step, given beside a patched run (its logits, for the fraction)."""
    return scoped(scoped(PATCH, "corrupt"), step)


RECOVERED = scoped(PATCH, "recovered")  # the step that ends a patched run: the recovered fraction


def resid_pre(layer: int) -> str:
    return f"blocks.{layer}.resid_pre"


def resid_mid(layer: int) -> str:
    return f"blocks.{layer}.resid_mid"


def resid_post(layer: int) -> str:
    return f"blocks.{layer}.resid_post"


def attn_pattern(layer: int, n: int | None = None) -> str:
    """``blocks.L.attn.pattern``; with ``n``, new token n's (``gen.n.blocks.L.attn.pattern``; n = 0 reads the
    prompt's own forward, which chose the first new token)."""
    name = f"blocks.{layer}.attn.pattern"
    return gen_step(n, name) if n else name


__all__ = ["ATTR", "LENS", "PATCH", "RECOVERED", "attn_pattern", "attr", "head_result", "lens_logits", "lens_point", "lens_probs",
           "lens_scope", "patch_clean", "patch_corrupt", "patched", "point_phrase", "resid_mid", "resid_post", "resid_pre"]
