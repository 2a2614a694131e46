"""Paged KV cache and decode attention (qgemm/kv_cache.h, docs/kv_cache.md):
a pool of blocks of `block_size` token slots shared by all sequences
(vLLM's paged attention); slot s is token s % block_size of block
s / block_size.

    key_cache, value_cache   [num_blocks, block_size, kv_heads, head_dim]
                             int8 / fp8 e4m3 (codes) or fp16 / bf16 (values)
    key_scale, value_scale   fp32 [num_blocks, block_size, kv_heads]; int8 / fp8 only

kv_cache_write quantizes each new token's head vector with the dynamic
symmetric per-token formula of qgemm.quantize; paged_attention_decode
attends one query token per sequence over its cached tokens (grouped-query
attention when q_heads is a multiple of kv_heads). The C++ messages name the
cache arrays cache.key, cache.value, cache.key_scale, cache.value_scale.
PyTorch tensors go through torch.ops.qgemm.* (qgemm/_torch_kv_cache_ops.py).
"""

from __future__ import annotations

import math
from typing import Any, Optional

from . import _arrays, _qgemm, _torch_ops


def kv_cache_write(key_cache: Any, value_cache: Any, key: Any, value: Any, slot_mapping: Any, key_scale: Any = None,
                   value_scale: Any = None, *, stream: Any = None) -> None:
    """Writes key / value [T, kv_heads, head_dim] (fp16 / bf16, contiguous
    head vectors; token and head strides free, so slices of a fused QKV
    projection go in directly) into slots slot_mapping [T] (int32 / int64) of
    the cache, in place. An int8 / fp8 cache stores codes and writes one scale
    per token and head into key_scale / value_scale (as qgemm.quantize on
    each [1, head_dim] head vector); a 16-bit cache (the keys' dtype) takes
    no scales. Negative slots (padding) and slots >= num_blocks·block_size
    are skipped."""
    if _torch_ops.use_torch_op(key_cache, stream):
        _torch_ops.ops(key_cache).kv_cache_write(key_cache, value_cache, key_scale, value_scale, key, value,
                                                 slot_mapping)
        return
    _qgemm.kv_cache_write(key_cache=_arrays.to_arg(key_cache), value_cache=_arrays.to_arg(value_cache),
                          key_scale=_arrays.to_arg(key_scale), value_scale=_arrays.to_arg(value_scale),
                          key=_arrays.to_arg(key), value=_arrays.to_arg(value),
                          slot_mapping=_arrays.to_arg(slot_mapping), stream=_arrays.stream_for(key_cache, stream))


def paged_attention_decode(query: Any, key_cache: Any, value_cache: Any, block_tables: Any, seq_lens: Any,
                           softmax_scale: Optional[float] = None, key_scale: Any = None, value_scale: Any = None,
                           max_seq_len: int = 0, *, out: Any = None, workspace: Any = None,
                           stream: Any = None) -> Any:
    """out[s, h] = Σ_j p_j · v̂_j / Σ_j p_j over the seq_lens[s] cached tokens
    of sequence s, p_j = exp(logit_j − max logit), logit_j = softmax_scale ·
    (query[s, h] · k̂_j), reading kv head h / (q_heads / kv_heads); k̂, v̂ the
    dequantized cache (code · scale).

    query [S, q_heads, head_dim] fp16 / bf16 (head_dim 64, 128 or 256;
    contiguous head vectors, other strides free); block_tables
    [S, max_blocks] int32: token j of sequence s is in block
    block_tables[s, j // block_size]; seq_lens [S] int32. softmax_scale
    defaults to 1/sqrt(head_dim). A sequence of length 0 gives zeros; one
    with a negative length, a length beyond its table row or a block id
    outside [0, num_blocks) gives NaN (the GPU cannot report it without
    synchronizing). Returns out [S, q_heads, head_dim] in query's dtype.

    max_seq_len (0: the table's capacity max_blocks·block_size) bounds
    seq_lens from the host and sizes the split of long sequences over several
    CTAs (flash-decoding), which needs workspace: uint8 scratch on the
    device of at least paged_attention_workspace_bytes(S, q_heads, head_dim,
    max_seq_len) bytes (with max_seq_len the capacity when 0). Without one,
    each sequence and kv head is one CTA; the CPU needs none. Concurrent
    calls need their own."""
    _arrays.require(query, "query")
    scale = 1.0 / math.sqrt(int(query.shape[-1])) if softmax_scale is None else float(softmax_scale)
    max_seq_len = int(max_seq_len)
    if _torch_ops.use_torch_op(query, stream):
        ops = _torch_ops.ops(query)
        if out is None and workspace is None:
            return ops.paged_attention_decode(query, key_cache, value_cache, key_scale, value_scale, block_tables,
                                              seq_lens, scale, max_seq_len)
        if out is None:
            out = _torch_ops.torch.empty(query.shape, dtype=query.dtype, device=query.device)
        ops.paged_attention_decode_out(out, query, key_cache, value_cache, key_scale, value_scale, block_tables,
                                       seq_lens, scale, max_seq_len, workspace)
        return out
    if out is None:
        out = _arrays.empty(query, tuple(query.shape), _arrays.dtype_name(query))
    _qgemm.paged_attention_decode(out=_arrays.to_arg(out), query=_arrays.to_arg(query),
                                  key_cache=_arrays.to_arg(key_cache), value_cache=_arrays.to_arg(value_cache),
                                  key_scale=_arrays.to_arg(key_scale), value_scale=_arrays.to_arg(value_scale),
                                  block_tables=_arrays.to_arg(block_tables), seq_lens=_arrays.to_arg(seq_lens),
                                  softmax_scale=scale, max_seq_len=max_seq_len,
                                  workspace=_arrays.to_arg(workspace), stream=_arrays.stream_for(query, stream))
    return out


def paged_attention_workspace_bytes(num_seqs: int, q_heads: int, head_dim: int, max_seq_len: int) -> int:
    """Bytes of paged_attention_decode's workspace for num_seqs sequences of
    at most max_seq_len tokens (0 when no sequence is split); the same for
    every device."""
    return int(_qgemm.paged_attention_workspace_bytes(int(num_seqs), int(q_heads), int(head_dim), int(max_seq_len)))
