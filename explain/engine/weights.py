"""Parameters: deterministic initialisation from a seed, and saving/loading ``.npz`` files by dotted name.

Initialisation follows PyTorch's defaults so the numbers look like a freshly built model: embeddings
N(0, 1) (nn.Embedding), linear weights and biases U(−1/√fan_in, 1/√fan_in) (nn.Linear), layer-norm γ = 1 and
β = 0; models the registry marks ``init="gpt2"`` declare GPT-2's instead (:func:`explain.models.layers.linear_params`):
weights N(0, std²) with the std on the spec, biases 0. Each parameter has its own generator seeded by (seed, crc32(name)), so a parameter's values do not
change when another parameter is added or the config changes elsewhere.
"""

from __future__ import annotations

import weakref
import zlib
from pathlib import Path
from typing import Any

import numpy as np

from explain.core.errors import WeightsError
from explain.core.shape_rules import fmt_shape
from explain.io.paths import check_output
from explain.io.readers import PICKLED, regular_file
from explain.trace import ParamSpec

# Arrays explain made or read and checked itself, known to be finite float64: a run given them again (the
# TUI's re-runs, a benchmark's repeated runs, the weights of a generation) skips the value pass over every
# parameter (0.12 s of a 2.2 s GPT-2-small run). They are made read-only so that "known finite" stays true;
# an array the caller wrote (or made writable again) is checked as any other. Keyed by id, and weak, so an
# array that is freed leaves the table and a new array at the same address is not taken for it.
_FINITE: weakref.WeakValueDictionary[int, np.ndarray] = weakref.WeakValueDictionary()


def _mark_finite(arr: np.ndarray) -> np.ndarray:
    """Make ``arr`` read-only and remember it as checked finite; returns it."""
    arr.flags.writeable = False
    _FINITE[id(arr)] = arr
    return arr


def _known_finite(arr: Any) -> bool:
    """Whether ``arr`` is an array this module checked (or made) and nobody could have written since."""
    return isinstance(arr, np.ndarray) and _FINITE.get(id(arr)) is arr and not arr.flags.writeable


def init_param(spec: ParamSpec, seed: int) -> np.ndarray:
    """One parameter's initial values (read-only: see ``_FINITE``)."""
    if spec.init == "ones":
        return _mark_finite(np.ones(spec.shape))
    if spec.init == "zeros":
        return _mark_finite(np.zeros(spec.shape))
    rng = np.random.default_rng([seed, zlib.crc32(spec.name.encode())])
    if spec.init == "normal":
        return _mark_finite(rng.standard_normal(spec.shape) * spec.std if spec.std != 1.0
                            else rng.standard_normal(spec.shape))
    if spec.init == "normal_0.02":  # Hugging Face's initializer_range for Llama: N(0, 0.02), linear and embedding
        return _mark_finite(0.02 * rng.standard_normal(spec.shape))
    bound = 1.0 / np.sqrt(spec.fan_in)
    return _mark_finite(rng.uniform(-bound, bound, spec.shape))


def init_params(specs: dict[str, ParamSpec], seed: int) -> dict[str, np.ndarray]:
    return {name: init_param(spec, seed) for name, spec in specs.items()}


def save_params(params: dict[str, np.ndarray], path: str | Path, force: bool = False) -> Path:
    """Write every parameter under its dotted name (``blocks.0.attn.W_Q``) to an uncompressed .npz, atomically
    (:mod:`explain.io.atomic`: the old file or the new one, whole, whatever happens). Without ``force`` nothing
    existing is replaced, not even a file (or link) that appeared at ``path`` since the caller looked.
    Returns the file written."""
    from explain.io.atomic import atomic_write  # lazy: the atomic writer (ctypes, signals) only when saving

    target = check_output(path, force, example="params.npz")
    with atomic_write(target, force=force) as f:
        np.savez(f, **params)
    return target


WEIGHTS_FIX = "write one with 'explain params MODEL -o FILE.npz' or np.savez"


def load_params(path: str | Path, specs: dict[str, ParamSpec]) -> dict[str, np.ndarray]:
    """Read a .npz of parameters and check it against the model: every key present, none extra, every shape
    right, every value finite. The archive's headers are checked against ``specs`` before any array is read
    (a zip bomb or a header claiming a huge shape is refused at once); pickled arrays are refused."""
    from explain.io.array_files import file_kind, npz_headers, read_npz  # lazy: zipfile only for a file

    p = regular_file(path, "weights file", WEIGHTS_FIX, WeightsError)
    kind = file_kind(p)
    if kind == "pickle":
        raise WeightsError(f"'{path}' {PICKLED}; save plain arrays with np.savez")
    if kind != "npz":
        raise WeightsError(f"cannot read weights from '{path}': it is not an .npz archive; {WEIGHTS_FIX}")
    # No size cap of its own: a header is checked against the model's own shape (which passed the memory
    # check) before its data is read, and the declared size against the member's.
    heads = npz_headers(p, "weights file", WEIGHTS_FIX, WeightsError, limit=1 << 62)
    # names and shapes first, from the headers: the same checks check_params makes on the arrays
    check_params({k: _Declared(shape, dtype) for k, (shape, dtype) in heads.items()}, specs, f"'{path}'",
                 values=False)
    loaded = read_npz(p, "weights file", WEIGHTS_FIX, WeightsError, limit=1 << 62)
    return check_params(loaded, specs, f"'{path}'", own=True)


def _row_sums(arr: np.ndarray) -> np.ndarray:
    """The sums along the last axis of a float64 array (its only value for a scalar), by BLAS."""
    if arr.ndim == 0 or arr.size == 0:
        return arr.reshape(-1)
    return arr.reshape(-1, arr.shape[-1]) @ np.ones(arr.shape[-1])


class _Declared:
    """An array as its header declares it (shape and dtype, no data), for checking before reading."""

    def __init__(self, shape: tuple[int, ...], dtype: Any) -> None:
        self.shape, self.dtype = shape, dtype


def check_params(loaded: dict[str, Any], specs: dict[str, ParamSpec], source: str = "the weights",
                 values: bool = True, own: bool = False) -> dict[str, np.ndarray]:
    """The parameters as float64 arrays, checked against the model's specs; errors name ``source``, the key
    and both shapes.

    An array made by :func:`init_param` or returned by an earlier check (and still read-only) is not scanned
    again. Converted copies are marked so; the caller's own float64 arrays are not (they stay writable, and
    are checked on every run), unless ``own`` says nobody else holds them (a file just read)."""
    missing = [k for k in specs if k not in loaded]
    extra = [k for k in loaded if k not in specs]
    if missing:
        s = specs[missing[0]]
        more = f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""
        raise WeightsError(f"{source} has no parameter '{missing[0]}' of shape {fmt_shape(s.shape)}{more}; "
                           "write a full set with 'explain params MODEL [options] -o FILE.npz'")
    if extra:
        raise WeightsError(f"{source} has a parameter '{extra[0]}' that this model does not use"
                           f"{f' (and {len(extra) - 1} more)' if len(extra) > 1 else ''}; check the model and "
                           "--layers/--heads match the file")
    out: dict[str, Any] = {}
    for name, spec in specs.items():
        arr = loaded[name] if isinstance(loaded[name], _Declared) else np.asarray(loaded[name])
        if tuple(arr.shape) != spec.shape:
            raise WeightsError(f"parameter '{name}' in {source} has shape {fmt_shape(arr.shape)} but the model "
                               f"needs {fmt_shape(spec.shape)}; match the config (--d-model, --heads, …) to the file")
        if arr.dtype.kind not in "fiu":
            raise WeightsError(f"parameter '{name}' in {source} is {arr.dtype}, not numbers")
        if not values:
            continue
        if _known_finite(arr):
            out[name] = arr
            continue
        given = arr
        arr = arr.astype(np.float64, copy=False)  # no second copy of a GPT-2-size model
        # One pass with no large temporary: NaN or ±inf anywhere makes the row sums non-finite. Only then (or
        # when finite values overflow a sum) look at every value; a GPT-2-size model would otherwise need a
        # 124 MB mask. The row sums are a matrix-vector product with ones, which BLAS runs on every core:
        # twice as fast as arr.sum() on a GPT-2-size model.
        with np.errstate(over="ignore", invalid="ignore"):
            total = _row_sums(arr).sum()
        if not np.isfinite(total) and not np.all(np.isfinite(arr)):
            raise WeightsError(f"parameter '{name}' in {source} contains NaN or infinite values")
        out[name] = _mark_finite(arr) if own or arr is not given else arr
    return out
