"""The sane maxima every input is held to, in one place, so the option definitions, the config check, the file
readers and the TUI's re-run form refuse the same things with the same words.

The caps are far above any real transformer (GPT-3 has 96 layers, 12,288 wide, a 50,257-token vocabulary;
the largest vocabularies are about 256,000) and far below what would make a shape-only plan loop for minutes
or an integer conversion run away. Memory is checked separately, against what the machine has
(:func:`explain.engine.api.check_memory`); these caps only keep that check and the planning before it fast.
Nothing here imports anything at import time, so :mod:`explain.core.options` reads its maxima from here.
"""

from __future__ import annotations

from explain.core.errors import UsageError

MAX_LAYERS = 1_000  # planning is linear in layers: 1,000 plan in well under a second
MAX_HEADS = 4_096
MAX_EXPERTS = 4_096  # DeepSeek-V3 routes among 256
MAX_WIDTH = 1_000_000  # d_model, d_head, d_ff
MAX_VOCAB = 10_000_000
MAX_CONTEXT = 1_000_000  # n_ctx, and so any sequence length
MAX_SEED = 2**63 - 1

MAX_DIGITS = 24  # a whole number written with more digits is refused before int() reads it
MAX_JSON_BYTES = 512 * 2**20  # tokenizer.json of the largest vocabularies is tens of MB
MAX_CONFIG_BYTES = 4 * 2**20  # a config.json is a few hundred bytes
MAX_TEXT_BYTES = 256 * 2**20  # an embeddings .json/.csv
MAX_CSV_FIELD = 1_000  # characters in one CSV number ("-1.2345678901234567e-308" is 24)
MAX_INPUT_BYTES = 2**30  # declared size of an embeddings array (GPT-2 small at 1,024 tokens: 6 MiB)
MAX_ABS_VALUE = 1e100  # an input or weight this large squared and summed (layer norm) still fits in float64
MAX_TOML_ARRAY = 10_000_000  # entries of a { shape = […] } table in a tutorial (80 MB as float64)


def check_max(value: int, cap: int, flag: str) -> None:
    """Refuse ``value`` above ``cap``, naming the flag it was given with and the cap."""
    if value > cap:
        shown = f"{value:,}" if len(str(value)) <= MAX_DIGITS else f"a {len(str(value)):,}-digit number"
        raise UsageError(f"{flag} {shown} is above the maximum of {cap:,}; give {cap:,} or less")


def parse_whole(text: str, what: str, *, minimum: int = 0) -> int:
    """A whole number written in ``text`` (ASCII digits only, at most :data:`MAX_DIGITS` of them), or a
    UsageError naming ``what``. ``int()`` alone accepts '²', '١٢' and 5,000-digit strings."""
    s = text.strip()
    if not s or not (s.isascii() and s.isdigit()):
        raise UsageError(f"{what} must be a whole number, got '{s[:40]}'")
    if len(s) > MAX_DIGITS:
        raise UsageError(f"{what} has {len(s):,} digits; give a number below 10^{MAX_DIGITS}")
    n = int(s)
    if n < minimum:
        raise UsageError(f"{what} must be at least {minimum}, got {n}")
    return n
