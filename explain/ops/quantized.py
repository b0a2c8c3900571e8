"""Where a quantized weight's float came from (llama.cpp's GGUF block formats): its block, the block's scale d (and
minimum m) and its stored integer q, as a :class:`~explain.ops.base.CellExplanation` (the drill-down's data):
dequantization's explanation view, which a weight's drill-down ends with (:mod:`explain.trace.origin`).

Blocks hold 32 values each (ggml's ``QK``): Q8_0 = d (float16) and 32 int8, x = d·q; Q4_0 = d and 32 4-bit
integers, x = d·(q − 8); Q4_1 = d, m (float16) and 32 4-bit integers, x = d·q + m. Of a 4-bit block's 16 bytes,
value j < 16 is the low nibble of byte j and value j ≥ 16 the high nibble of byte j − 16. ggml multiplies in
float32, and so does :func:`dequantize_value` (the ``gguf`` package's dequantize, which the reader uses, agrees
bit for bit: tests/checkpoints/test_gguf.py).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from explain.ops.base import CellExplanation, arg, idx, num

QK = 32
BLOCK_BYTES = {"Q8_0": 34, "Q4_0": 18, "Q4_1": 20}
RULE = {"Q8_0": "d·q", "Q4_0": "d·(q − 8)", "Q4_1": "d·q + m"}


def block_fields(block: Any, qtype: str) -> tuple[float, float, Any]:
    """(d, m, the 32 stored integers) of one block's bytes (numpy uint8)."""
    d = float(block[:2].view(np.float16)[0])
    if qtype == "Q8_0":
        return d, 0.0, block[2:34].view(np.int8).astype(np.int64)
    m = float(block[2:4].view(np.float16)[0]) if qtype == "Q4_1" else 0.0
    nib = block[4:20] if qtype == "Q4_1" else block[2:18]
    return d, m, np.concatenate([nib & 0x0F, nib >> 4]).astype(np.int64)


def dequantize_value(d: float, m: float, q: int, qtype: str) -> float:
    """One value as ggml computes it, in float32."""
    q = q - 8 if qtype == "Q4_0" else q
    return float(np.float32(d) * np.float32(q) + np.float32(m))


def explain_cell(row_bytes: Any, qtype: str, col: int, name: str, index: tuple[int, ...],
                 stored: str, note: str = "") -> CellExplanation:
    """How the float at column ``col`` of a stored row (its bytes ``row_bytes``) was rebuilt; ``name[index]`` is
    the engine's parameter cell it became, ``stored`` says where the value sits in the file (row and column;
    ``note``: how the rows are laid out)."""
    b, j = divmod(col, QK)
    size = BLOCK_BYTES[qtype]
    d, m, q = block_fields(row_bytes[b * size:(b + 1) * size], qtype)
    value = dequantize_value(d, m, int(q[j]), qtype)
    where = f"int8 number {j}" if qtype == "Q8_0" else \
        (f"byte {j}'s low nibble" if j < 16 else f"byte {j - 16}'s high nibble")
    lines = [stored] + ([note] if note else []) + [
        f"value {j} of {qtype} block {b} (columns {b * QK}–{b * QK + QK - 1})",
        f"the block's scale d = {num(d, 8)} (float16)"]
    if qtype == "Q4_1":
        lines.append(f"the block's minimum m = {num(m, 8)} (float16)")
    lines.append(f"stored integer q = {int(q[j])} ({where})")
    rule = {"Q8_0": f"{num(d, 8)} × {int(q[j])}", "Q4_0": f"{num(d, 8)} × ({int(q[j])} − 8)",
            "Q4_1": f"{num(d, 8)} × {int(q[j])} + {arg(m, 8)}"}[qtype]
    lines += [f"{RULE[qtype]} = {rule}", f"= {num(value, 8)} (in float32, as ggml computes it)"]
    return CellExplanation(index, value, f"{name}{idx(index)}: value {j} of {qtype} block {b}", ("k", "q"),
                           [(k, int(v)) for k, v in enumerate(q)], lines)


def explain_float(value: float, qtype: str, col: int, name: str, index: tuple[int, ...], stored: str,
                  note: str = "") -> CellExplanation:
    """A weight the file stores as a float (F32, F16: the norms, or a whole unquantized file): read as is."""
    bits = {"F32": "float32", "F16": "float16"}[qtype]
    lines = [stored] + ([note] if note else []) + [
        f"stored as {qtype}: the {bits} {num(value, 8)} is read as is (no block, no scale)"]
    return CellExplanation(index, value, f"{name}{idx(index)}: stored as {qtype}", lines=lines)


__all__ = ["explain_cell", "explain_float", "block_fields", "dequantize_value", "QK", "BLOCK_BYTES"]
