"""``explain tokenize [MODEL] --text TEXT``: how a text becomes ids, stage by stage (:mod:`explain.tokenize`)."""

from __future__ import annotations

import json
import sys

import click

from explain.core.errors import UsageError
from explain.core.served import interactive
from explain.io.paths import check_output


def source_of(model: str | None, checkpoint: str | None) -> tuple[object | None, str]:
    """The tokenizer a run of ``model`` reads text with (an opened checkpoint, or None for explain's word
    tokenizer) and how messages name it: gpt's default is the trained model that ships with explain."""
    from explain.checkpoints.trained import use_trained  # lazy: the engine loads when the command runs
    from explain.core.registry import DEFAULT_MODEL, check_model_name  # lazy: as above
    from explain.engine.ask import open_for  # lazy: as above

    opened = None
    if not model and checkpoint:  # MODEL left out: the folder says which, and is opened once for both
        from explain.checkpoints.open import open_checkpoint  # lazy: the readers load only for a checkpoint

        opened = open_checkpoint(checkpoint)
    entry = check_model_name(model or (opened.model if opened is not None else DEFAULT_MODEL))
    options: dict = {"checkpoint": opened if opened is not None else checkpoint}
    use_trained(options, None, entry)
    if options.get("checkpoint") is None:
        return None, f"explain's word tokenizer ('{entry.name}' has no trained tokenizer)"
    ck = open_for(entry, options["checkpoint"])
    return ck, f"{ck.name} '{ck.path}'"


@click.command()
@click.argument("model", metavar="[MODEL]", required=False)
@click.option("--checkpoint", metavar="PATH", help="A Hugging Face folder (its tokenizer.json) or a GGUF file (its "
              "vocabulary and merges); MODEL may then be left out.")
@click.option("--text", required=True, metavar="TEXT", help="The text to tokenize.")
@click.option("--plain", is_flag=True, help="Print every stage to stdout instead of opening the TUI.")
@click.option("--json", "as_json", is_flag=True, help="Write one JSON document: pieces, merges, tokens, ids.")
@click.option("-o", "--output", metavar="FILE.py", help="Write the walkthrough as a standalone Python script "
              "(plain Python over the vocabulary and merges) that prints the same ids.")
@click.option("--force", is_flag=True, help="Overwrite the -o file if it exists.")
def tokenize(model: str | None, checkpoint: str | None, text: str, plain: bool, as_json: bool, output: str | None,
             force: bool) -> None:
    """Show how TEXT becomes token ids: normalisation, pre-tokenization (the pieces and their bytes), each BPE
    merge in order with its rank and the ranks it beat (WordPiece: the longest match first), then the ids.

    MODEL's tokenizer is used: gpt's is the trained model's word tokenizer, --checkpoint a folder's tokenizer.json
    or a GGUF's byte-level BPE; the other models read text with explain's word tokenizer.

    \b
    Examples:
      explain tokenize gpt --text "The cat is happy" --plain
      explain tokenize --checkpoint SmolLM2-135M-Instruct.Q4_1.gguf --text "The capital of France is" --plain
      explain tokenize --checkpoint gpt2-folder --text "héllo 😀" --json
      explain tokenize --checkpoint gpt2-folder --text "The capital" -o capital.py
    """
    if plain and as_json:
        raise UsageError("choose one of --plain and --json")
    if output is not None:
        check_output(output, force, example="tokenize.py")
    from explain.tokenize.family import tokenizer_for  # lazy: the engine loads when the command runs

    source, name = source_of(model, checkpoint)
    tok = tokenizer_for(source, [text])
    w = tok.walk(text)
    if output is not None:
        from explain.io.atomic import write_bytes  # lazy: only with -o
        from explain.tokenize.export import script  # lazy: only with -o

        write_bytes(output, script(w, tok.vocab, tok.ranks, name).encode("utf-8"), force=force)
        click.echo(f"wrote {output}: run it with python to print the ids", err=True)
        if not (plain or as_json):
            return
    if as_json:
        sys.stdout.write(json.dumps({"source": name, **w.to_json()}, ensure_ascii=False) + "\n")
    elif plain or not interactive():
        from rich.console import Console  # lazy: rich out of the core

        from explain.render.tokenize import print_walkthrough  # lazy: rich out of the core

        # the user's text is printed as it is: '[bold]' is not markup, ':cat:' is not an emoji
        print_walkthrough(Console(markup=False, emoji=False), w, name)
    else:
        from explain.tokenize.record import record_walkthrough  # lazy: the trace only for the TUI
        from explain.tui import open_trace  # lazy: textual only with the TUI

        labels = source.vocab_labels() if source is not None else list(tok.vocab)
        open_trace(record_walkthrough(w, name, labels))
