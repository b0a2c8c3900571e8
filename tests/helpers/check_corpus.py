"""A corpus of real transformer shape bugs and the correct lines they should have been, for ``explain check``.

Each correct line is written as such code is written in the wild; each bug names the correct line it should
become and, in a comment, where such code (or this very mistake) is found. tests/check/test_check_corpus.py
checks that every correct line passes, every bug is caught with a fix, and the fix substituted into the bug
passes with the same shape and axis names as its correct line.

Shapes use the names below; sizes are picked so no two names share a size by accident (except where a bug
needs it), so a bug cannot hide behind a coincidence.
"""

from __future__ import annotations

DIMS = {"B": 2, "T": 10, "H": 12, "KV": 4, "Dh": 64, "C": 768, "V": 50, "N": 20, "n_ctx": 16, "Dh2": 32}

SHAPES = {
    "x": "B,T,C", "h": "B,T,C", "W_q": "C,C", "W_o": "C,C", "W_E": "V,C", "W_pos": "n_ctx,C", "tokens": "B,T",
    "q": "B,H,T,Dh", "k": "B,H,T,Dh", "v": "B,H,T,Dh", "z": "B,H,T,Dh", "y4": "B,H,T,Dh", "att": "B,H,T,T",
    "scores": "B,H,T,T", "kv_k": "B,KV,T,Dh", "kv_v": "B,KV,T,Dh", "pad": "B,T", "buf": "1,1,n_ctx,n_ctx",
    "xr": "B,T,H,Dh", "xh": "B,H,T,Dh", "cos": "T,Dh", "sin": "T,Dh", "cos_full": "n_ctx,Dh",
    "sin_full": "n_ctx,Dh", "cos_half": "T,Dh2", "pos_ids": "B,T", "gamma": "C", "logits": "B,T,V",
    "y": "B,T", "logp": "N,V", "yf": "N", "logp3": "B,T,V", "onehot": "B,T,V", "one_hot": "B,T,V",
}

# id: (category, spelling, line)
CORRECT = {
    # attention
    "att_np": ("attention", "numpy", "q @ k.swapaxes(-1, -2)"),
    "att_np_softmax": ("attention", "numpy", "softmax(q @ k.swapaxes(-1, -2) / np.sqrt(Dh), axis=-1) @ v"),
    "att_np_stable": ("attention", "numpy", "np.exp(scores - scores.max(axis=-1, keepdims=True))"),
    "att_pt_matmul": ("attention", "torch", "torch.matmul(q, k.transpose(-2, -1))"),
    "att_pt_softmax": ("attention", "torch", "F.softmax(q @ k.transpose(-2, -1), dim=-1)"),
    "att_pt_out": ("attention", "torch", "F.softmax(att, dim=-1) @ v"),
    "att_ein_scores": ("attention", "einops", 'einops.einsum(q, k, "b h t d, b h s d -> b h t s")'),
    "att_ein_out": ("attention", "einops", 'einops.einsum(att, v, "b h t s, b h s d -> b h t d")'),
    # multi-head split and merge
    "split_np": ("heads", "numpy", "(x @ W_q).reshape(B, T, H, Dh).transpose(0, 2, 1, 3)"),
    "merge_np": ("heads", "numpy", "z.transpose(0, 2, 1, 3).reshape(B, T, C)"),
    "merge_np_out": ("heads", "numpy", "z.transpose(0, 2, 1, 3).reshape(B, T, H * Dh) @ W_o"),
    "split_pt": ("heads", "torch", "x.view(B, T, H, Dh).transpose(1, 2)"),
    "merge_pt": ("heads", "torch", "y4.transpose(1, 2).contiguous().view(B, T, C)"),
    "split_pt_minus1": ("heads", "torch", "x.view(B, -1, H, Dh).transpose(1, 2)"),
    "split_ein": ("heads", "einops", 'rearrange(x, "b t (h d) -> b h t d", h=H)'),
    "merge_ein": ("heads", "einops", 'rearrange(z, "b h t d -> b t (h d)") @ W_o'),
    # masks
    "mask_np_add": ("masks", "numpy", "scores + pad[:, None, None, :]"),
    "mask_np_where": ("masks", "numpy", "np.where(pad[:, None, None, :] == 0, -np.inf, scores)"),
    "mask_np_causal": ("masks", "numpy", "scores * buf[:, :, :T, :T]"),
    "mask_pt_pad": ("masks", "torch", 'att.masked_fill(pad[:, None, None, :] == 0, float("-inf"))'),
    "mask_pt_causal": ("masks", "torch", 'att.masked_fill(buf[:, :, :T, :T] == 0, float("-inf"))'),
    "mask_pt_unsqueeze": ("masks", "torch", "att + pad.unsqueeze(1).unsqueeze(2)"),
    "mask_ein_fill": ("masks", "einops", 'scores.masked_fill(rearrange(pad, "b j -> b 1 1 j"), -1e9)'),
    "mask_ein_repeat": ("masks", "einops", 'scores + repeat(pad, "b j -> b h 1 j", h=H)'),
    # embeddings and the tied unembedding
    "emb_np_pos": ("embeddings", "numpy", "x + W_pos[:T]"),
    "emb_np_unembed": ("embeddings", "numpy", "h @ W_E.T"),
    "emb_np_both": ("embeddings", "numpy", "W_E[tokens] + W_pos[:T]"),
    "emb_pt_linear": ("embeddings", "torch", "F.linear(h, W_E)"),
    "emb_pt_matmul": ("embeddings", "torch", "torch.matmul(h, W_E.T)"),
    "emb_pt_embed": ("embeddings", "torch", "F.embedding(tokens, W_E) + W_pos[:T]"),
    "emb_ein_unembed": ("embeddings", "einops", 'einops.einsum(h, W_E, "b t d, v d -> b t v")'),
    "emb_ein_pos": ("embeddings", "einops", 'x + repeat(W_pos[:T], "n d -> b n d", b=B)'),
    "emb_ein_onehot": ("embeddings", "einops", 'einops.einsum(one_hot, W_E, "b t v, v d -> b t d")'),
    # layer norm (and RMSNorm)
    "ln_np": ("layernorm", "numpy",
              "(x - x.mean(axis=-1, keepdims=True)) / np.sqrt(x.var(axis=-1, keepdims=True) + 1e-5)"),
    "ln_np_scale": ("layernorm", "numpy", "x / np.sqrt(x.var(axis=-1, keepdims=True) + 1e-5) * gamma"),
    "ln_np_fn": ("layernorm", "numpy", "x - np.mean(x, axis=-1, keepdims=True)"),
    "ln_pt": ("layernorm", "torch", "(x - x.mean(-1, keepdim=True)) / x.std(-1, keepdim=True)"),
    "ln_pt_fn": ("layernorm", "torch", "F.layer_norm(x, (x.shape[-1],))"),
    "ln_pt_rms": ("layernorm", "torch", "x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)"),
    "ln_ein": ("layernorm", "einops", 'x - reduce(x, "b t d -> b t 1", "mean")'),
    "ln_ein_rms": ("layernorm", "einops", 'x / reduce(x ** 2, "b t d -> b t 1", "mean") ** 0.5'),
    # RoPE
    "rope_np": ("rope", "numpy", "xr * cos[:, None, :]"),
    "rope_np_full": ("rope", "numpy", "np.concatenate([-xh[..., Dh // 2:], xh[..., :Dh // 2]], axis=-1) * sin_full[:T]"),
    "rope_np_half": ("rope", "numpy", "np.concatenate([-xr[..., Dh // 2:], xr[..., :Dh // 2]], axis=-1) * sin[:, None, :]"),
    "rope_pt": ("rope", "torch", "torch.cat((-xr[..., Dh // 2:], xr[..., :Dh // 2]), dim=-1) * sin[:, None, :]"),
    "rope_pt_ids": ("rope", "torch", "xh * cos_full[pos_ids].unsqueeze(1)"),
    "rope_ein": ("rope", "einops", 'xh * rearrange(cos, "t d -> 1 1 t d")'),
    "rope_ein_repeat": ("rope", "einops", 'xr * repeat(cos_half, "t d -> t 1 (two d)", two=2)'),
    # grouped-query attention
    "gqa_np": ("gqa", "numpy", "q @ np.repeat(kv_k, H // KV, axis=1).swapaxes(-1, -2)"),
    "gqa_np_out": ("gqa", "numpy", "att @ np.repeat(kv_v, H // KV, axis=1)"),
    "gqa_np_full": ("gqa", "numpy", "softmax(q @ np.repeat(kv_k, H // KV, axis=1).swapaxes(-1, -2), axis=-1) @ "
                    "np.repeat(kv_v, H // KV, axis=1)"),
    "gqa_pt": ("gqa", "torch", "torch.matmul(q, kv_k.repeat_interleave(H // KV, dim=1).transpose(-2, -1))"),
    "gqa_pt_out": ("gqa", "torch", "F.softmax(att, dim=-1) @ kv_v.repeat_interleave(H // KV, dim=1)"),
    "gqa_pt_expand": ("gqa", "torch", "kv_k[:, :, None, :, :].expand(B, KV, H // KV, T, Dh).permute(0, 3, 1, 2, 4)"
                      ".reshape(B, T, H, Dh)"),
    "gqa_ein": ("gqa", "einops", 'q @ repeat(kv_k, "b kv t d -> b (kv g) d t", g=H // KV)'),
    # cross-entropy gathers
    "ce_np_take": ("crossentropy", "numpy", "np.take_along_axis(logp, yf[:, None], axis=-1)"),
    "ce_np_take3": ("crossentropy", "numpy", "-np.take_along_axis(logp3, y[..., None], axis=-1).mean()"),
    "ce_np_logsoftmax": ("crossentropy", "numpy", "logits - np.log(np.exp(logits).sum(axis=-1, keepdims=True))"),
    "ce_pt_gather": ("crossentropy", "torch", "logp.gather(-1, yf.unsqueeze(-1))"),
    "ce_pt_ce": ("crossentropy", "torch", "F.cross_entropy(logits.view(-1, V), y.view(-1))"),
    "ce_pt_gather3": ("crossentropy", "torch", "torch.gather(logp3, -1, y.unsqueeze(-1))"),
    "ce_ein_ce": ("crossentropy", "einops",
                  'F.cross_entropy(rearrange(logits, "b t v -> (b t) v"), rearrange(y, "b t -> (b t)"))'),
    "ce_ein_gather": ("crossentropy", "einops", '-reduce(logp3.gather(-1, y.unsqueeze(-1)), "b t 1 -> b t", "sum")'),
    "ce_ein_onehot": ("crossentropy", "einops", 'einops.einsum(logp3, onehot, "b t v, b t v -> b t")'),
}

# id: (correct id, spelling, line, what the fix must contain)  — with where such code is found.
BUGS = {
    # --- attention ---
    # Q @ K without the transpose: the issue that started this corpus; the right form in karpathy/nanoGPT
    # model.py (q @ k.transpose(-2, -1)) and ARENA 1.1 (Transformer from scratch, attention scores).
    "att_np_qk": ("att_np", "numpy", "q @ k", "k.swapaxes(-1, -2)"),
    # .T on 4-D reverses every axis; numpy tutorials write scores = Q @ K.T for 2-D and carry it to 4-D
    # (CS224N assignment attention in numpy; the .T deprecation on >2-D in PyTorch's Tensor.T docs).
    "att_np_T": ("att_np", "numpy", "q @ k.T", "k.swapaxes(-1, -2)"),
    "att_np_T_softmax": ("att_np_softmax", "numpy", "softmax(q @ k.T / np.sqrt(Dh), axis=-1) @ v",
                         "k.swapaxes(-1, -2)"),
    # softmax's max subtracted without keepdims: jekbradbury's LayerNorm in pytorch/pytorch#1959 and every
    # stable-softmax write-up keep the axis.
    "att_np_stable": ("att_np_stable", "numpy", "np.exp(scores - scores.max(axis=-1))", "keepdims=True"),
    # torch.matmul(q, k): the annotated transformer (harvardnlp) writes torch.matmul(query, key.transpose(-2, -1)).
    "att_pt_matmul": ("att_pt_matmul", "torch", "torch.matmul(q, k)", "k.swapaxes(-1, -2)"),
    # k.T on a 4-D tensor: deprecated in PyTorch (Tensor.T docs), .mT is the batched transpose.
    "att_pt_T": ("att_pt_softmax", "torch", "F.softmax(q @ k.T, dim=-1)", "k.mT"),
    # bmm on 4-D heads: bmm is 3-D only (torch.bmm docs); annotated-transformer uses torch.matmul.
    "att_pt_bmm": ("att_pt_matmul", "torch", "torch.bmm(q, k.transpose(-2, -1))", "torch.matmul"),
    # a stray transpose on V: attention output is att @ v (nanoGPT y = att @ v).
    "att_pt_vT": ("att_pt_out", "torch", "F.softmax(att, dim=-1) @ v.transpose(-2, -1)", "@ v"),
    # einops.einsum with K's axes in the wrong order (einops docs, einsum example "b h t d, b h s d").
    "att_ein_qk": ("att_ein_scores", "einops", 'einops.einsum(q, k, "b h t d, b h d s -> b h t s")',
                   "b h s d"),
    "att_ein_av": ("att_ein_out", "einops", 'einops.einsum(att, v, "b h t s, b h d s -> b h t d")', "b h s d"),
    # --- multi-head split and merge ---
    # the head split without a transpose: reczoo/FuxiCTR#30, hyunwoongko/transformer#15.
    "split_np": ("split_np", "numpy", "(x @ W_q).reshape(B, H, T, Dh)", ".transpose(0, 2, 1, 3)"),
    # the head merge without a transpose: jsbaan/transformer-from-scratch#6, ajhalthor/Transformer-Neural-Network#4.
    "merge_np": ("merge_np", "numpy", "z.reshape(B, T, C)", "z.transpose(0, 2, 1, 3)"),
    "merge_np_out": ("merge_np_out", "numpy", "z.reshape(B, T, H * Dh) @ W_o", "z.transpose(0, 2, 1, 3)"),
    # view without transpose: hyunwoongko/transformer#15 (asks why not x.view(batch, heads, seq, d)).
    "split_pt": ("split_pt", "torch", "x.view(B, H, T, Dh)", ".transpose(1, 2)"),
    # hackiey/QAnet-pytorch#2 (heads.view(batch, l, -1) without permute); nanoGPT's y.transpose(1, 2).contiguous().view.
    "merge_pt": ("merge_pt", "torch", "y4.view(B, T, C)", "y4.transpose(1, 2).contiguous().view(B, T, C)"),
    # 649453932/Chinese-Text-Classification-Pytorch#10 (view(batch * heads, -1, d_head) with no transpose).
    "split_pt_minus1": ("split_pt_minus1", "torch", "x.view(B, H, -1, Dh)", ".transpose(1, 2)"),
    # einops cannot infer two lengths: lucidrains/lightweight-gan#12 and LeapLabTHU/DAT#22 show its shape errors.
    "split_ein_len": ("split_ein", "einops", 'rearrange(x, "b t (h d) -> b h t d")', "h=H"),
    # a wrong head width passed as d=: kohya-ss/sd-scripts#2020 (can't divide axis ... in chunks of ...).
    "split_ein_d": ("split_ein", "einops", 'rearrange(x, "b t (h d) -> b h t d", h=H, d=C // Dh)', "h=H)"),
    # heads merged with the sequence last, then projected: the projection needs (b, t, h*d).
    "merge_ein": ("merge_ein", "einops", 'rearrange(z, "b h t d -> b (h d) t") @ W_o', ".swapaxes(-1, -2)"),
    # --- masks ---
    # a (batch, seq) padding mask added to (batch, heads, seq, seq) scores: idiap/fast-transformers#101;
    # the fix mask[:, None, None] is jwohlwend/boltz#226.
    "mask_np_add": ("mask_np_add", "numpy", "scores + pad", "pad[:, None, None, :]"),
    "mask_np_where": ("mask_np_where", "numpy", "np.where(pad == 0, -np.inf, scores)", "[:, None, None, :]"),
    # GPT-2's causal buffer sliced on one axis only (openai/gpt-2 model.py slices b[:, :, ns-nd:ns, :ns]).
    "mask_np_causal": ("mask_np_causal", "numpy", "scores * buf[:, :, :T]", ":T]"),
    "mask_pt_pad": ("mask_pt_pad", "torch", 'att.masked_fill(pad == 0, float("-inf"))', "[:, None, None, :]"),
    # nanoGPT: att.masked_fill(self.bias[:,:,:T,:T] == 0, float('-inf')); here the key axis is not sliced.
    "mask_pt_causal": ("mask_pt_causal", "torch", 'att.masked_fill(buf[:, :, :T] == 0, float("-inf"))', ":T]"),
    # pytorch/pytorch#97899: pad_mask.view(batch, 1, 1, seq) for SDPA; one unsqueeze is not enough.
    "mask_pt_unsqueeze": ("mask_pt_unsqueeze", "torch", "att + pad.unsqueeze(1)", "[:, 0, None, None, :]"),
    # lucidrains/x-transformers#172: rearrange(mask, 'b i -> b 1 i 1') and friends put the mask's axis wrong.
    "mask_ein_fill": ("mask_ein_fill", "einops", 'scores.masked_fill(rearrange(pad, "b j -> b 1 j"), -1e9)',
                      "[:, 0, None, None, :]"),
    "mask_ein_repeat": ("mask_ein_repeat", "einops", 'scores + repeat(pad, "b j -> b h j", h=H)', "[:, :, None, :]"),
    # --- embeddings and the tied unembedding ---
    # the whole position table added instead of its first T rows (ARENA 1.1 PosEmbed takes W_pos[:seq_len]).
    "emb_np_pos": ("emb_np_pos", "numpy", "x + W_pos", "W_pos[:T]"),
    # tied unembedding without the transpose: the issue's own h @ W_E; PaddlePaddle/PaddleNLP#5571 (transpose_y=True).
    "emb_np_unembed": ("emb_np_unembed", "numpy", "h @ W_E", "W_E.T"),
    "emb_np_both": ("emb_np_both", "numpy", "W_E[tokens] + W_pos", "W_pos[:T]"),
    # F.linear takes the (out, in) weight itself: IndicoDataSolutions/finetune#518 (transpose issues in an MLM head).
    "emb_pt_linear": ("emb_pt_linear", "torch", "F.linear(h, W_E.T)", "F.linear(h, W_E)"),
    "emb_pt_matmul": ("emb_pt_matmul", "torch", "torch.matmul(h, W_E)", "W_E.T"),
    "emb_pt_embed": ("emb_pt_embed", "torch", "F.embedding(tokens, W_E) + W_pos", "W_pos[:T]"),
    "emb_ein_unembed": ("emb_ein_unembed", "einops", 'einops.einsum(h, W_E, "b t d, d v -> b t v")', "v d"),
    "emb_ein_pos": ("emb_ein_pos", "einops", 'x + repeat(W_pos, "n d -> b n d", b=B)', "[:, :T]"),
    "emb_ein_onehot": ("emb_ein_onehot", "einops", 'einops.einsum(one_hot, W_E, "b t v, d v -> b t d")', "v d"),
    # --- layer norm ---
    # the mean without keepdims: pytorch/pytorch#1959 (x.mean(-1, keepdim=True)); localminimum/QANet#44.
    "ln_np": ("ln_np", "numpy",
              "(x - x.mean(axis=-1)) / np.sqrt(x.var(axis=-1, keepdims=True) + 1e-5)", "keepdims=True"),
    # flagos-ai/FlagGems#59: a reduction without keep_dims needs dx_2[:, None] to broadcast back.
    "ln_np_scale": ("ln_np_scale", "numpy", "x / np.sqrt(x.var(axis=-1) + 1e-5) * gamma", "[:, :, None]"),
    "ln_np_fn": ("ln_np_fn", "numpy", "x - np.mean(x, axis=-1)", "keepdims=True"),
    "ln_pt": ("ln_pt", "torch", "(x - x.mean(-1)) / x.std(-1, keepdim=True)", "keepdim=True"),
    # normalized_shape is the trailing shape (F.layer_norm docs); NVIDIA/cudnn-frontend#432 fixes [C, H, W] to [dim].
    "ln_pt_fn": ("ln_pt_fn", "torch", "F.layer_norm(x, (T,))", "(x.shape[-1],)"),
    # RMSNorm as Llama writes it: x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) (meta-llama model.py).
    "ln_pt_rms": ("ln_pt_rms", "torch", "x * torch.rsqrt(x.pow(2).mean(-1) + 1e-6)", "[:, :, None]"),
    "ln_ein": ("ln_ein", "einops", 'x - reduce(x, "b t d -> b t", "mean")', "[:, :, None]"),
    "ln_ein_rms": ("ln_ein_rms", "einops", 'x / reduce(x ** 2, "b t d -> b t", "mean") ** 0.5', "[:, :, None]"),
    # --- RoPE ---
    # cos built for (batch, heads, seq, dim) applied to (batch, seq, heads, dim): rasbt/LLMs-from-scratch#411.
    "rope_np": ("rope_np", "numpy", "xr * cos", "cos[:, None, :]"),
    # the cached table not cut to the sequence (rasbt/LLMs-from-scratch#411: cos[:seq_len, :]).
    "rope_np_full": ("rope_np_full", "numpy",
                     "np.concatenate([-xh[..., Dh // 2:], xh[..., :Dh // 2]], axis=-1) * sin_full", "sin_full[:T]"),
    # rotate_half as henrywoo/pyllama#83 quotes it, on the (b, t, h, d) layout without sin's head axis.
    "rope_np_half": ("rope_np_half", "numpy",
                     "np.concatenate([-xr[..., Dh // 2:], xr[..., :Dh // 2]], axis=-1) * sin", "sin[:, None, :]"),
    "rope_pt": ("rope_pt", "torch", "torch.cat((-xr[..., Dh // 2:], xr[..., :Dh // 2]), dim=-1) * sin",
                "sin[:, None, :]"),
    # Infini-AI-Lab/Sequoia#2 and HF's apply_rotary_pos_emb: cos[position_ids].unsqueeze(unsqueeze_dim).
    "rope_pt_ids": ("rope_pt_ids", "torch", "xh * cos_full[pos_ids]", "[:, None, :]"),
    "rope_ein": ("rope_ein", "einops", 'xh * rearrange(cos, "t d -> t 1 d")', "[:, 0]"),
    # interleaved cos repeated (karpathy/nanochat#299 on the half-width tables), missing the head axis.
    "rope_ein_repeat": ("rope_ein_repeat", "einops", 'xr * repeat(cos_half, "t d -> t (two d)", two=2)',
                        "[:, None, :]"),
    # --- grouped-query attention ---
    # K/V heads not repeated: keras-team/keras#23081 (repeat_interleave(groups, dim=1)); AI-Hypercomputer/maxtext#1377.
    "gqa_np": ("gqa_np", "numpy", "q @ kv_k.swapaxes(-1, -2)", "np.repeat("),
    "gqa_np_out": ("gqa_np_out", "numpy", "att @ kv_v", "np.repeat(kv_v, H // KV, axis=1)"),
    "gqa_np_full": ("gqa_np_full", "numpy",
                    "softmax(q @ np.repeat(kv_k, H // KV, axis=1).swapaxes(-1, -2), axis=-1) @ kv_v",
                    "np.repeat(kv_v, H // KV, axis=1)"),
    "gqa_pt": ("gqa_pt", "torch", "torch.matmul(q, kv_k.transpose(-2, -1))", "repeat_interleave(H // KV, dim=1)"),
    "gqa_pt_out": ("gqa_pt_out", "torch", "F.softmax(att, dim=-1) @ kv_v", "kv_v.repeat_interleave(H // KV, dim=1)"),
    # repeat_kv for the other layout: ByteDance-Seed/VeOmni#162 (kv is (bs, seq, nhead, ...), not (bs, nhead, seq, ...)).
    "gqa_pt_expand": ("gqa_pt_expand", "torch",
                      "kv_k[:, :, None, :, :].expand(B, KV, H // KV, T, Dh).reshape(B, T, H, Dh)", ".reshape(B, H, T, Dh).transpose(1, 2)"),
    "gqa_ein": ("gqa_ein", "einops", 'q @ rearrange(kv_k, "b h t d -> b h d t")', "g=H // KV"),
    # --- cross-entropy gathers ---
    # gather needs the index's class axis: shivamsaboo17/...Catastrophic-forgetting...#5 (index=target.unsqueeze(-1)).
    "ce_np_take": ("ce_np_take", "numpy", "np.take_along_axis(logp, yf, axis=-1)", "yf[..., None]"),
    "ce_np_take3": ("ce_np_take3", "numpy", "-np.take_along_axis(logp3, y, axis=-1).mean()", "y[..., None]"),
    # log-softmax by hand without keepdims (the logsumexp of CS224N's numpy softmax exercise keeps the axis).
    "ce_np_logsoftmax": ("ce_np_logsoftmax", "numpy", "logits - np.log(np.exp(logits).sum(axis=-1))",
                         "[:, :, None]"),
    "ce_pt_gather": ("ce_pt_gather", "torch", "logp.gather(-1, yf)", "yf.unsqueeze(-1)"),
    # (B, T, V) logits straight into F.cross_entropy: karpathy/ng-video-lecture#10 (logits.view(B*T, C));
    # pytorch/pytorch#27626.
    "ce_pt_ce": ("ce_pt_ce", "torch", "F.cross_entropy(logits, y)", "logits.view(-1, V), y.view(-1)"),
    # flattened logits but (B, T) targets: nusnlp/PtrNetDecoding4JERE#10.
    "ce_pt_ce_target": ("ce_pt_ce", "torch", "F.cross_entropy(logits.view(-1, V), y)", "y.view(-1)"),
    "ce_pt_gather3": ("ce_pt_gather3", "torch", "torch.gather(logp3, -1, y)", "y.unsqueeze(-1)"),
    "ce_ein_ce": ("ce_ein_ce", "einops", 'F.cross_entropy(rearrange(logits, "b t v -> (b t) v"), y)',
                  'rearrange(y, "a0 a1 -> (a0 a1)")'),
    "ce_ein_gather": ("ce_ein_gather", "einops", '-reduce(logp3.gather(-1, y), "b t 1 -> b t", "sum")',
                      "y.unsqueeze(-1)"),
    "ce_ein_onehot": ("ce_ein_onehot", "einops", 'einops.einsum(logp3, onehot, "b t v, b v t -> b t")', "b t v"),
}


# --- whole implementations, as people write them (issue 45) -------------------------------------------------
# Each file in tests/data/check/corpus/ is real code in one style, checked class method by class method; the
# correct files give no warning. Each planted bug is a one-place change of a file (old text -> new text, each
# found exactly once), with the report it must give: an error or a warning, words of its message, and its fix
# (the edits it carries, applied to the planted file, check clean again with the correct file's shape).

NANO = ["--shape", "x=B,T,n_embd", "--dim", "B=2", "--dim", "T=10", "--dim", "n_embd=768", "--dim", "n_head=12",
        "--dim", "block_size=1024"]
BOOK = ["--shape", "x=B,T,emb_dim", "--dim", "B=2", "--dim", "T=10", "--dim", "emb_dim=768", "--dim", "n_heads=12",
        "--dim", "context_length=1024"]
BOOK_MHA = ["--shape", "x=B,T,d_in", "--dim", "B=2", "--dim", "T=10", "--dim", "d_in=768", "--dim", "d_out=768",
            "--dim", "num_heads=12", "--dim", "context_length=1024"]
VIT = ["--shape", "x=B,N,dim", "--dim", "B=2", "--dim", "N=10", "--dim", "dim=768", "--dim", "heads=12",
       "--dim", "dim_head=64", "--dim", "mlp_dim=3072"]
BERT = ["--shape", "hidden_states=B,T,hidden_size", "--dim", "B=2", "--dim", "T=10", "--dim", "hidden_size=768",
        "--dim", "num_attention_heads=12", "--dim", "intermediate_size=3072"]

# id: (file, Class.method, options, result shape)
FILES = {
    "nanogpt_attention": ("nanogpt.py", "CausalSelfAttention.forward", NANO, (2, 10, 768)),
    "nanogpt_mlp": ("nanogpt.py", "MLP.forward", NANO, (2, 10, 768)),
    "nanogpt_block": ("nanogpt.py", "Block.forward", NANO, (2, 10, 768)),
    "nanogpt_model": ("nanogpt.py", "GPT.forward", ["--shape", "idx=B,T", "--shape", "targets=B,T"] + NANO[2:] + [
        "--dim", "vocab_size=50257"], (2, 10, 50257)),
    "book_attention": ("from_scratch.py", "MultiHeadAttention.forward", BOOK_MHA, (2, 10, 768)),
    "book_feedforward": ("from_scratch.py", "FeedForward.forward", BOOK, (2, 10, 768)),
    "book_block": ("from_scratch.py", "TransformerBlock.forward", BOOK, (2, 10, 768)),
    "vit_attention": ("einops_style.py", "Attention.forward", VIT, (2, 10, 768)),
    "vit_feedforward": ("einops_style.py", "FeedForward.forward", VIT + ["--dim", "hidden_dim=3072"], (2, 10, 768)),
    "vit_block": ("einops_style.py", "Block.forward", VIT, (2, 10, 768)),
    "bert_attention": ("hf_style.py", "BertSelfAttention.forward", BERT, (2, 10, 768)),
    "bert_layer": ("hf_style.py", "BertLayer.forward", BERT, (2, 10, 768)),
}

# id: (file id, [(old, new), …], "error" or "warning", words of the message) — with where the mistake is seen.
FILE_BUGS = {
    # the issue's own: one line forgets .transpose(1, 2) on k (nanoGPT's k, q, v lines are copies of each other)
    "nanogpt_k_transpose": ("nanogpt_attention", [(
        "k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) # (B, nh, T, hs)",
        "k = k.view(B, T, self.n_head, C // self.n_head) # (B, nh, T, hs)")], "error",
        ["its axes 1 and 2 (T, n_head) are swapped", "line 56 is missing .transpose(1, 2)"]),
    # softmax over the heads: dim=1 for dim=-1 (the first command, inside the model)
    "nanogpt_softmax_dim": ("nanogpt_attention", [("att = F.softmax(att, dim=-1)", "att = F.softmax(att, dim=1)")],
                            "warning", ["softmax over n_head (axis 1, the heads)", "dim=-1"]),
    # the causal mask applied to the weights, after the softmax
    "nanogpt_mask_after": ("nanogpt_attention", [
        ("att = att.masked_fill(self.bias[:,:,:T,:T] == 0, float('-inf'))\n            att = F.softmax(att, dim=-1)",
         "att = F.softmax(att, dim=-1)\n            att = att.masked_fill(self.bias[:,:,:T,:T] == 0, float('-inf'))")],
        "warning", ["the mask is applied after the softmax", "swap line 67 and this line"]),
    # scaled by √C, the model's width, instead of √hs
    "nanogpt_scale": ("nanogpt_attention", [("math.sqrt(k.size(-1))", "math.sqrt(C)")], "warning",
                      ["dot products over n_embd/n_head (64)", "√n_embd (the features)"]),
    # the heads merged without moving them back: jsbaan/transformer-from-scratch#6
    "nanogpt_merge": ("nanogpt_attention", [("y = y.transpose(1, 2).contiguous().view(B, T, C)",
                                             "y = y.view(B, T, C)")], "error", ["fits by size", ".transpose(1, 2)"]),
    # .contiguous() forgotten: PyTorch's 'view size is not compatible with input tensor's size and stride'
    "nanogpt_contiguous": ("nanogpt_attention", [("y = y.transpose(1, 2).contiguous().view(B, T, C)",
                                                  "y = y.transpose(1, 2).view(B, T, C)")], "error",
                           ["laid out in memory as [B, n_head, T, n_embd/n_head]", ".contiguous()"]),
    # the MLP's down projection declared with the wrong in_features
    "nanogpt_mlp_in": ("nanogpt_mlp", [("self.c_proj  = nn.Linear(4 * config.n_embd, config.n_embd, bias=config.bias)",
                                        "self.c_proj  = nn.Linear(config.n_embd, config.n_embd, bias=config.bias)")],
                       "error", ["maps a last axis of 768", "in_features must be 3072"]),
    # the block hands attention a transposed input
    "nanogpt_block_transpose": ("nanogpt_block", [("x = x + self.attn(self.ln_1(x))",
                                                   "x = x + self.attn(self.ln_1(x).transpose(1, 2))")], "error",
                                ["one transpose too many"]),
    # the LM head declared (vocab_size, n_embd): nn.Linear's sizes the other way round
    "nanogpt_lm_head": ("nanogpt_model", [("self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)",
                                           "self.lm_head = nn.Linear(config.vocab_size, config.n_embd, bias=False)")],
                        "error", ["the sizes are the other way round"]),
    # the book: one of the three transposes forgotten (the line deleted)
    "book_keys_transpose": ("book_attention", [("        keys = keys.transpose(1, 2)\n", "")], "error",
                            ["its axes 1 and 2 (T, num_heads) are swapped", "line 38 is missing .transpose(1, 2)"]),
    # scaled by the square root of the wrong axis of keys: shape[1] (the heads) for shape[-1]
    "book_scale": ("book_attention", [("keys.shape[-1]**0.5", "keys.shape[1]**0.5")], "warning",
                   ["√num_heads (the heads)"]),
    # the book's LayerNorm over the tokens instead of the embedding
    "book_layernorm": ("book_block", [("mean = x.mean(dim=-1, keepdim=True)", "mean = x.mean(dim=1, keepdim=True)"),
                                      ("var = x.var(dim=-1, keepdim=True, unbiased=False)",
                                       "var = x.var(dim=1, keepdim=True, unbiased=False)")], "warning",
                       ["takes the mean of x [B, T, emb_dim] over T (the sequence)", "x.mean(dim=-1, keepdim=True)"]),
    # the feed-forward's second Linear declared (emb_dim, emb_dim)
    "book_feedforward_in": ("book_feedforward", [('nn.Linear(4 * cfg["emb_dim"], cfg["emb_dim"])',
                                                  'nn.Linear(cfg["emb_dim"], cfg["emb_dim"])')], "error",
                            ["in_features must be 3072"]),
    # einops: the head width and the heads swapped in the split pattern
    "vit_split_group": ("vit_attention", [("'b n (h d) -> b h n d'", "'b n (d h) -> b h n d'")], "warning",
                        ["puts the head width before the heads", "(h d)"]),
    # einops: the heads merged in the wrong order
    "vit_merge_group": ("vit_attention", [("'b h n d -> b n (h d)'", "'b h n d -> b n (d h)'")], "warning",
                        ["the einops group (d h)"]),
    # nn.Softmax over the heads
    "vit_softmax_dim": ("vit_attention", [("self.attend = nn.Softmax(dim = -1)", "self.attend = nn.Softmax(dim = 1)")],
                        "warning", ["softmax over heads (axis 1, the heads)", "nn.Softmax(dim=-1)"]),
    # the feed-forward's last Linear from dim, not hidden_dim
    "vit_feedforward_in": ("vit_feedforward", [("nn.Linear(hidden_dim, dim),", "nn.Linear(dim, dim),")], "error",
                           ["in_features must be 3072"]),
    # BERT scaled by √all_head_size (the width) instead of √attention_head_size
    "bert_scale": ("bert_attention", [("math.sqrt(self.attention_head_size)", "math.sqrt(self.all_head_size)")],
                   "warning", ["√all_head_size (the features)"]),
    # BERT's softmax over the queries
    "bert_softmax_queries": ("bert_attention", [("softmax(attention_scores, dim=-1)",
                                                 "softmax(attention_scores, dim=-2)")], "warning", ["the queries"]),
    # BertOutput's dense declared (hidden, hidden)
    "bert_output_in": ("bert_layer", [("self.dense = nn.Linear(config.intermediate_size, config.hidden_size)",
                                       "self.dense = nn.Linear(config.hidden_size, config.hidden_size)")], "error",
                       ["in_features must be 3072"]),
}
