"""Issue 42 item 12: a matmul's gradient under a 4-D cell wrote 2-D indices ('A[3, 1] enters every Z[3, j]' under
∂L/∂A[0, 1, 3, 1]); every cell it names now carries the cell's batch and head indices."""

from __future__ import annotations

from explain.tutorial import load_tutorial, run_tutorial


def test_a_4d_gradient_names_4d_cells():
    trace = run_tutorial(load_tutorial("15-the-residual-gradient-highway"))
    checked = 0
    for step in trace:
        if step.op != "matmul.grad" or len(step.shape) != 4:
            continue
        cell = tuple(n - 1 for n in step.shape)
        ex = trace.explain(step, cell)
        b, h = cell[:2]
        why = ex.lines[0]
        assert why.count(f"[{b}, {h}, ") >= 3, (step.name, why)  # the cell, the outputs it enters, the factor
        assert all(c.count(",") == 3 for c in ex.columns[1:3]), (step.name, ex.columns)
        checked += 1
    assert checked >= 2
