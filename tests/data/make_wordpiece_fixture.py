"""Writes tests/data/wordpiece_tiny/tokenizer.json: a small uncased WordPiece tokenizer (BERT's normaliser and
pre-tokenizer, ``##`` continuations, [UNK]) trained by ``tokenizers`` on a few sentences, so that the
WordPiece walkthrough (explain.tokenize.wordpiece) is held to ``tokenizers``' own encode without a download.

Run once with the fixture venv:  /work/torchenv/bin/python tests/data/make_wordpiece_fixture.py
"""

from pathlib import Path

from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, trainers

CORPUS = [
    "The cat sat on the mat. The dog is happy, and the cat is hungry!",
    "Thinking machines: your journey starts with one step.",
    "A man is eating food. A man is eating a piece of bread.",
    "The girl is carrying a baby. Unbelievable tokenization, re-tokenizing everything.",
    "Café, naïve, résumé; über straße 東京 日本 1234 56.78 don't I'm it's",
    "playing played plays player unplayable replay replaying",
]

tok = Tokenizer(models.WordPiece(unk_token="[UNK]", max_input_chars_per_word=100))
tok.normalizer = normalizers.BertNormalizer(lowercase=True)
tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
trainer = trainers.WordPieceTrainer(vocab_size=160, special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"])
tok.train_from_iterator(CORPUS, trainer)
out = Path(__file__).parent / "wordpiece_tiny" / "tokenizer.json"
out.parent.mkdir(exist_ok=True)
tok.save(str(out))
print(f"wrote {out} ({tok.get_vocab_size()} tokens)")
