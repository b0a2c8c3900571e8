"""StepKeys: the step screen's keys whose work is the Controller's (G r e x X o / g m y A P W E), and ``f``
(a pure move of the view, here for room: the screen's module is full), one explicit
``action_*`` each. Explicit, not forwarded by attribute lookup (issue 38): Textual, the reader and a test
can see every action the screen has, and a key without its action fails a test, not a student. Also the name of the
screen's picture (``c``, the app's :func:`explain.tui.picture.save_picture`): the step's."""

from __future__ import annotations

from typing import Any

from explain.render.view import View
from explain.tui.controller import Controller


class StepKeys:
    """The Controller's keys as the step screen's actions; the screen sets ``controller``."""

    controller: Controller
    view: View
    notify: Any  # the screen's own (Textual's Screen.notify)

    def action_top(self) -> None:
        self.view, said = self.view.top()
        self.notify(said, timeout=3)

    def action_generate(self) -> None:
        self.controller.generate()

    def action_gradient(self) -> None:
        self.controller.gradient()

    def action_rerun(self) -> None:
        self.controller.rerun()

    def action_export_step(self) -> None:
        self.controller.export_step()

    def action_export_run(self) -> None:
        self.controller.export_run()

    def action_tokenizer(self) -> None:
        self.controller.tokenizer()

    def action_search(self) -> None:
        self.controller.search()

    def action_goto(self) -> None:
        self.controller.goto()

    def action_heads(self) -> None:
        self.controller.heads()

    def action_lens(self) -> None:
        self.controller.lens()

    def action_attribution(self) -> None:
        self.controller.attribution()

    def action_patching(self) -> None:
        self.controller.patching()

    def action_generated(self) -> None:
        self.controller.generated()

    def action_experts(self) -> None:
        self.controller.experts()

    def picture_name(self) -> str:
        """The step's name (``blocks_0_attn_scores.svg``), as the step view's pictures were always named."""
        return self.controller.host.view.step.name
