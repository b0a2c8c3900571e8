"""Live sampling (``D`` on a generation's step): new token N's draw with the temperature, top-k, top-p and seed
changed by keys, redrawn at once from N's logits (:func:`explain.report.draw.draw`): the top tokens with their words,
p after the temperature and p after the cuts as bars, the top-k and top-p cuts, the arithmetic under it
(:mod:`explain.render.draw`). The tokens after N are then regenerated in a cancellable worker
(:func:`explain.engine.resample.resample`, the generation's own loop on the key/value cache; nothing before N's draw runs
again) and shown struck through as stale until they come. Enter closes with the new run (the step screen shows
it), Esc with none (the run stays as it was)."""

from __future__ import annotations

from dataclasses import replace

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import Footer, Static

from explain.core.errors import ExplainError
from explain.core.names import gen_step
from explain.core.sampling import Sampling, make_sampling
from explain.engine.resample import logits_of, resample
from explain.ops.base import num
from explain.render.draw import draw_arithmetic, draw_table
from explain.report.draw import Draw, draw
from explain.trace import Trace
from explain.tui import picture
from explain.tui.background import in_background

TEMPERATURES = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.2, 1.5, 2.0, 3.0, 5.0)
TOP_K = (1, 2, 3, 5, 10, 20, 50, 100, 500, 1000, 5000)  # those below the vocabulary's size; then off
TOP_P = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99)  # then off
WAIT = 0.15  # seconds after the last key before regenerating: a run of keys starts one regeneration


def ladder(values: tuple, current: float | None, up: bool, off: bool = True) -> float | None:
    """The next value of ``values`` above (``up``) or below ``current``; None (off) is above them all."""
    if up:
        if current is None:
            return None
        above = [v for v in values if v > current]
        return above[0] if above else (None if off else current)
    below = [v for v in values if current is None or v < current]
    return below[-1] if below else current


class DrawBars(Widget):
    """The draw's table, as many token rows as the height holds."""

    DEFAULT_CSS = "DrawBars { height: 1fr; min-height: 4; }"

    def __init__(self) -> None:
        super().__init__(id="live-bars")
        self.draw: Draw | None = None
        self.vocab = None

    def render(self) -> Text:
        if self.draw is None:
            return Text("")
        return draw_table(self.draw, self.vocab, max(1, self.size.height - 1), self.size.width)


class SamplingScreen(ModalScreen[Trace | None]):
    """The draw of new token ``n`` of ``trace`` (sequence ``b``), its settings changed live."""

    DEFAULT_CSS = """
    SamplingScreen { align: center middle; }
    SamplingScreen #dialog { width: 100%; height: 100%; border: round $accent; background: $surface; padding: 0 1; }
    SamplingScreen #live-title, SamplingScreen #live-sums { height: auto; }
    SamplingScreen #live-settings { height: auto; }
    SamplingScreen #live-status { height: auto; color: $text-muted; }
    """
    # the settings line names the keys beside each value (t↓ T↑); the footer keeps to what closes the screen
    BINDINGS = [Binding("t", "temperature(0)", show=False), Binding("T", "temperature(1)", show=False),
                Binding("k", "top_k(0)", show=False), Binding("K", "top_k(1)", show=False),
                Binding("p", "top_p(0)", show=False), Binding("P", "top_p(1)", show=False),
                Binding("s", "seed(1)", show=False), Binding("S", "seed(-1)", show=False),
                Binding("0", "reset", "as recorded"), Binding("enter", "use", "use the new run"),
                Binding("escape,q", "dismiss(None)", "cancel"), picture.BINDING]

    def __init__(self, trace: Trace, n: int, b: int = 0) -> None:
        super().__init__()
        gen = trace.generation
        assert gen is not None, "live sampling needs a generation's trace"
        self.base, self.n, self.b = trace, n, b
        self.own: Sampling = gen.sampling_of(n)
        t = self.own.temperature
        self.t = 0.0 if self.own.greedy else float(t[b] if isinstance(t, tuple) else t)
        self.k, self.p, self.seed = self.own.top_k, self.own.top_p, self.own.seed
        self.sampling = self.own
        self.batch = trace[logits_of(trace, n)].shape[0]
        self.logits = trace[logits_of(trace, n)].output[b, 0]
        self.vocab = trace.labels.get("vocab")
        # byte-level labels carry their own spaces (␣); the word-level tokenizer's words need one between
        self.sep = "" if any("␣" in self._label(i) for i in range(min(2000, len(self.vocab or ())))) else " "
        self.result: Trace = trace  # the newest run made for self.sampling (stale while self.pending)
        self.pending = False
        self.closing = False
        self.failed = ""
        self._timer: Timer | None = None
        self._shown: dict[str, Text] = {}
        self.draw = draw(self.logits, self.sampling, n, self.batch, b)

    def picture_name(self) -> str:
        """``sampling gpt new token 2``: the model and the new token whose draw is shown."""
        return f"sampling {self.base.config.model} new token {self.n}"

    # -- what is shown -------------------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static("", id="live-title")
            yield Static("", id="live-settings")
            yield DrawBars()
            yield Static("", id="live-sums")
            yield Static("", id="live-status")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(DrawBars).vocab = self.vocab
        self._paint()

    def _ids(self, trace: Trace) -> list[int]:
        gen = trace.generation
        return [int(trace[s].output[self.b, 0]) for s in gen.steps] if gen is not None else []

    def _label(self, i: int) -> str:
        return self.vocab[i] if self.vocab is not None and 0 <= i < len(self.vocab) else f"#{i}"

    def _text(self) -> Text:
        """The text so far: the prompt, ``▸``, the tokens before N, N's new draw (reversed), those after it
        (struck through while they are regenerated)."""
        gen = self.base.generation
        assert gen is not None
        sep = self.sep
        before = self._ids(self.base)[:self.n]
        after = self._ids(self.result)[self.n + 1:]
        text = Text.assemble(("text: ", "dim"), sep.join(self._label(i) for i in gen.prompt[self.b]), " ▸ ")
        for i in before:
            text.append(self._label(i) + sep, "green")
        text.append(self._label(self.draw.token), "bold reverse green")
        if after:
            text.append(sep + sep.join(self._label(i) for i in after), "dim strike" if self.pending else "green")
        return text

    def _title(self) -> Text:
        gen = self.base.generation
        assert gen is not None
        seq = f", sequence {self.b}" if self.batch > 1 else ""
        t = Text.assemble((f"Live sampling: new token {self.n} of {len(gen.steps)}", "bold"),
                          f" ({gen_step(self.n, 'next')}{seq})")
        if self.size.width >= 110:  # one line at any width: the rows of the draw come first
            t.append(": its draw is redone at once, the tokens after it generated again", "dim")
        t.append("\n")
        t.append_text(self._text())
        return t

    def _settings(self) -> Text:
        greedy = self.t == 0
        parts = [("T ", "bold"), (f"{self.t:g}" if not greedy else "0 (greedy)", "yellow"), " (t↓ T↑)  "]
        for name, value, keys in (("top-k ", self.k, "(k↓ K↑)"), ("top-p ", self.p, "(p↓ P↑)")):
            shown = "off" if value is None else f"{value:g}"
            parts += [(name, "bold"), (shown + (" (not used: greedy)" if greedy and value is not None else ""),
                                       "dim" if greedy else "yellow"), f" {keys}  "]
        parts += [("seed ", "bold"), (str(self.seed), "yellow"), " (s↑ S↓)"]
        return Text.assemble(*parts)

    def _status(self) -> Text:
        gen = self.base.generation
        assert gen is not None
        if self.failed:
            return Text(self.failed, style="red")
        if self.pending:
            last = len(gen.steps) - 1
            span = f"tokens {self.n + 1}–{last}" if last > self.n + 1 else f"token {self.n + 1}"
            return Text(f"regenerating {span}… (struck through: the old ones)"
                        + (" Closing when done; Esc: keep the old run" if self.closing else ""))
        if self.result is self.base:
            return Text("the settings as recorded: Enter or Esc goes back to the steps")
        return Text("new run ready: Enter shows it in the steps, Esc keeps the old run")

    def _paint(self) -> None:
        bars = self.query_one(DrawBars)
        bars.draw = self.draw
        bars.refresh()
        for name, text in (("live-title", self._title()), ("live-settings", self._settings()),
                           ("live-sums", draw_arithmetic(self.draw, self.vocab, self.n)),
                           ("live-status", self._status())):
            if self._shown.get(name) != text:  # a repaint costs what changed: most keys leave the title alone
                self._shown[name] = text
                self.query_one(f"#{name}", Static).update(text)

    # -- a change of settings --------------------------------------------------------------------------------
    def _changed(self) -> None:
        greedy = self.t == 0
        try:
            s = make_sampling(self.own.max_new_tokens, self.t, None if greedy else self.k,
                              None if greedy else self.p, seed=self.seed)
        except ExplainError as exc:  # the ladders keep to valid values; said, never raised
            self.notify(str(exc), severity="warning", timeout=4)
            return
        self.sampling = replace(s, notes=(), eos=self.own.eos)
        self.draw = draw(self.logits, self.sampling, self.n, self.batch, self.b)
        self.failed = ""
        if self._timer is not None:
            self._timer.stop()
        if self.sampling == self.own:
            self.workers.cancel_group(self, "resample")
            self.result, self.pending = self.base, False
        else:
            self.pending = True
            self._timer = self.set_timer(WAIT, self._regenerate)
        self._paint()

    def _regenerate(self) -> None:
        self._run(self.sampling)

    @work(exclusive=True, group="resample", exit_on_error=False)
    async def _run(self, sampling: Sampling) -> None:
        try:
            trace = await in_background(lambda: resample(self.base, self.n, sampling))
        except ExplainError as exc:
            self.failed, self.pending = f"regeneration refused: {exc}", False
            self._paint()
            return
        if sampling != self.sampling:  # a newer key: its own regeneration is coming
            return
        self.result, self.pending = trace, False
        if self.closing:
            self.dismiss(trace)
            return
        self._paint()

    # -- actions -------------------------------------------------------------------------------------------
    def action_temperature(self, up: int) -> None:
        t = ladder(TEMPERATURES, self.t, bool(up), off=False)
        if t == self.t:
            self.notify(f"temperature {num(self.t)} is the {'highest' if up else 'lowest'} here", timeout=2)
            return
        self.t = float(t)
        self._changed()

    def _filter_key(self, name: str, values: tuple, current: float | None, up: bool) -> float | None:
        if self.t == 0:
            self.notify(f"T = 0 is greedy decoding: {name} would cut nothing that matters; t/T raise T first",
                        timeout=3)
            return current
        new = ladder(values, current, up)
        if new == current:
            self.notify(f"{name} is {'off already' if current is None else 'at its smallest'}", timeout=2)
        return new

    def action_top_k(self, up: int) -> None:
        values = tuple(v for v in TOP_K if v < self.logits.size)
        k = self._filter_key("top-k", values, self.k, bool(up))
        if k != self.k:
            self.k = None if k is None else int(k)
            self._changed()

    def action_top_p(self, up: int) -> None:
        p = self._filter_key("top-p", TOP_P, self.p, bool(up))
        if p != self.p:
            self.p = p
            self._changed()

    def action_seed(self, delta: int) -> None:
        if self.seed + delta < 0:
            return
        self.seed += delta
        self._changed()

    def action_reset(self) -> None:
        t = self.own.temperature
        self.t = 0.0 if self.own.greedy else float(t[self.b] if isinstance(t, tuple) else t)
        self.k, self.p, self.seed = self.own.top_k, self.own.top_p, self.own.seed
        self._changed()

    def action_use(self) -> None:
        if not self.pending:
            self.dismiss(None if self.result is self.base else self.result)
            return
        self.closing = True
        self._paint()
