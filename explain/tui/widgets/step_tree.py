"""The step tree: every step under its group path (model → block → attention → op, from ``Step.group``), each
with its output shape; collapsible; the current step highlighted. Posts :class:`StepSelected` when the user
moves onto a step (↑/↓, a click)."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Tree
from textual.widgets.tree import TreeNode

from explain.core.shape_rules import fmt_shape
from explain.core.window import kind_text
from explain.trace import Trace
from explain.tui.messages import StepSelected

OPEN_BLOCKS = 3  # runs with more blocks than this start with only the current block open


class StepTree(Tree[int]):
    """Groups are branches (data -1); steps are leaves (data = step index)."""

    def __init__(self, trace: Trace, *, id: str | None = None) -> None:
        super().__init__(trace.config.model, data=-1, id=id)
        self.show_root = False
        self.guide_depth = 2
        self._leaves: list[TreeNode[int]] = []
        self._syncing = False
        self.set_trace(trace)

    def set_trace(self, trace: Trace) -> None:
        """Rebuild the tree for a (new) trace."""
        self.clear()
        self.root.set_label(f"{trace.config.model} run")
        blocks = {s.group[0] for s in trace if s.group and s.group[0].startswith("blocks.")}
        expand = len(blocks) <= OPEN_BLOCKS
        self._leaves = []
        path: list[tuple[str, TreeNode[int]]] = []
        for step in trace:
            depth = 0
            while depth < len(path) and depth < len(step.group) and path[depth][0] == step.group[depth]:
                depth += 1
            path = path[:depth]
            parent = path[-1][1] if path else self.root
            for part in step.group[depth:]:
                kind = kind_text(trace.config, part)  # a local or global layer: its window and θ
                label = Text.assemble((part, "bold"), *([(" " + kind, "dim")] if kind else []))
                parent = parent.add(label, data=-1, expand=expand)
                path.append((part, parent))
            label = Text.assemble(step.label, " ", (fmt_shape(step.shape), "dim"))
            self._leaves.append(parent.add_leaf(label, data=step.index))
        self.root.expand()

    def show_step(self, index: int) -> None:
        """Highlight step ``index``, opening its groups, without posting StepSelected back."""
        if not 0 <= index < len(self._leaves):
            return
        node = self._leaves[index]
        parent = node.parent
        while parent is not None:
            if not parent.is_expanded:
                parent.expand()
            parent = parent.parent
        if self.cursor_node is not node:
            self._syncing = True
            self.move_cursor(node)
            self.call_after_refresh(self._end_sync)

    def home(self) -> None:
        """The tree at its root when the cursor is on its first page (moving the cursor to the first step
        scrolled it one line down)."""
        if self.cursor_line < self.scrollable_content_region.height:
            self.scroll_home(animate=False, immediate=True)

    def _end_sync(self) -> None:
        self._syncing = False

    def on_tree_node_highlighted(self, event: Tree.NodeHighlighted[int]) -> None:
        event.stop()
        if not self._syncing and event.node.data is not None and event.node.data >= 0:
            self.post_message(StepSelected(event.node.data))

    def on_tree_node_selected(self, event: Tree.NodeSelected[int]) -> None:
        event.stop()
        if event.node.data is not None and event.node.data >= 0:
            self.post_message(StepSelected(event.node.data))
