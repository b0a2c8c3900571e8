"""The notation rows of ``bert`` (:mod:`explain.models.bert`): its symbols and narration, kept beside the table of
:mod:`explain.models.notation` (which reads them as ``OWN["bert"]``) so that module stays near 300 lines."""

from __future__ import annotations

from explain.core.names import On

BERT_ROWS: list[tuple[str | On, str, str, str | None]] = [
    ("tokens", "*", "ids", "The token ids of each text, one row per text (right-padded with <pad> when the lengths "
                           "differ). A BERT tokenizer puts [CLS] first and [SEP] last."),
    ("embed", "*", "E_tok", "Each token id picks its row of W_E: the token's learned vector."),
    ("type_embed", "*", "E_type", "The token type (segment) embedding. BERT can read a pair of texts as segments A "
                                  "and B; a single text is all segment A, so row 0 of W_type goes to every token."),
    ("embed_typed", "*", "E", "Token embedding + token type embedding (transformers adds them in this order)."),
    ("pos_embed", "*", "E_pos", "Learned position embedding: row p of W_pos is added at position p (the 2017 "
                                "encoder's positions are fixed sinusoids; BERT learns its own)."),
    ("embed_sum", "*", "E", "The three embeddings added: token + token type + position."),
    ("embed_ln", "*", "x", "LayerNorm of the summed embeddings: the residual stream the first block reads."),
    (On("ln1", block=True, stack=""), "*", "x", "Post-LN: LayerNorm after adding the attention output (as the 2017 "
                                                "transformer; GPT-2 normalises before instead)."),
    (On("ln2", block=True, stack=""), "*", "x", "Post-LN: LayerNorm after adding the MLP output: this block's output."),
    ("sentence.pooled", "*", "e", None),
    ("sentence.norm", "*", "ê", None),
    ("sentence.cos", "*", "cos", "The cosine of every two texts: the dot product of their unit vectors (1 on the "
                                 "diagonal). Cell [a, b] says how alike the model finds texts a and b; the steps "
                                 "pairs.a_b show why, word pair by word pair."),
    (On("pairs.parts", block=False, stack=""), "*", "c", None),
    (On("pairs.ranked", block=False, stack=""), "*", "c↓", None),
    (On("pairs.total", block=False, stack=""), "*", "Σc", None),
    ("loss", "*", "L", None),
]
