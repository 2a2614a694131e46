"""The KV cache family (qgemm/kv_cache.h) as PyTorch custom operators; see
_torch_ops.py for the conventions (<op> allocates, <op>_out writes):

    qgemm::kv_cache_write(Tensor(a!) key_cache, Tensor(b!) value_cache,
                          Tensor(c!)? key_scale, Tensor(d!)? value_scale,
                          Tensor key, Tensor value, Tensor slot_mapping) -> ()
    qgemm::paged_attention_decode(query, key_cache, value_cache, key_scale?,
                                  value_scale?, block_tables, seq_lens,
                                  float softmax_scale, int max_seq_len) -> Tensor
    qgemm::paged_attention_decode_out(Tensor(a!) out, <the same>,
                                      Tensor(b!)? workspace) -> ()

kv_cache_write only updates the cache in place (it has no functional form).
As for scaled_mm, only the _out form of the attention takes the workspace
(declared mutated, always passed, None for none): the functional op stays
free of mutation; qgemm.paged_attention_decode with a workspace and no out=
allocates out and calls the _out op.

No `from __future__ import annotations` (torch.library reads the types).
"""

from typing import Any, Optional

from . import _qgemm, _torch_ops


def register(custom_op: Any, Tensor: Any, run: Any) -> None:
    torch = _torch_ops.torch

    @custom_op("qgemm::kv_cache_write", mutates_args=("key_cache", "value_cache", "key_scale", "value_scale"))
    def kv_cache_write(key_cache: Tensor, value_cache: Tensor, key_scale: Optional[Tensor],
                       value_scale: Optional[Tensor], key: Tensor, value: Tensor, slot_mapping: Tensor) -> None:
        run(_qgemm.kv_cache_write, key_cache, key_cache=key_cache, value_cache=value_cache, key_scale=key_scale,
            value_scale=value_scale, key=key, value=value, slot_mapping=slot_mapping)

    @kv_cache_write.register_fake
    def _(key_cache, value_cache, key_scale, value_scale, key, value, slot_mapping):
        return None

    @custom_op("qgemm::paged_attention_decode_out", mutates_args=("out", "workspace"))
    def paged_attention_decode_out(out: Tensor, query: Tensor, key_cache: Tensor, value_cache: Tensor,
                                   key_scale: Optional[Tensor], value_scale: Optional[Tensor], block_tables: Tensor,
                                   seq_lens: Tensor, softmax_scale: float, max_seq_len: int,
                                   workspace: Optional[Tensor]) -> None:
        run(_qgemm.paged_attention_decode, query, out=out, query=query, key_cache=key_cache, value_cache=value_cache,
            key_scale=key_scale, value_scale=value_scale, block_tables=block_tables, seq_lens=seq_lens,
            softmax_scale=softmax_scale, max_seq_len=max_seq_len, workspace=workspace)

    @paged_attention_decode_out.register_fake
    def _(out, query, key_cache, value_cache, key_scale, value_scale, block_tables, seq_lens, softmax_scale,
          max_seq_len, workspace):
        return None

    @custom_op("qgemm::paged_attention_decode", mutates_args=())
    def paged_attention_decode(query: Tensor, key_cache: Tensor, value_cache: Tensor, key_scale: Optional[Tensor],
                               value_scale: Optional[Tensor], block_tables: Tensor, seq_lens: Tensor,
                               softmax_scale: float, max_seq_len: int) -> Tensor:
        out = torch.empty(query.shape, dtype=query.dtype, device=query.device)
        run(_qgemm.paged_attention_decode, query, out=out, query=query, key_cache=key_cache, value_cache=value_cache,
            key_scale=key_scale, value_scale=value_scale, block_tables=block_tables, seq_lens=seq_lens,
            softmax_scale=softmax_scale, max_seq_len=max_seq_len)
        return out

    @paged_attention_decode.register_fake
    def _(query, key_cache, value_cache, key_scale, value_scale, block_tables, seq_lens, softmax_scale, max_seq_len):
        return query.new_empty(query.shape)
