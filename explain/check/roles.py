"""What an axis holds, read from its name: the table of common names the semantic checks rely on.

An axis named ``T`` or ``seq`` is a sequence axis, ``H`` or ``n_head`` holds the heads, and so on: the names
people write in nanoGPT (``B, T, C``, ``n_head``, ``hs``), the "from scratch" book (``b``, ``num_tokens``,
``num_heads``, ``head_dim``), Hugging Face (``hidden_size``, ``num_attention_heads``), einops patterns (``b h t
d``) and jaxtyping annotations (``batch``, ``seq``, ``posn``, ``d_model``, ``d_head``, ``d_vocab``). A name not in
the table has no role, and an axis with no role is never warned about: the checks only speak when the names
say what the axes are.

=========  ============================================================================================
role       names (case matters only where it says so)
=========  ============================================================================================
batch      B, b, batch, bs, bsz, batch_size, n_batch
heads      H, h, n_head, n_heads, num_heads, heads, nh, nhead, head_index, num_attention_heads, KV,
           n_kv_heads, num_kv_heads, num_key_value_heads, kv_heads, g, groups
seq        T, t, seq, seq_len, sequence, L, num_tokens, n_tokens, tokens, pos, posn, position, n_ctx,
           context_length, block_size, i, n, N, query_pos, q_len, seq_q, query  (queries, or any position)
key        S, s, j, key_pos, kv_len, seq_k, k_len, key, src_len  (key positions: what attention sums over)
feature    C, D, d, d_model, n_embd, hidden, hidden_size, emb, embed, embed_dim, emb_dim, dim, d_in, d_out,
           channels, width, d_ff, d_mlp, ff, intermediate, intermediate_size, mlp, all_head_size, inner_dim
           (the model's width, or the MLP's; a merged (H Dh) is one too)
head_dim   Dh, dh, d_head, head_dim, hs, head_size, hd, d_k, dk, d_v, dv, d_q, attention_head_size, dim_head, and
           d inside an einops group with h, ``(h d)``; ``C // n_head`` written in code
vocab      V, v, vocab, d_vocab, vocab_size, n_vocab, classes
experts    E, e, experts, n_experts, num_experts, n_routed_experts, num_local_experts
=========  ============================================================================================
"""

from __future__ import annotations

from explain.check.names import Ax

_TABLE = {
    "batch": "B b batch bs bsz batch_size n_batch",
    "heads": "H h n_head n_heads num_heads heads nh nhead head_index num_attention_heads KV n_kv_heads num_kv_heads "
             "num_key_value_heads kv_heads g groups",
    "seq": "T t seq seq_len sequence L num_tokens n_tokens tokens pos posn position n_ctx context_length block_size "
           "i n N query_pos q_len seq_q query",
    "key": "S s j key_pos kv_len seq_k k_len key src_len",
    "feature": "C D d d_model n_embd hidden hidden_size emb embed embed_dim emb_dim dim d_in d_out channels width d_ff "
               "d_mlp ff intermediate intermediate_size mlp all_head_size inner_dim",
    "head_dim": "Dh dh d_head head_dim hs head_size hd d_k dk d_v dv d_q attention_head_size dim_head",
    "vocab": "V v vocab d_vocab vocab_size n_vocab classes",
    "experts": "E e experts n_experts num_experts n_routed_experts num_local_experts",
}
ROLES: dict[str, str] = {name: role for role, names in _TABLE.items() for name in names.split()}

# What each role is called in a message.
WORDS = {"batch": "the batch", "heads": "the heads", "seq": "the sequence", "key": "the keys",
         "feature": "the features", "head_dim": "the head width", "vocab": "the vocabulary", "experts": "the experts"}

POSITIONS = ("seq", "key")  # roles of an axis over positions (queries or keys)
SOFTMAX_OVER = ("seq", "key", "vocab", "experts")  # what a softmax normalises over: keys, words, experts


def role_of_name(name: str) -> str | None:
    """The role of one atom's name: the table, then ``self.``-free and ``config.``-free spellings, then a
    ``C/n_head`` made in code (a width divided by the heads is the head width)."""
    if name in ROLES:
        return ROLES[name]
    if "/" in name:
        top, _, under = name.partition("/")
        if ROLES.get(top) == "feature" and ROLES.get(under) == "heads":
            return "head_dim"
        return None
    low = name.lower()
    return ROLES.get(low) if low in ("batch", "seq", "vocab", "heads", "experts") else None


def role(ax: Ax) -> str | None:
    """The role of an axis: its atom's, or ``feature`` for a merge of the heads and the head width."""
    if ax is None:
        return None
    if len(ax) == 1:
        return role_of_name(ax[0])
    roles = [role_of_name(a) for a in ax]
    if sorted(r for r in roles if r) == ["head_dim", "heads"] and len(ax) == 2:
        return "feature"
    return None


def letter_role(letter: str, group: list[str]) -> str | None:
    """The role of an einops axis letter; ``d`` beside ``h`` in a group is the head width, not the model's."""
    if letter in ("d", "D", "dh") and any(role_of_name(g) == "heads" for g in group if g != letter):
        return "head_dim"
    return role_of_name(letter)


def word(r: str | None) -> str:
    return WORDS.get(r or "", "an axis")
