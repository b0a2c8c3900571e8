"""The click commands, thin over the rest: one module per command or family of commands, loaded lazily
by :mod:`explain.cli`.

It may import ``core``, ``check``, ``ops``, ``trace``, ``io``, ``checkpoints``, ``models``, ``tokenize``, ``report``, ``engine``,
``interp``, ``train``, ``export``, ``tutorial``, ``render``, ``tui`` and ``serve``.
"""

