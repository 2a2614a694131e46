"""GPTQ and AWQ int4 checkpoints in weight_only_mm's layout (offline, at load
time, on the arrays' own device; NumPy arrays or PyTorch tensors).

Both formats store 4-bit codes q (0…15) eight to an int32 word, a 4-bit zero
point z per group and output channel, and scales s [K/group, N] (fp16); the
weight of input k and output n is

    w[n, k] = (q[n, k] − z[g, n]) · s[g, n],   g = k / group_size

and weight_only_mm computes ŵ = round_T(q·s_T + o_T), so the conversion
keeps q and s and sets the offset o = −z·s (docs/weight_only.md, "GPTQ and
AWQ checkpoints"). That is exact where z·s is representable in the parameter
dtype (every symmetric checkpoint: z = 8) and otherwise rounds the offset
once more (at most half an ulp of z·s: ≤ 2^-11 of the group's code range
15·s in fp16). Scales and offsets come back group-major (the [K/group, N]
arrays viewed transposed), the layout the decode kernels read fastest.

    qweight, qzeros, scales = ...  # from the checkpoint, e.g. safetensors
    weight = qgemm.from_awq(qweight, qzeros, scales)
    out = qgemm.weight_only_mm(a, *weight)   # a: fp16 [M, K]

Packings (int32 words, nibble i = bits 4i…4i+3):
- AWQ (AutoAWQ "gemm"): qweight [K, N/8], qzeros [K/group, N/8], packed along
  N in the order [0, 2, 4, 6, 1, 3, 5, 7]: nibble i of word c holds column
  8c + order[i].
- GPTQ (AutoGPTQ / GPTQModel): qweight [K/8, N] packed along K (nibble i of
  word r holds row 8r + i), qzeros [K/group, N/8] packed along N in order.
  The "v1" format (checkpoint_format "gptq", the common one) stores z − 1;
  "gptq_v2" stores z (zero_offset=0). g_idx (act-order, desc_act=True)
  permutes the groups over K, which a per-group layout cannot express: such
  checkpoints are refused unless g_idx is the plain k / group_size.
"""

from __future__ import annotations

from typing import Any, NamedTuple, Optional

from . import _arrays

# AWQ's packing order: nibble i of a word holds column 8c + AWQ_ORDER[i].
AWQ_ORDER = (0, 2, 4, 6, 1, 3, 5, 7)


class Int4Weight(NamedTuple):
    """weight_only_mm's int4 arguments: qgemm.weight_only_mm(a, *weight)."""

    w: Any  # uint8 [N, K/2], element 2j in the low nibble of byte j
    scales: Any  # [N, K/group_size], group-major view
    offsets: Any  # same dtype and layout
    group_size: int


class _Ops:
    """The few array operations the conversion needs, for NumPy or PyTorch."""

    def __init__(self, like: Any):
        self.fw = _arrays.framework(like)
        if self.fw == "torch":
            import torch

            self.xp, self.device = torch, like.device
        elif self.fw == "numpy":
            import numpy

            self.xp, self.device = numpy, None
        else:
            raise TypeError(f"qweight: expected a NumPy array or a PyTorch tensor, got {type(like)}")

    def arange(self, n: int) -> Any:
        if self.fw == "torch":
            return self.xp.arange(n, device=self.device)
        return self.xp.arange(n)

    def nibbles(self, words: Any) -> Any:
        """int32 [R, C] → uint8 [R, C, 8], nibble i of each word at index i."""
        if self.fw == "torch":
            shifts = self.xp.arange(0, 32, 4, dtype=self.xp.int32, device=self.device)
            return ((words[..., None] >> shifts) & 15).to(self.xp.uint8)
        shifts = self.xp.arange(0, 32, 4, dtype=self.xp.int32)
        return ((words[..., None] >> shifts) & 15).astype(self.xp.uint8)

    def transpose_contiguous(self, x: Any, axes: tuple) -> Any:
        if self.fw == "torch":
            return x.permute(*axes).contiguous()
        return self.xp.ascontiguousarray(self.xp.transpose(x, axes))

    def float32(self, x: Any) -> Any:
        return x.to(self.xp.float32) if self.fw == "torch" else x.astype(self.xp.float32)

    def cast_like(self, x: Any, like: Any) -> Any:
        return x.to(like.dtype) if self.fw == "torch" else x.astype(like.dtype)

    def cast(self, x: Any, dtype: str) -> Any:
        names = {"fp32": "float32", "fp16": "float16", "bf16": "bfloat16"}
        if dtype not in names or (dtype == "bf16" and self.fw == "numpy"):
            raise TypeError(f"param_dtype: expected 'fp32', 'fp16'{'' if self.fw == 'numpy' else ' or bf16'}, "
                            f"got {dtype!r}")
        target = getattr(self.xp, names[dtype])
        return x.to(target) if self.fw == "torch" else x.astype(target)


def _require_int32(x: Any, name: str, ops: _Ops) -> None:
    if len(x.shape) != 2 or _arrays.dtype_name(x) != "int32":
        raise TypeError(f"{name}: expected a 2-D int32 array of packed 4-bit codes, got {_arrays.dtype_name(x)} "
                        f"{tuple(x.shape)}")
    if ops.fw == "torch" and x.device != ops.device:
        raise ValueError(f"{name}: on {x.device}, expected qweight's device {ops.device}")


def _check_shape(x: Any, name: str, expected: tuple, what: str) -> None:
    if tuple(int(d) for d in x.shape) != expected:
        raise ValueError(f"{name}: expected shape {expected} ({what}), got {tuple(x.shape)}")


def _group_size(k: int, groups: int) -> int:
    if groups < 1 or k % groups:
        raise ValueError(f"scales: {groups} groups do not divide K = {k}")
    return k // groups


def _finish(q_nk: Any, zeros_gn: Any, scales_gn: Any, group_size: int, param_dtype: Optional[str],
            ops: _Ops) -> Int4Weight:
    """Codes [N, K] (uint8), zero points and scales [G, N] → weight_only_mm's arguments."""
    w = q_nk[:, 0::2] | (q_nk[:, 1::2] << 4)  # qgemm.pack_int4's nibble order, on the arrays' device
    offsets = -(ops.float32(zeros_gn) * ops.float32(scales_gn))  # exact in fp32: 5 × 11 significant bits
    if param_dtype is None:
        scales_out, offsets_out = scales_gn, ops.cast_like(offsets, scales_gn)
    else:
        scales_out, offsets_out = ops.cast(scales_gn, param_dtype), ops.cast(offsets, param_dtype)
    # [G, N] row-major arrays viewed as [N, G]: group-major parameters.
    return Int4Weight(w, scales_out.T, offsets_out.T, group_size)


def from_awq(qweight: Any, qzeros: Any, scales: Any, *, param_dtype: Optional[str] = None) -> Int4Weight:
    """An AWQ int4 layer (AutoAWQ's "gemm" packing): qweight int32 [K, N/8],
    qzeros int32 [K/group, N/8], scales [K/group, N] → Int4Weight for
    weight_only_mm. param_dtype: the dtype of the returned scales and
    offsets ('fp32', 'fp16', 'bf16'; default: that of scales), which must be
    fp32 or the activations' dtype."""
    ops = _Ops(qweight)
    _require_int32(qweight, "qweight", ops)
    _require_int32(qzeros, "qzeros", ops)
    k, n = int(qweight.shape[0]), int(qweight.shape[1]) * 8
    groups = int(scales.shape[0])
    _check_shape(scales, "scales", (groups, n), "[K/group, N] with N = 8 × qweight's columns")
    _check_shape(qzeros, "qzeros", (groups, n // 8), "[K/group, N/8]")
    group_size = _group_size(k, groups)
    # Column 8c + AWQ_ORDER[i] is nibble i: put the nibbles back in column order.
    inverse = [AWQ_ORDER.index(j) for j in range(8)]
    q_kn = ops.nibbles(qweight)[:, :, inverse].reshape(k, n)
    zeros = ops.nibbles(qzeros)[:, :, inverse].reshape(groups, n)
    return _finish(ops.transpose_contiguous(q_kn, (1, 0)), zeros, scales, group_size, param_dtype, ops)


def from_gptq(qweight: Any, qzeros: Any, scales: Any, g_idx: Any = None, *, zero_offset: int = 1,
              param_dtype: Optional[str] = None) -> Int4Weight:
    """A GPTQ int4 layer: qweight int32 [K/8, N], qzeros int32 [K/group, N/8],
    scales [K/group, N] and optionally g_idx [K] → Int4Weight for
    weight_only_mm. zero_offset: added to the stored zero points (1 for
    "gptq" v1 checkpoints, which store z − 1; 0 for "gptq_v2"). param_dtype as
    in from_awq. Act-order checkpoints (g_idx other than k / group_size) are
    refused with a ValueError."""
    ops = _Ops(qweight)
    _require_int32(qweight, "qweight", ops)
    _require_int32(qzeros, "qzeros", ops)
    k, n = int(qweight.shape[0]) * 8, int(qweight.shape[1])
    groups = int(scales.shape[0])
    _check_shape(scales, "scales", (groups, n), "[K/group, N] with N = qweight's columns")
    _check_shape(qzeros, "qzeros", (groups, n // 8), "[K/group, N/8]")
    group_size = _group_size(k, groups)
    if g_idx is not None:
        _check_shape(g_idx, "g_idx", (k,), "[K] with K = 8 × qweight's rows")
        plain = ops.arange(k) // group_size
        if not bool((g_idx == plain).all()):
            raise ValueError("g_idx: an act-order (desc_act) checkpoint, whose groups are permuted over K; "
                             "weight_only_mm needs contiguous groups (g_idx[k] == k // group_size)")
    # Row 8r + i of column n is nibble i of word [r, n].
    q_nk = ops.transpose_contiguous(ops.nibbles(qweight), (1, 0, 2)).reshape(n, k)
    zeros = ops.nibbles(qzeros).reshape(groups, n)
    zeros = ops.float32(zeros) + zero_offset
    return _finish(q_nk, zeros, scales, group_size, param_dtype, ops)
