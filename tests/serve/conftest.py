"""The server fixture of the serve tests (the helpers are in serving.py)."""

from __future__ import annotations

import pytest
from serving import start_server, stop_server


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """A server with room for two visitors, ending an idle one after 4 seconds."""
    s = start_server(tmp_path_factory.mktemp("serve"), "--max-sessions", "2", "--idle-timeout", "4")
    yield s
    stop_server(s)
