"""Arrays written in a tutorial: nested lists of numbers, or a table for a big array that is mostly one value.

``[[1, 0], [0, 1]]`` is the array as written. ``{ shape = [4, 64], values = [[2, 0, 2], …] }`` is a 4 × 64
array whose leading corner holds ``values`` and whose other entries are ``fill`` (default 0): a d_k = 64 head
whose first three columns carry the numbers, written in four short lines. TOML's ``inf``/``-inf`` are allowed
(a masked score is −inf).
"""

from __future__ import annotations

from typing import Any

from explain.core.limits import MAX_TOML_ARRAY
from explain.tutorial.errors import Source

ARRAY_KEYS = ("shape", "values", "fill")


def _nested(v: Any, field: str, src: Source, stop: int | None, step: str | None) -> Any:
    import numpy as np  # lazy: numpy off the shape path

    def bad(what: str) -> Exception:
        return src.error(what, "write numbers in nested lists of equal length, e.g. [[1.0, 2.0], [3.0, 4.0]]",
                         field=field, stop=stop, step=step)

    def check(x: Any, depth: int) -> tuple[int, ...]:
        if isinstance(x, bool) or isinstance(x, str) or isinstance(x, dict):
            raise bad(f"holds {type(x).__name__} {x!r} where a number belongs")
        if isinstance(x, (int, float)):
            return ()
        if isinstance(x, list):
            shapes = [check(y, depth + 1) for y in x]
            if any(s != shapes[0] for s in shapes):
                lens = [len(y) if isinstance(y, list) else 1 for y in x]
                raise bad(f"is not rectangular: its rows have {', '.join(map(str, lens))} entries")
            return (len(x),) + (shapes[0] if shapes else ())
        raise bad(f"holds {type(x).__name__} where a number belongs")

    check(v, 0)
    return np.asarray(v, dtype=np.float64)


def to_array(v: Any, field: str, src: Source, *, ndim: int | None = None, stop: int | None = None,
             step: str | None = None) -> Any:
    """A float64 numpy array from a tutorial value, or a one-line error naming the field."""
    import numpy as np  # lazy: numpy off the shape path

    if isinstance(v, dict):
        unknown = [k for k in v if k not in ARRAY_KEYS]
        if unknown or "shape" not in v:
            what = f"unknown key '{unknown[0]}' in the array table" if unknown else "the array table has no shape"
            raise src.error(what, "write { shape = [4, 64], values = [[…]], fill = 0 } (values fill the leading "
                            "corner, fill the rest)", field=field, stop=stop, step=step)
        shape = v["shape"]
        if not (isinstance(shape, list) and shape and all(isinstance(n, int) and not isinstance(n, bool) and n >= 1
                                                          for n in shape)):
            raise src.error(f"shape must be a list of sizes ≥ 1, got {shape!r}", "write shape = [4, 64]",
                            field=field, stop=stop, step=step)
        count = 1
        for n in shape:
            count *= n
        if count > MAX_TOML_ARRAY:
            raise src.error(f"shape {shape} is {count:,} entries, more than the {MAX_TOML_ARRAY:,} a tutorial "
                            "array may have", "use a smaller shape (a walkthrough shows a few rows)",
                            field=field, stop=stop, step=step)
        fill = v.get("fill", 0.0)
        if isinstance(fill, bool) or not isinstance(fill, (int, float)):
            raise src.error(f"fill must be a number, got {fill!r}", "write fill = 0", field=field, stop=stop, step=step)
        arr = np.full(tuple(shape), float(fill))
        if "values" in v:
            corner = _nested(v["values"], field, src, stop, step)
            if corner.ndim != arr.ndim or any(c > s for c, s in zip(corner.shape, arr.shape)):
                raise src.error(f"values of shape {list(corner.shape)} do not fit in the leading corner of shape "
                                f"{shape}", f"give values with {len(shape)} levels of nesting, each no longer than "
                                "the shape", field=field, stop=stop, step=step)
            arr[tuple(slice(0, n) for n in corner.shape)] = corner
    else:
        arr = _nested(v, field, src, stop, step)
    if ndim is not None and arr.ndim != ndim:
        raise src.error(f"must be a {ndim}-D array, got shape {list(arr.shape)}",
                        "write one row per token: [[0.43, 0.15, 0.89], [0.55, 0.87, 0.66], …]",
                        field=field, stop=stop, step=step)
    return arr
