"""Where a checkpoint is: GGUF files known by their magic bytes, and hub ids on this machine: ``--checkpoint gpt2`` or ``--checkpoint HuggingFaceTB/SmolLM2-135M`` is looked up in the
local Hugging Face cache, with no network, the way huggingface_hub lays it out
(``models--ORG--NAME/refs/main`` holds the commit hash; ``models--ORG--NAME/snapshots/<hash>/`` the files)."""

from __future__ import annotations

import os
import re
from pathlib import Path

from explain.errors import InputError


def hub_cache() -> Path:
    """The local Hugging Face hub cache: $HF_HUB_CACHE, else $HF_HOME/hub, else ~/.cache/huggingface/hub."""
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"])
    if os.environ.get("HF_HOME"):
        return Path(os.environ["HF_HOME"]) / "hub"
    return Path.home() / ".cache" / "huggingface" / "hub"


_HUB_ID = re.compile(r"[A-Za-z0-9][\w.-]*(/[A-Za-z0-9][\w.-]*)?")


def resolve(path: str | Path) -> Path:
    """A folder or file as given, or a hub id (``gpt2``, ``HuggingFaceTB/SmolLM2-135M``) found in the local cache
    (``models--ORG--NAME/snapshots/<the hash in refs/main>/``), with no network; else a one-line error that
    gives the command that downloads it."""
    p = Path(path)
    if p.exists() or not _HUB_ID.fullmatch(str(path)) or str(path).endswith((".gguf", ".json")):
        return p
    cache = hub_cache()
    repo = cache / ("models--" + str(path).replace("/", "--"))
    try:
        ref = (repo / "refs" / "main").read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        ref = ""
    snap = repo / "snapshots" / ref
    if ref and re.fullmatch(r"[0-9a-f]{40}", ref) and snap.is_dir():
        return snap
    raise InputError(f"'{path}' is not a folder here, nor in the Hugging Face cache ({cache}); download it "
                     f"with: hf download {path}  (pip install huggingface_hub), then run this again")


def is_gguf(p: Path) -> bool:
    """Whether ``p`` is a file that starts like a GGUF file (its magic bytes)."""
    if not p.is_file():
        return False
    with open(p, "rb") as fh:
        return fh.read(4) == b"GGUF"
