"""explain: a terminal step-through explainer for transformers.

``explain.run(model, **options)`` runs one of the small numpy transformers and returns a :class:`Trace`, a
sequence of :class:`Step` s indexable by name (``trace["blocks.0.attn.pattern"].output``).

Importing this package imports nothing heavy: ``run``, ``Trace`` and ``Step`` are loaded (with numpy) on first
use, so the shape-checking CLI starts as fast as click does.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"

__all__ = ["run", "generate", "generated_ids", "Trace", "Step", "__version__"]


def __getattr__(name: str) -> Any:
    # Lazy so that `import explain` (and the CLI's `explain check`) never pays for numpy.
    if name in ("run", "generate", "generated_ids"):
        from explain.engine import api  # lazy: `import explain` stays light

        return getattr(api, name)
    if name in ("Trace", "Step"):
        from explain import trace  # lazy: `import explain` stays light

        return getattr(trace, name)
    raise AttributeError(f"module 'explain' has no attribute {name!r}")
