"""Parameters: deterministic initialisation from a seed, and saving/loading ``.npz`` files by dotted name.

Initialisation follows PyTorch's defaults so the numbers look like a freshly built model: embeddings
N(0, 1) (nn.Embedding), linear weights and biases U(−1/√fan_in, 1/√fan_in) (nn.Linear), layer-norm γ = 1 and
β = 0. Each parameter has its own generator seeded by (seed, crc32(name)), so a parameter's values do not
change when another parameter is added or the config changes elsewhere.
"""

from __future__ import annotations

import zipfile
import zlib
from pathlib import Path
from typing import Any

import numpy as np

from explain.errors import WeightsError
from explain.shape_rules import fmt_shape
from explain.trace import ParamSpec


def init_param(spec: ParamSpec, seed: int) -> np.ndarray:
    """One parameter's initial values."""
    if spec.init == "ones":
        return np.ones(spec.shape)
    if spec.init == "zeros":
        return np.zeros(spec.shape)
    rng = np.random.default_rng([seed, zlib.crc32(spec.name.encode())])
    if spec.init == "normal":
        return rng.standard_normal(spec.shape)
    bound = 1.0 / np.sqrt(spec.fan_in)
    return rng.uniform(-bound, bound, spec.shape)


def init_params(specs: dict[str, ParamSpec], seed: int) -> dict[str, np.ndarray]:
    return {name: init_param(spec, seed) for name, spec in specs.items()}


def save_params(params: dict[str, np.ndarray], path: str | Path) -> None:
    """Write every parameter under its dotted name (``blocks.0.attn.W_Q``) to an uncompressed .npz."""
    np.savez(path, **params)


def load_params(path: str | Path, specs: dict[str, ParamSpec]) -> dict[str, np.ndarray]:
    """Read a .npz of parameters and check it against the model: every key present, none extra, every shape
    right, every value finite. Pickled arrays are refused."""
    p = Path(path)
    if not p.is_file():
        raise WeightsError(f"weights file '{path}' does not exist; write one with 'explain params MODEL -o FILE.npz'")
    from explain.inputs import numpy_file_kind

    kind = numpy_file_kind(p)
    if kind == "pickle":
        raise WeightsError(f"'{path}' holds pickled objects, which explain never loads; save plain arrays with np.savez")
    if kind != "npz":
        raise WeightsError(f"cannot read weights from '{path}': it is not an .npz archive; write one with "
                           "'explain params MODEL -o FILE.npz' or np.savez")
    try:
        with np.load(p, allow_pickle=False) as z:
            loaded = {k: z[k] for k in z.files}
    except (ValueError, OSError, zipfile.BadZipFile, EOFError) as exc:
        msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        if "pickle" in msg.lower():
            raise WeightsError(f"'{path}' holds pickled objects, which explain never loads; save plain arrays "
                               "with np.savez") from None
        raise WeightsError(f"cannot read weights from '{path}': {msg}; it must be an .npz written by np.savez") from None
    return check_params(loaded, specs, f"'{path}'")


def check_params(loaded: dict[str, Any], specs: dict[str, ParamSpec], source: str = "the weights") -> dict[str, np.ndarray]:
    """The parameters as float64 arrays, checked against the model's specs; errors name ``source``, the key
    and both shapes."""
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
        arr = np.asarray(loaded[name])
        if tuple(arr.shape) != spec.shape:
            raise WeightsError(f"parameter '{name}' in {source} has shape {fmt_shape(arr.shape)} but the model "
                               f"needs {fmt_shape(spec.shape)}; match the config (--d-model, --heads, …) to the file")
        if arr.dtype.kind not in "fiu":
            raise WeightsError(f"parameter '{name}' in {source} is {arr.dtype}, not numbers")
        arr = arr.astype(np.float64, copy=False)  # no second copy of a GPT-2-size model
        # One pass with no temporary: NaN or ±inf anywhere makes the sum non-finite. Only then (or when finite
        # values overflow the sum) look at every value; a GPT-2-size model would otherwise need a 124 MB mask.
        with np.errstate(over="ignore", invalid="ignore"):
            total = arr.sum()
        if not np.isfinite(total) and not np.all(np.isfinite(arr)):
            raise WeightsError(f"parameter '{name}' in {source} contains NaN or infinite values")
        out[name] = arr
    return out
