"""The sane maxima every input is held to, in one place, so the option definitions, the config check, the file
readers and the TUI's re-run form refuse the same things with the same words.

The caps are far above any real transformer (GPT-3 has 96 layers, 12,288 wide, a 50,257-token vocabulary;
the largest vocabularies are about 256,000) and far below what would make a shape-only plan loop for minutes
or an integer conversion run away. Memory is checked separately, against what the machine has
(:func:`explain.api.check_memory`); these caps only keep that check and the planning before it fast.
Nothing here imports anything at import time, so :mod:`explain.options` reads its maxima from here.
"""

from __future__ import annotations

MAX_LAYERS = 1_000  # planning is linear in layers: 1,000 plan in well under a second
MAX_HEADS = 4_096
MAX_WIDTH = 1_000_000  # d_model, d_head, d_ff
MAX_VOCAB = 10_000_000
MAX_CONTEXT = 1_000_000  # n_ctx, and so any sequence length
MAX_SEED = 2**63 - 1

# config name (and ``seq``) -> the largest value accepted (explain.options gives each option its max from here)
CAPS: dict[str, int] = {
    "n_layers": MAX_LAYERS, "n_heads": MAX_HEADS, "d_model": MAX_WIDTH, "d_head": MAX_WIDTH, "d_ff": MAX_WIDTH,
    "d_vocab": MAX_VOCAB, "n_ctx": MAX_CONTEXT, "seq": MAX_CONTEXT, "seed": MAX_SEED,
}
FLAGS: dict[str, str] = {"n_layers": "--layers", "n_heads": "--heads", "d_model": "--d-model", "d_head": "--d-head",
                         "d_ff": "--d-ff", "d_vocab": "--vocab", "n_ctx": "--context", "seq": "--seq",
                         "seed": "--seed"}

MAX_DIGITS = 24  # a whole number written with more digits is refused before int() reads it
MAX_JSON_BYTES = 512 * 2**20  # tokenizer.json of the largest vocabularies is tens of MB
MAX_CONFIG_BYTES = 4 * 2**20  # a config.json is a few hundred bytes
MAX_TEXT_BYTES = 256 * 2**20  # an embeddings .json/.csv
MAX_CSV_FIELD = 1_000  # characters in one CSV number ("-1.2345678901234567e-308" is 24)
MAX_INPUT_BYTES = 2**30  # declared size of an embeddings array (GPT-2 small at 1,024 tokens: 6 MiB)
MAX_ABS_VALUE = 1e100  # an input or weight this large squared and summed (layer norm) still fits in float64
MAX_TOML_ARRAY = 10_000_000  # entries of a { shape = […] } table in a tutorial (80 MB as float64)


def check_cap(name: str, value: int, flag: str | None = None) -> None:
    """Refuse ``value`` above the cap for ``name`` (``n_layers``, ``d_model``, …), naming the option and the cap."""
    from explain.errors import UsageError

    cap = CAPS.get(name)
    if cap is not None and value > cap:
        shown = f"{value:,}" if len(str(value)) <= MAX_DIGITS else f"a {len(str(value)):,}-digit number"
        raise UsageError(f"{flag or FLAGS.get(name, name)} {shown} is above the maximum of {cap:,}; "
                         f"give {cap:,} or less")


def parse_whole(text: str, what: str, *, minimum: int = 0) -> int:
    """A whole number written in ``text`` (ASCII digits only, at most :data:`MAX_DIGITS` of them), or a
    UsageError naming ``what``. ``int()`` alone accepts '²', '١٢' and 5,000-digit strings."""
    from explain.errors import UsageError

    s = text.strip()
    if not s or not (s.isascii() and s.isdigit()):
        raise UsageError(f"{what} must be a whole number, got '{s[:40]}'")
    if len(s) > MAX_DIGITS:
        raise UsageError(f"{what} has {len(s):,} digits; give a number below 10^{MAX_DIGITS}")
    n = int(s)
    if n < minimum:
        raise UsageError(f"{what} must be at least {minimum}, got {n}")
    return n


def parse_option(name: str, raw: str) -> int:
    """A whole-number option typed as text (the TUI's re-run form): ASCII digits, at most MAX_DIGITS of them,
    at least 1 (0 for the seed) and at most the cap, or a UsageError that names the field and the fix."""
    label = FLAGS.get(name, name).lstrip("-")
    n = parse_whole(raw, label, minimum=0 if name == "seed" else 1)
    check_cap(name, n, flag=label)
    return n
