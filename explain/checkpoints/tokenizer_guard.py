"""A checkpoint's tokenizer, run so that a hostile ``tokenizer.json`` cannot crash, hang or flood the terminal.

``tokenizers`` runs the regular expressions a ``tokenizer.json`` carries (a ``Split`` pre-tokenizer's or a
``Replace`` normalizer's ``{"Regex": …}``) with the Oniguruma engine. A pathological one backtracks for seconds
on a few kB of text, or makes the library panic (a Rust panic message on stderr, then ``PanicException``, a
``BaseException``). So:

* a tokenizer whose every regex is one of the known ones (GPT-2's, Llama-3's, Qwen2's; the ``ByteLevel``,
  ``Whitespace``, ``Digits`` and ``Metaspace`` pre-tokenizers, SmolLM2's among them, carry none) runs in this
  process, and a panic still becomes a one-line error naming the file;
* any other runs in a subprocess on the real text, with a CPU-time limit (:data:`CPU_SECONDS`) and a memory
  limit; running out of either, or a panic, is a one-line :class:`~explain.core.errors.InputError` naming the file.

Nothing of the file is executed: only ``tokenizers`` reads it. The child is isolated (:func:`child_command`):
``python -I`` puts neither the working folder nor ``PYTHONPATH`` on its import path and skips the user's site
folder, it runs in an empty temporary folder, and its environment is a short list, so a ``json.py``,
``resource.py``, ``tokenizers.py`` or ``sitecustomize.py`` in the user's folder or the checkpoint's is never
imported.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from explain.core.errors import InputError

GPT2 = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
LLAMA3 = (r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|"""
          r"""\s*[\r\n]+|\s+(?!\S)|\s+""")
QWEN2 = (r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|"""
         r"""\s*[\r\n]+|\s+(?!\S)|\s+""")
KNOWN = frozenset({GPT2, LLAMA3, QWEN2})
CPU_SECONDS = 1  # of the subprocess: loading the tokenizer and encoding the text
MEMORY_BYTES = 2 * 2**30

# The child sets its own limits first (a preexec_fn is unsafe in a process with threads, as the TUI's runs are)
_LIMITS = """
import resource
resource.setrlimit(resource.RLIMIT_CPU, ({cpu}, {cpu} + 1))
resource.setrlimit(resource.RLIMIT_AS, ({mem}, {mem}))
"""
_CHILD = """
import json, sys
from tokenizers import Tokenizer
path, text, special = json.load(sys.stdin)
tok = Tokenizer.from_file(path)
tok.no_padding()
tok.no_truncation()
print(json.dumps(tok.encode(text, add_special_tokens=special is True).ids))
"""


# What the child may inherit: enough to find its own site-packages and decode text, nothing that steers imports
_ENV_KEPT = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "SYSTEMROOT", "TMPDIR")


def child_command(code: str) -> list[str]:
    """The argv that runs ``code`` in an isolated Python: no working folder, ``PYTHONPATH`` or user site on
    its path (``-I``), and so no module of the folder explain was started in."""
    return [sys.executable, "-I", "-c", code]


def child_env(**extra: str) -> dict[str, str]:
    """A minimal environment for a child process: the kept variables of :data:`_ENV_KEPT` and ``extra``."""
    return {**{k: os.environ[k] for k in _ENV_KEPT if k in os.environ}, **extra}


def regexes(data: Any, parts: tuple[str, ...] = ("normalizer", "pre_tokenizer")) -> list[str]:
    """Every ``{"Regex": …}`` pattern the normalizer and the pre-tokenizer of a tokenizer.json carry (``parts``:
    of those only)."""
    found: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            pattern = node.get("pattern")
            if isinstance(pattern, dict) and "Regex" in pattern:
                found.append(str(pattern["Regex"]))
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    if isinstance(data, dict):
        for part in parts:
            walk(data.get(part))
    return found


def unknown_regexes(data: Any) -> list[str]:
    return [r for r in regexes(data) if r not in KNOWN]


def _failure(path: Path, exc: BaseException) -> InputError:
    msg = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    return InputError(f"the tokenizer '{path}' failed on this text ({type(exc).__name__}: {msg[:200]}); give "
                      "the token ids with --tokens instead")


class InProcess:
    """A tokenizer whose regexes are all known: ``tokenizers`` in this process, a panic caught. Its padding and
    truncation are turned off (a run pads a batch itself, and refuses a text longer than the context rather than
    cutting it); ``special`` adds the special tokens its post-processor names (BERT's [CLS] … [SEP])."""

    def __init__(self, path: Path, special: bool = False) -> None:
        from tokenizers import Tokenizer  # lazy: optional dependency (the checkpoint extra)

        self.path, self.special = path, special
        try:
            self._tok = Tokenizer.from_file(str(path))
            self._tok.no_padding()
            self._tok.no_truncation()
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as exc:  # a bad file: a bare Exception; a panic: PanicException (a BaseException)
            msg = (str(exc).splitlines() or [type(exc).__name__])[0]
            raise InputError(f"cannot load '{path}': {msg[:200]}") from None

    def encode(self, text: str) -> list[int]:
        try:
            return list(self._tok.encode(text, add_special_tokens=self.special).ids)
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as exc:
            raise _failure(self.path, exc) from None


class Sandboxed:
    """A tokenizer with a regex that is not a known one: each text is encoded in a subprocess with limits."""

    def __init__(self, path: Path, patterns: list[str], special: bool = False) -> None:
        self.path, self.patterns, self.special = path, patterns, special
        self.part = "pre-tokenizer"  # which part of the tokenizer.json holds patterns[0] (load() says)

    def encode(self, text: str) -> list[int]:
        env = child_env(RAYON_NUM_THREADS="1", TOKENIZERS_PARALLELISM="false")
        shown = self.patterns[0] if len(self.patterns[0]) <= 60 else self.patterns[0][:59] + "…"
        try:
            code = _LIMITS.format(cpu=CPU_SECONDS, mem=MEMORY_BYTES) + _CHILD
            # the path is made absolute: the child runs in an empty folder of its own
            with tempfile.TemporaryDirectory(prefix="explain-tok-") as empty:
                proc = subprocess.run(child_command(code), input=json.dumps([str(self.path.resolve()), text, self.special]),
                                      capture_output=True, text=True, env=env, cwd=empty, timeout=60)
        except subprocess.TimeoutExpired:  # a hang guard: the CPU limit ends a busy child long before
            raise InputError(f"the tokenizer '{self.path}' did not finish on this text; give --tokens") from None
        if proc.returncode < 0 or "MemoryError" in proc.stderr:
            raise InputError(f"the tokenizer '{self.path}' has a {self.part} regex explain does not know "
                             f"({shown!r}) and it ran out of its {CPU_SECONDS} s / {MEMORY_BYTES // 2**30} GiB "
                             f"limit on {len(text):,} characters; give the token ids with --tokens")
        if proc.returncode != 0:
            last = ([ln for ln in proc.stderr.splitlines() if ln.strip()] or ["no message"])[-1]
            raise InputError(f"the tokenizer '{self.path}' failed on this text ({last.strip()[:200]}); give the "
                             "token ids with --tokens instead")
        try:
            ids = json.loads(proc.stdout)
        except ValueError:
            raise InputError(f"the tokenizer '{self.path}' gave no token ids; give --tokens") from None
        if not isinstance(ids, list) or not all(isinstance(i, int) and not isinstance(i, bool) for i in ids):
            raise InputError(f"the tokenizer '{self.path}' gave no token ids; give --tokens")
        return ids


def load(path: Path, data: Any, special: bool = False) -> InProcess | Sandboxed:
    """The tokenizer of ``path`` (whose JSON ``data`` was already read and checked), in or out of process, its
    padding and truncation off; ``special``: the special tokens its post-processor adds are added."""
    unknown = unknown_regexes(data)
    if not unknown:
        return InProcess(path, special)
    box = Sandboxed(path, unknown, special)
    box.part = "normalizer" if unknown[0] in regexes(data, ("normalizer",)) else "pre-tokenizer"  # for its messages
    return box
