"""A checkpoint folder's files checked against each other when it is opened, from their headers alone.

Opening a folder used to read config.json only, so ``explain shapes`` answered for a config whose
model.safetensors had other sizes, and an index.json that mapped a tensor to a shard without it ended in a
traceback when the weights were read. Here, before anything else is done (and before numpy is imported), every
safetensors header is read (:func:`header_table`: the JSON header, no tensor data) and checked: its offsets fit
its shapes and its file, so a truncated or hand-made file is named now; then :func:`check_tensors` compares the
tensors with the shapes config.json implies: none missing, none of another model, every shape and type right.
The tokenizer's vocabulary is checked against config.json's vocab_size (and so, through the shapes, against the
embedding's rows) by :class:`explain.checkpoints.gpt2.Checkpoint` when its labels are read. Each disagreement is one
line naming both files and the fix.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from pathlib import Path

from explain.core.errors import WeightsError
from explain.core.options import check_cap
from explain.core.shape_rules import fmt_shape
from explain.io.readers import parse_json, regular_file

FLOAT_DTYPES = ("F16", "BF16", "F32", "F64")
# Bytes per element of every dtype the safetensors format names (https://huggingface.co/docs/safetensors).
ITEM_BYTES = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2, "I64": 8, "I32": 4, "I16": 2, "I8": 1, "U64": 8, "U32": 4,
              "U16": 2, "U8": 1, "BOOL": 1, "F8_E4M3": 1, "F8_E5M2": 1}
MAX_HEADER = 100 * 2**20  # the reference reader's own limit on the JSON header
FIX = "it must be a whole safetensors file (save_pretrained(safe_serialization=True) writes one)"

Table = dict[str, tuple[tuple[int, ...], str]]  # tensor name -> (shape, dtype)


def header_table(path: Path) -> Table:
    """Every tensor's shape and dtype from a safetensors file's header, the header checked first: its length
    fits the file, each entry has a dtype, a shape of whole numbers and data offsets that hold exactly that
    many bytes inside the file."""
    regular_file(path, "weights file", FIX, WeightsError)
    try:
        size = os.path.getsize(path)
        with open(path, "rb") as fh:
            n = int.from_bytes(fh.read(8), "little")
            if not 2 <= n <= min(MAX_HEADER, size - 8):
                raise WeightsError(f"cannot read '{path}': its header length {n:,} does not fit a file of "
                                   f"{size:,} bytes; {FIX}")
            raw = fh.read(n)
    except OSError as exc:
        raise WeightsError(f"cannot read '{path}': {exc.strerror or exc}; {FIX}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise WeightsError(f"cannot read '{path}': its header is not UTF-8 JSON; {FIX}") from None
    header = parse_json(text, f"the header of '{path}'", FIX, WeightsError)
    if not isinstance(header, dict):
        raise WeightsError(f"cannot read '{path}': its header is not a JSON object; {FIX}")
    data = size - 8 - n
    table: Table = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        shape = info.get("shape") if isinstance(info, dict) else None
        offsets = info.get("data_offsets") if isinstance(info, dict) else None
        dtype = info.get("dtype") if isinstance(info, dict) else None
        whole = lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 0  # noqa: E731
        if not (isinstance(dtype, str) and isinstance(shape, list) and all(whole(v) for v in shape)
                and isinstance(offsets, list) and len(offsets) == 2 and all(whole(v) for v in offsets)):
            raise WeightsError(f"cannot read '{path}': the header entry {name!r} has no dtype, shape of whole "
                               f"numbers and two data offsets; {FIX}")
        begin, end = offsets
        if dtype in ITEM_BYTES and end - begin != math.prod(shape) * ITEM_BYTES[dtype]:
            raise WeightsError(f"cannot read '{path}': tensor {name!r} of shape {fmt_shape(tuple(shape))} {dtype} needs "
                               f"{math.prod(shape) * ITEM_BYTES[dtype]:,} bytes, its offsets hold {end - begin:,}; {FIX}")
        if not begin <= end <= data:
            raise WeightsError(f"cannot read '{path}': tensor {name!r} ends at byte {end:,} of a data section of "
                               f"{data:,} bytes (the file is cut short); {FIX}")
        table[name] = (tuple(shape), dtype)
    return table


def check_tensors(table: Table, want: dict[str, tuple[int, ...]], config_says: str, *,
                  short: Callable[[str], str | None], stored: Callable[[str], str], where: Callable[[str], str],
                  missing_where: str) -> dict[str, str]:
    """``table``'s tensors against the shapes ``want`` (under the model's own names): ``short(name)`` is the
    model's name of a stored tensor (None: a buffer to ignore), ``stored(short)`` the name it is stored under,
    ``where(name)`` its file and ``missing_where`` where a missing one was looked for. A missing tensor, one the
    config's model has no place for, a wrong shape or a non-float type is refused in one line; returns the
    model's name -> the stored name."""
    found: dict[str, str] = {}
    for name in table:
        s = short(name)
        if s is None:
            continue
        if s not in want:
            raise WeightsError(f"{where(name)} has a tensor {name!r} that the model of config.json ({config_says}) "
                               "does not use; check that config.json belongs to these weights")
        found[s] = name
    missing = [s for s in want if s not in found]
    if missing:
        more = f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""
        raise WeightsError(f"{missing_where} has no tensor {stored(missing[0])!r} of shape {fmt_shape(want[missing[0]])}"
                           f"{more}, which config.json ({config_says}) needs; check that config.json belongs to "
                           "these weights")
    for s, shape in want.items():  # in model order, so the first error is the earliest tensor
        name = found[s]
        got, dtype = table[name]
        if got != shape:
            raise WeightsError(f"tensor {name!r} in {where(name)} has shape {fmt_shape(got)} but config.json "
                               f"({config_says}) needs {fmt_shape(shape)}; check that config.json belongs to these weights")
        if dtype not in FLOAT_DTYPES:
            raise WeightsError(f"tensor {name!r} in {where(name)} is {dtype}; explain reads {', '.join(FLOAT_DTYPES)}")
    return found


def check_caps(options: dict[str, object]) -> None:
    """The config's sizes within explain's maxima (:mod:`explain.core.limits`), before the shapes they imply are
    listed: a config.json claiming 10⁷ layers is refused in a moment, as ``--layers 10000000`` is."""
    for name, value in options.items():
        if isinstance(value, int) and not isinstance(value, bool):
            check_cap(name, value)


def check_index(index: Path, wmap: dict[str, str], tables: dict[str, Table]) -> None:
    """Every tensor a safetensors index maps to a shard is in that shard's header, and no shard holds a
    tensor the index leaves out (it would be silently skipped)."""
    for name, shard in wmap.items():
        if name not in tables[shard]:
            raise WeightsError(f"'{index}' puts tensor {name!r} in '{shard}', which has no such tensor; the index "
                               "belongs to other shards (write the folder again with save_pretrained)")
    for shard, table in tables.items():
        for name in table:
            if name not in wmap:
                raise WeightsError(f"'{index.parent / shard}' holds tensor {name!r}, which '{index.name}' does not "
                                   "list; the index belongs to other shards (write the folder again with "
                                   "save_pretrained)")


__all__ = ["header_table", "check_caps", "check_tensors", "check_index", "FLOAT_DTYPES", "Table"]
