"""explain tokenize's walkthroughs equal ``tokenizers``' own encode, family by family, on the battery of
tests/helpers/tokenize_battery.py (246 texts: empty, spaces, digits, newlines, emoji, non-ASCII, control characters):
byte-level BPE (the GPT-2 fixture's tokenizer.json, added token included), the word-level tokenizer.json of the
shipped trained model (and explain's own encode of it), WordPiece (a BERT-style fixture), SentencePiece-style BPE
(the Gemma fixture's tokenizer.json: ▁ for a space, characters merged, bytes as <0xF0> … where a character is
missing). Each walkthrough's
exported script, run with plain Python, prints the same ids. SmolLM2's GGUF: tests/tokenize/test_tokenize_smollm2.py."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from tokenize_battery import texts
from tokenizers import Tokenizer

from explain.checkpoints.open import open_checkpoint
from explain.checkpoints.trained import SHIPPED
from explain.core.words import Tokenizer as WordTokenizer
from explain.tokenize.export import script
from explain.tokenize.family import Framed, tokenizer_for
from explain.tokenize.walk import Merge, Walker

DATA = Path(__file__).resolve().parents[1] / "data"
TEXTS = texts()
FOLDERS = {"bpe": DATA / "gpt2_tiny", "words": Path(SHIPPED), "wordpiece": DATA / "wordpiece_tiny",
           "sentencepiece": DATA / "gemma" / "hf_gemma"}


class _Folder:
    """A folder's tokenizer.json alone (the WordPiece fixture has no model), as a checkpoint hands it over: the
    members of :class:`explain.checkpoints.protocol.Checkpoint` that the walkthrough reads."""

    special_tokens = False  # the raw tokenizer's encode, no [CLS] … [SEP]

    def __init__(self, path: Path) -> None:
        import json

        self.path, self.data = path, json.loads((path / "tokenizer.json").read_text())

    def tokenizer_json(self):
        return self.data

    def word_vocab(self) -> None:  # not a word-level file explain train wrote
        return None

    def tokenizer_fields(self) -> None:  # not a GGUF
        return None

    def bos(self) -> None:  # the raw tokenizer's encode: nothing put first
        return None

    def label(self, i: int) -> str:
        return str(i)


def _source(family: str):
    return _Folder(FOLDERS[family]) if family in ("wordpiece", "sentencepiece") else open_checkpoint(str(FOLDERS[family]))


def test_the_battery_has_every_kind_of_text() -> None:
    assert len(TEXTS) >= 200 and "" in TEXTS
    for needle in (" ", "\n", "1", "🙂", "é", "日", "\x00", "\u00a0"):
        assert sum(needle in t for t in TEXTS) >= 2, needle


@pytest.mark.parametrize("family", sorted(FOLDERS))
def test_walkthrough_equals_tokenizers(family: str) -> None:
    tok = tokenizer_for(_source(family))
    ref = Tokenizer.from_file(str(FOLDERS[family] / "tokenizer.json"))
    bad = [t for t in TEXTS if tok.walk(t).ids != ref.encode(t, add_special_tokens=False).ids]
    assert bad == []


def test_explains_own_encode_of_the_trained_model_is_the_walkthrough() -> None:
    ck = open_checkpoint(str(SHIPPED))
    tok = tokenizer_for(ck)
    assert [ck.encode(t) for t in TEXTS] == [tok.walk(t).ids for t in TEXTS]


def test_the_run_tokenizer_and_its_walkthrough_agree() -> None:
    """explain's own word tokenizer (the models without a checkpoint): the vocabulary grows with the text."""
    for t in TEXTS[:60]:
        run_tok = WordTokenizer([t])
        assert tokenizer_for(None, [t]).walk(t).ids == run_tok.encode(t)


def test_added_tokens_are_matched_whole() -> None:
    w = tokenizer_for(_source("bpe")).walk("a<|endoftext|>b")
    assert [p.special for p in w.pieces] == [None, 0, None] and w.ids[1] == 0


def test_a_merge_says_why_it_came_first() -> None:
    w = tokenizer_for(_source("bpe")).walk(" capital")
    merges = [s for s in w.steps if isinstance(s, Merge)]
    assert merges and all(m.rank == min(r for _, _, _, r in m.rivals + ((0, "", "", m.rank),) if r is not None)
                          for m in merges)
    first = merges[0]
    assert first.pair == ("Ġ", "c") and "beats" in first.why()
    assert "".join(merges[-1].after) == "Ġcapital"


@pytest.mark.parametrize("family", sorted(FOLDERS))
def test_the_exported_script_prints_the_ids(family: str, tmp_path: Path) -> None:
    tok = tokenizer_for(_source(family))
    sample = ["The capital of France is", "héllo wörld 😀 1234", "unplayable re-tokenizing!", "", "  \n\t x"]
    for n, text in enumerate(sample):
        w = tok.walk(text)
        path = tmp_path / f"t{n}.py"
        path.write_text(script(w, tok.vocab, tok.ranks, family))
        out = subprocess.run([sys.executable, "-I", str(path)], capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stderr
        assert [int(x) for x in out.stdout.split()] == w.ids, (family, text)


def test_sentencepiece_falls_back_to_bytes() -> None:
    w = tokenizer_for(_source("sentencepiece")).walk("The cat 😀")
    assert w.normalized == "The▁cat▁😀" and w.family == "sentencepiece"
    assert w.pieces[-1].symbols[-4:] == ("<0xF0>", "<0x9F>", "<0x98>", "<0x80>")


def test_a_gemma_folder_walks_with_its_bos_first() -> None:
    """The Gemma fixture folder as a checkpoint: its encode puts <bos> first (tokenizer_config's add_bos_token);
    the walkthrough ends with the same ids on every text, so --tokenizer-steps agrees with the run."""
    ck = open_checkpoint(str(FOLDERS["sentencepiece"]))
    tok = tokenizer_for(ck)
    assert [tok.walk(t).ids for t in TEXTS] == [ck.encode(t) for t in TEXTS]
    w = tok.walk("The cat")
    assert w.pieces[0].special == w.ids[0] == ck.bos() and w.pieces[0].start == w.pieces[0].end == 0


def test_every_walker_gives_the_walker_protocol(tmp_path: Path) -> None:
    """Each family's walker, Gemma's framed with its <bos> and a Gemma GGUF's built per text, gives
    :class:`explain.tokenize.walk.Walker` (the union it replaced left the last two out)."""
    import gemma_files

    sources = [None, WordTokenizer(["a b"])] + [_source(f) for f in sorted(FOLDERS)] + [
        open_checkpoint(str(DATA / "gemma" / "hf_gemma")), open_checkpoint(str(gemma_files.write_gguf(
            tmp_path / "g.gguf", "Q8_0")))]
    walkers = [tokenizer_for(s, ["a b"]) for s in sources]
    walkers += [w.inner for w in walkers if isinstance(w, Framed)]  # Gemma's: <bos> before each text
    assert {type(w).__name__ for w in walkers} >= {"Words", "BPE", "WordPiece", "SentencePieceBPE", "Framed",
                                                   "PerText"}
    for w in walkers:
        assert isinstance(w, Walker), type(w).__name__
        assert w.walk("a b").ids and isinstance(w.vocab, dict)
