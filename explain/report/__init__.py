"""What a run reports in words and tables, read off a trace: the ``explain shapes`` report, next-token
predictions, one token's draw stage by stage, and ``--match``/``--step`` picks.

It may import ``core``, ``ops`` and ``trace``.
"""
