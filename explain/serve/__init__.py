"""``explain serve``: the app in a browser (a subclass of textual-serve's ``Server``), safe to share on a network,
and the links that open a tutorial's stop or a run's step and cell (:mod:`explain.serve.links`).

Importing this package imports neither textual-serve nor aiohttp; :mod:`explain.serve.server` does, and only
``explain serve`` imports it (the ``serve`` extra).

It may import ``core`` and ``tutorial``.
"""
