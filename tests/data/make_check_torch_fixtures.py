"""Write tests/data/check/torch_cases.json: what PyTorch itself does with each shape case.

Run once with the fixture venv (``/work/torchenv/bin/python tests/data/make_check_torch_fixtures.py``); the test
(tests/check/test_check_torch.py) reads the JSON, so no torch is needed at test time. Each case is an
expression over named tensors and the shapes to try; PyTorch runs it on zero tensors and records the result
shape, or "error" when it raises.
"""

from __future__ import annotations

import itertools
import json
import random
import warnings
from pathlib import Path

import torch
import torch.nn.functional as F  # noqa: N812 - the spelling the cases use

OUT = Path(__file__).parent / "check" / "torch_cases.json"

# (expression, how many arrays it takes). Integer arguments are drawn per case and written into the text.
TEMPLATES = [
    "a.view({s})", "a.reshape({s})", "a.permute({p})", "a.transpose({i}, {j})", "torch.transpose(a, {i}, {j})",
    "a.swapaxes({i}, {j})", "a.unsqueeze({k})", "a.squeeze({i})", "a.squeeze()", "a.expand({s})",
    "a.repeat_interleave(2, dim={i})", "a.masked_fill(b == 0, 0.0)", "torch.matmul(a, b)", "a @ b",
    "torch.bmm(a, b)", "F.softmax(a, dim={i})", "a.softmax(dim={i})", "F.linear(a, b)", "torch.cat([a, b], dim={i})",
    "torch.stack([a, b], dim={i})", "a.sum(dim={i}, keepdim=True)", "a.mean(dim={i})", "a.max(dim={i}).values",
    "a + b", "a * b", "torch.where(a > 0, a, b)", "a.gather({i}, b.long())", "a.flatten({i})", "a.mT",
    "a[..., :2]", "a[None, :, 0]", "a.size({i}) * a", "torch.einsum('ij,jk->ik', a, b)",
]


def shapes(rng: random.Random) -> tuple[int, ...]:
    return tuple(rng.randint(1, 4) for _ in range(rng.randint(1, 4)))


def fill(template: str, a: tuple[int, ...], rng: random.Random) -> str:
    n = max(len(a), 1)
    perm = list(range(n))
    rng.shuffle(perm)
    sizes = [rng.choice([-1, 1, 2, 3, 4, 6, 8]) for _ in range(rng.randint(1, 4))]
    return template.format(s=", ".join(map(str, sizes)), p=", ".join(map(str, perm)),
                           i=rng.randint(-n, n - 1), j=rng.randint(-n, n - 1), k=rng.randint(-n - 1, n))


def run(expr: str, a: tuple[int, ...], b: tuple[int, ...]) -> list[int] | str:
    env = {"torch": torch, "F": F, "a": torch.zeros(a), "b": torch.zeros(b)}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a deprecation (implicit dim, .T on 3-D) counts as refused
            out = eval(expr, env)  # noqa: S307 - our own templates, in the fixture script only
        return list(out.shape)
    except Exception:
        return "error"


def main() -> None:
    rng = random.Random(28)
    cases = []
    for template in TEMPLATES:
        seen = set()
        for _ in itertools.count():
            if len(seen) >= 40 or _ > 400:
                break
            a = shapes(rng)
            b = shapes(rng) if rng.random() < 0.5 else a[rng.randint(0, len(a) - 1):]
            expr = fill(template, a, rng)
            if (expr, a, b) in seen:
                continue
            seen.add((expr, a, b))
            cases.append({"expr": expr, "a": list(a), "b": list(b), "torch": run(expr, a, b)})
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps({"torch": torch.__version__, "cases": cases}, indent=0) + "\n")
    print(f"wrote {len(cases)} cases to {OUT}")


if __name__ == "__main__":
    main()
