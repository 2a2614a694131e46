"""PyTorch custom operators (torch.library) over the qgemm extension, with
fake (meta) implementations, so qgemm works under torch.compile and inside
captured CUDA graphs. Registered on first use when PyTorch is importable."""

from __future__ import annotations

from typing import List, Optional, Tuple

from . import _arrays as arrays
from . import _qgemm as _C

_registered: Optional[bool] = None


def registered() -> bool:
    global _registered
    if _registered is None:
        try:
            import torch  # noqa: F401
        except ImportError:
            _registered = False
            return False
        _register()
        _registered = True
    return _registered


def _stream(t) -> Optional[int]:
    import torch

    return torch.cuda.current_stream(t.device).cuda_stream if t.is_cuda else None


def _scale_shape(x, mode: str, group_size: int) -> List[int]:
    if mode == "per_group":
        return [x.shape[0], x.shape[1] // group_size]
    return [x.shape[0]]


def _register() -> None:
    import torch
    from torch import Tensor

    @torch.library.custom_op("qgemm::scaled_mm", mutates_args=())
    def scaled_mm(a: Tensor, b: Tensor, scale_a: Tensor, scale_b: Tensor, bias: Optional[Tensor],
                  out_dtype: torch.dtype) -> Tensor:
        out = torch.empty((a.shape[0], b.shape[1]), dtype=out_dtype, device=a.device)
        _C.scaled_mm(out, arrays.to_arg(a), arrays.to_arg(b), scale_a, scale_b, bias, _stream(a))
        return out

    @scaled_mm.register_fake
    def _(a, b, scale_a, scale_b, bias, out_dtype):
        return a.new_empty((a.shape[0], b.shape[1]), dtype=out_dtype)

    @torch.library.custom_op("qgemm::scaled_mm_azp", mutates_args=())
    def scaled_mm_azp(a: Tensor, b: Tensor, scale_a: Tensor, scale_b: Tensor, azp_adj: Tensor,
                      azp: Optional[Tensor], bias: Optional[Tensor], out_dtype: torch.dtype) -> Tensor:
        out = torch.empty((a.shape[0], b.shape[1]), dtype=out_dtype, device=a.device)
        _C.scaled_mm_azp(out, a, b, scale_a, scale_b, azp_adj, azp, bias, _stream(a))
        return out

    @scaled_mm_azp.register_fake
    def _(a, b, scale_a, scale_b, azp_adj, azp, bias, out_dtype):
        return a.new_empty((a.shape[0], b.shape[1]), dtype=out_dtype)

    @torch.library.custom_op("qgemm::quantize", mutates_args=())
    def quantize(x: Tensor, mode: str, dtype: torch.dtype, symmetric: bool, narrow_range: bool,
                 group_size: int) -> Tuple[Tensor, Tensor, Tensor]:
        q = torch.empty(x.shape, dtype=dtype, device=x.device)
        shape = _scale_shape(x, mode, group_size)
        scale = torch.empty(shape, dtype=torch.float32, device=x.device)
        azp = torch.empty(shape if not symmetric else [0], dtype=torch.int32, device=x.device)
        _C.quantize(arrays.to_arg(q), scale, None if symmetric else azp, x, mode, symmetric, narrow_range,
                    group_size, _stream(x))
        return q, scale, azp

    @quantize.register_fake
    def _(x, mode, dtype, symmetric, narrow_range, group_size):
        shape = _scale_shape(x, mode, group_size)
        return (x.new_empty(x.shape, dtype=dtype), x.new_empty(shape, dtype=torch.float32),
                x.new_empty(shape if not symmetric else [0], dtype=torch.int32))
