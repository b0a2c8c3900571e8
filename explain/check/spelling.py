"""Which library's spelling a snippet is written in: PyTorch's (its functions, methods and keywords) or einops'.
A small module of its own so that ``explain check`` can ask before it loads the expression checker."""

from __future__ import annotations

import re

_TORCH = re.compile(r"\btorch\.|\bF\.|\.(view|permute|unsqueeze|masked_fill|size|contiguous|expand|"
                    r"repeat_interleave|bmm|mT)\b|\b(dim|keepdim)\s*=")


EINOPS = re.compile(r"(^|[^.\w])(rearrange|repeat|reduce)\(|\beinops\.")


def looks_like_torch(source: str) -> bool:
    """Whether the text is written in PyTorch's spelling (its own functions, methods or keywords)."""
    return _TORCH.search(source) is not None
