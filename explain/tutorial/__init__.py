"""Tutorials: scripted walkthroughs of a run, stop by stop, that check their own numbers.

A tutorial is a TOML file (data, never code; the format is described in ``tutorials/README.md`` and
:mod:`explain.tutorial.schema`): a title and summary, a model with its options and inputs (text, token ids or
inline embeddings), weights written inline where exact numbers matter, and an ordered list of stops. A stop
names a step or a group of steps, narrates it in markdown, may focus a cell, may ask a question with its
answer, and may carry expectations (values, a cell, a shape, row sums, the mask, parameter counts …) that
the run must meet, so every tutorial checks itself.

```python
from explain.tutorial import list_tutorials, load_tutorial, run_tutorial, stop_step
tut = load_tutorial("thinking-machines")    # or a path to a .toml
trace = run_tutorial(tut)                   # runs and checks every expectation (TutorialError if one fails)
for stop in tut.stops:
    step = stop_step(trace, stop)
```

It may import ``core``, ``ops``, ``trace``, ``io``, ``checkpoints``, ``models``, ``tokenize``, ``report``, ``engine`` and
``interp``.
"""

from __future__ import annotations

from explain.tutorial.checks import Check
from explain.tutorial.errors import TutorialError, TutorialNotFound
from explain.tutorial.loader import list_tutorials, load_tutorial, shipped_files, tutorial_dirs
from explain.tutorial.runner import (
    Report,
    check_tutorial,
    narration_by_step,
    resolve_step,
    run_options,
    run_tutorial,
    stop_step,
    to_fetch,
)
from explain.tutorial.schema import DEFAULT_TOL, Expect, Stop, Tutorial

__all__ = [
    "to_fetch",
    "DEFAULT_TOL", "Check", "Expect", "Report", "Stop", "Tutorial", "TutorialError", "TutorialNotFound",
    "check_tutorial", "list_tutorials", "load_tutorial", "narration_by_step", "resolve_step", "run_options",
    "run_tutorial", "shipped_files", "stop_step", "tutorial_dirs",
]
