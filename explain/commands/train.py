"""``explain train MODEL``: train a GPT on the built-in corpus or a text file, with progress and a loss curve
drawn in the terminal, and save it as a Hugging Face folder (``-o DIR``) that ``--checkpoint`` reopens.

Only this shell draws: the core reports each step through a callback. Ctrl-C asks the loop to stop at the end
of the step it is in; the checkpoint it then writes is whole (written aside and swapped in). A second Ctrl-C
stops at once; the folder keeps the checkpoint before it (a save under way is dropped whole).
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from dataclasses import replace
from pathlib import Path

import click

from explain.checkpoints.trained import SIZES as TRAINED_SIZES  # the shipped model's: explain train's defaults
from explain.commands.options import click_option
from explain.core.errors import ExplainError
from explain.core.options import OPTION

SIZES = ("d_model", "n_heads", "n_layers", "d_ff", "n_ctx", "qkv_bias")
HINT = "Ctrl-C stops after this step and saves it (press it twice to stop at once)"


def _finite_lr(value: float) -> float:
    """--lr as explain run checks it (a positive, finite, normal float): NaN passes FloatRange's comparisons."""
    from explain.engine.backward import check_lr  # lazy: numpy only once a command runs

    return check_lr(value)


def _size_options(f):
    for name in reversed(SIZES):
        o = OPTION[name]
        if name in TRAINED_SIZES:
            what = o.help.split(" (default")[0].rstrip(".")
            f = click.option(o.flag, o.name, type=click.IntRange(min=o.min),
                             help=f"{what} (default {TRAINED_SIZES[name]}, the shipped model's).")(f)
        elif name == "qkv_bias":  # run's help speaks of Llama blocks, which train does not train
            f = click.option(f"{o.flag}/{o.off_flag}", o.name, default=None,
                             help="Biases on the Q, K, V projections (default on, as GPT-2 and the shipped model; "
                                  "--no-qkv-bias is the book's qkv_bias=False).")(f)
        else:
            f = click_option(o)(f)
    return f


@click.command()
@click.argument("model", metavar="MODEL")
@click.option("--steps", type=click.IntRange(min=1, max=10**7), default=None,
              help="Optimizer steps (default 2000, the shipped model's).")
@click.option("--lr", type=click.FloatRange(min=0, min_open=True, max=10), default=None, metavar="RATE",
              callback=lambda ctx, param, v: v if v is None else _finite_lr(v),  # NaN passes FloatRange's bounds
              help="Peak learning rate of AdamW, after a warm-up; cosine decay to a tenth (default 0.006).")
@click.option("--batch-size", type=click.IntRange(min=1, max=4096), default=None,
              help="Sequences per step, each --context tokens (default 16).")
@click.option("--seed", type=click.IntRange(min=0, max=2**63 - 1), default=0, show_default=True,
              help="Seed of the initial weights (GPT-2's initialisation) and of the batches.")
@_size_options
@click.option("--corpus", type=click.Path(dir_okay=False), default=None, metavar="FILE",
              help="A UTF-8 text file, one sequence per line (every 10th held out). Default: the built-in grammar "
                   "of the tutorials' sentences and induction sequences.")
@click.option("-o", "--output", type=click.Path(file_okay=False), default=None, metavar="DIR",
              help="The checkpoint folder (config.json, model.safetensors, tokenizer.json) to write; "
                   "default MODEL-trained. Saved every 250 steps and at the end. A folder holding anything "
                   "else is refused.")
@click.option("--force", is_flag=True, help="Replace the earlier checkpoint that DIR holds.")
def train(model: str, steps: int | None, lr: float | None, batch_size: int | None, seed: int, corpus: str | None,
          output: str | None, force: bool, **sizes) -> None:
    """Train MODEL (gpt) with explain's own forward and backward kernels and AdamW; draw the training and
    held-out losses as it goes; save a Hugging Face GPT-2 folder that --checkpoint reopens.

    Sizes not given are the shipped model's (--d-model 64 --heads 4 --layers 2 --d-ff 256 --context 48).
    Ctrl-C stops at the end of the current step and keeps a whole checkpoint; a second Ctrl-C stops at once
    (the folder keeps the last checkpoint saved, every 250 steps).

    \b
    Examples:
      explain train gpt --steps 200 -o my-gpt
      explain run gpt --checkpoint my-gpt --text "the cat sat on the"
      explain train gpt --corpus notes.txt --d-model 32 --steps 500 -o notes-gpt
    """
    # Small matrices: one BLAS thread is faster than several fighting over two cores, and the losses do not
    # depend on the thread count. Only effective before numpy is first imported (this command imports it).
    if "numpy" not in sys.modules:
        for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ.setdefault(var, "1")
    from explain.train import Settings, train_model  # lazy: numpy loads after the BLAS thread count is set
    from explain.train.loop import default_output  # lazy: as above

    settings = Settings(seed=seed)
    given = {k: v for k, v in dict(steps=steps, lr=lr, batch_size=batch_size).items() if v is not None}
    settings = replace(settings, **given)
    out = output if output is not None else str(default_output(model))
    stop = StopOnCtrlC()
    view = _View(settings.steps)
    earlier = _saved_step(out)  # an earlier run's checkpoint (--force): not this run's if nothing replaced it
    previous = signal.signal(signal.SIGINT, stop)
    try:
        with view:
            cfg, res = train_model(model, corpus, out, settings, view.update, lambda: stop.asked, force,
                                   **sizes)
    except KeyboardInterrupt:  # the second Ctrl-C: a save under way was dropped whole (explain.io.atomic)
        now = _saved_step(out)
        kept = (f"'{out}' holds the checkpoint of step {now[0]}" if now and now != earlier else
                f"this run saved nothing; '{out}' still holds the earlier run's checkpoint of step {now[0]}" if now
                else "nothing was saved")
        raise ExplainError(f"stopped at once by a second Ctrl-C during step {len(view.losses) + 1}; {kept}") from None
    finally:
        signal.signal(signal.SIGINT, previous)
    held = f", held-out {res.val_losses[-1][1]:.4f}" if res.val_losses else \
        " (nothing held out: fewer than 10 lines)"
    what = f"stopped at step {len(res.losses)} of {settings.steps} (Ctrl-C)" if res.stopped else \
        f"{len(res.losses)} step{'s' if len(res.losses) != 1 else ''}"
    # two lines, each short enough for 80 columns: one line wrapped by the terminal split a number ("3.7" / "241")
    click.echo(f"{what} in {res.seconds:.1f} s: loss {res.losses[-1]:.4f}{held}")
    click.echo(f"saved '{out}'; open it with: explain run {model} --checkpoint {out}")


def _saved_step(out: str) -> tuple[int, int] | None:
    """The step of the checkpoint the folder holds (its explain_train.json) and when that was written, or None."""
    from explain.train.hf import MARKER  # lazy: as train_model

    try:  # before the folder's checks: '~nosuchuser/ck' cannot be expanded (RuntimeError), which they refuse
        marker = Path(out).expanduser() / MARKER
        return int(json.loads(marker.read_text())["step"]), marker.stat().st_mtime_ns
    except (OSError, ValueError, KeyError, TypeError, RuntimeError):
        return None


class StopOnCtrlC:
    """The SIGINT handler: the first Ctrl-C asks the loop to stop after the step it is in (and save it); a second
    one stops at once, as a big model's step can take many seconds."""

    def __init__(self) -> None:
        self.asked = False

    def __call__(self, signum, frame) -> None:
        if self.asked:
            raise KeyboardInterrupt
        self.asked = True


class _View:
    """Progress and the loss curve: redrawn in place on a terminal (rich Live), a line per evaluation when the
    output is not one."""

    def __init__(self, steps: int) -> None:
        from rich.console import Console  # lazy: rich loads when training starts, not for --help

        self.console = Console(stderr=True)
        self.steps = steps
        self.losses: list[float] = []
        self.held: list[tuple[int, float]] = []
        self.live = None
        self.last = None
        self.drawn = 0.0

    def __enter__(self) -> _View:
        if self.console.is_terminal:
            from rich.live import Live  # lazy: only on a terminal

            self.live = Live(console=self.console, auto_refresh=False, transient=False)
            self.live.__enter__()
            self.live.update(self._render(), refresh=True)  # at once: a big model's first step takes seconds
        return self

    def __exit__(self, *exc) -> None:
        if self.live is not None:
            if self.last is None:  # nothing trained (a refusal): its one "Error:" line alone stays
                self.live.transient = True
            else:
                self.live.update(self._render(running=False), refresh=True)  # no "Ctrl-C stops …": nothing runs
            self.live.__exit__(*exc)

    def update(self, p) -> None:
        self.losses.append(p.loss)
        if p.val_loss is not None:
            self.held.append((p.step, p.val_loss))
        self.last = p
        if self.live is None:
            if p.val_loss is not None:
                self.console.print(self._line(p), highlight=False, soft_wrap=True)  # a log line, never wrapped
            return
        now = time.monotonic()
        if now - self.drawn > 0.2 or p.step == p.steps or p.saved:
            self.drawn = now
            self.live.update(self._render(), refresh=True)

    def _line(self, p, width: int | None = None) -> str:
        """The progress line; within ``width``, the speed and then the learning rate give way before the time
        left and "saved" would be cut off the end (80 columns showed "4 s, ~4 s")."""
        eta = (p.steps - p.step) * p.elapsed / p.step
        parts = [f"step {p.step}/{p.steps}", f"loss {p.loss:.4f}"]
        parts += [f"held-out {p.val_loss:.4f}"] if p.val_loss is not None else []
        parts += [f"lr {p.lr:.2e}", f"{p.tokens_per_s:,.0f} tok/s", f"{p.elapsed:.0f} s, ~{eta:.0f} s left"]
        parts += ["saved"] if p.saved else []
        line = "  ".join(parts)
        for drop in ("tok/s", "lr "):
            if width is None or len(line) <= width:
                break
            parts = [x for x in parts if drop not in x]
            line = "  ".join(parts)
        return line if width is None else line[:width]

    def _render(self, running: bool = True):
        from rich.console import Group  # lazy: rich loads when training starts, not for --help
        from rich.text import Text  # lazy: as above

        from explain.render.curve import loss_curve  # lazy: as above

        width, height = self.console.size
        p = self.last
        if p is None:
            return Group(f"step 1/{self.steps} under way…", HINT)
        # the progress line, the bar and the footer take three lines; one more stays free for the cursor, or
        # rich crops the curve's top row (its highest label) at 80×24
        curve = loss_curve(self.losses, self.held, self.steps, width, max(5, min(height - 4 - 1, 20)))
        done = width * p.step // p.steps  # drawn as text: rich's ProgressBar ends without a line break in a Group
        bar = Text("━" * done, style="magenta") + Text("━" * (width - done), style="grey30")
        hint = [HINT] if running else []
        return Group(self._line(p, width), bar, curve, *hint)
