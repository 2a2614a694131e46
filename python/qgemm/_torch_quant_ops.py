"""The quantization family (qgemm/quant.h) as PyTorch custom operators; see
_torch_ops.py for the conventions (<op> allocates, <op>_out writes).

The mode argument is `quant_mode` in the operator schemas: `mode` clashes
with a parameter of torch's auto_functionalized wrapper of mutating ops.

Custom operators may not return their inputs nor an optional tensor, so the
functional torch.ops.qgemm.quantize always returns three tensors
(q, scale, azp): in static mode scale and azp are empty (the inputs are the
scales), and azp is empty when symmetric; qgemm.quantize turns those back
into the given tensors / None.

No `from __future__ import annotations` (torch.library reads the types).
"""

from typing import Any, Optional, Tuple

from . import _qgemm, _torch_ops


def register(custom_op: Any, Tensor: Any, run: Any, run_offline: Any) -> None:
    torch = _torch_ops.torch

    @custom_op("qgemm::quantize_out", mutates_args=("out", "scale", "azp"))
    def quantize_out(out: Tensor, scale: Tensor, azp: Optional[Tensor], input: Tensor, quant_mode: str,
                     symmetric: bool, narrow_range: bool, group_size: int) -> None:
        run(_qgemm.quantize, input, out=out, scale=scale, azp=azp, input=input, mode=quant_mode,
            symmetric=symmetric, narrow_range=narrow_range, group_size=group_size)

    @quantize_out.register_fake
    def _(out, scale, azp, input, quant_mode, symmetric, narrow_range, group_size):
        return None

    @custom_op("qgemm::quantize", mutates_args=())
    def quantize(input: Tensor, dtype: torch.dtype, quant_mode: str, symmetric: bool, narrow_range: bool,
                 group_size: int, scale: Optional[Tensor], azp: Optional[Tensor]) -> Tuple[Tensor, Tensor, Tensor]:
        q, new_scale, new_azp = _quantize_outputs(input, dtype, quant_mode, symmetric, group_size, torch.empty)
        # The extension directly, not through quantize_out: a nested custom op
        # would add a second pass through the dispatcher to every call.
        out_scale, out_azp = (scale, azp) if quant_mode == "static" else (new_scale, None if symmetric else new_azp)
        run(_qgemm.quantize, input, out=q, scale=out_scale, azp=out_azp, input=input, mode=quant_mode,
            symmetric=symmetric, narrow_range=narrow_range, group_size=group_size)
        return q, new_scale, new_azp

    @quantize.register_fake
    def _(input, dtype, quant_mode, symmetric, narrow_range, group_size, scale, azp):
        return _quantize_outputs(input, dtype, quant_mode, symmetric, group_size, torch.empty)

    @custom_op("qgemm::dequantize_out", mutates_args=("out",))
    def dequantize_out(out: Tensor, input: Tensor, scale: Tensor, azp: Optional[Tensor], quant_mode: str,
                       group_size: int) -> None:
        run(_qgemm.dequantize, input, out=out, input=input, scale=scale, azp=azp, mode=quant_mode,
            group_size=group_size)

    @dequantize_out.register_fake
    def _(out, input, scale, azp, quant_mode, group_size):
        return None

    @custom_op("qgemm::dequantize", mutates_args=())
    def dequantize(input: Tensor, scale: Tensor, azp: Optional[Tensor], quant_mode: str, group_size: int,
                   out_dtype: torch.dtype) -> Tensor:
        out = torch.empty(input.shape, dtype=out_dtype, device=input.device)
        run(_qgemm.dequantize, input, out=out, input=input, scale=scale, azp=azp, mode=quant_mode,
            group_size=group_size)
        return out

    @dequantize.register_fake
    def _(input, scale, azp, quant_mode, group_size, out_dtype):
        return input.new_empty(input.shape, dtype=out_dtype)

    # Offline 4-bit weight preparation (CPU tensors only).
    @custom_op("qgemm::quantize_weight_int4", mutates_args=())
    def quantize_weight_int4(w: Tensor, group_size: int) -> Tuple[Tensor, Tensor, Tensor]:
        packed, scale, offset = _int4_outputs(w, group_size, torch.empty)
        run_offline(_qgemm.quantize_weight_int4, out_packed=packed, scale=scale, offset=offset, w=w,
            group_size=group_size)
        return packed, scale, offset

    @quantize_weight_int4.register_fake
    def _(w, group_size):
        return _int4_outputs(w, group_size, torch.empty)

    @custom_op("qgemm::pack_int4", mutates_args=())
    def pack_int4(values: Tensor) -> Tensor:
        out = torch.empty((values.shape[0], values.shape[-1] // 2), dtype=torch.uint8, device=values.device)
        run_offline(_qgemm.pack_int4, out_packed=out, values=values)
        return out

    @pack_int4.register_fake
    def _(values):
        return values.new_empty((values.shape[0], values.shape[-1] // 2), dtype=torch.uint8)

    @custom_op("qgemm::unpack_int4", mutates_args=())
    def unpack_int4(packed: Tensor) -> Tensor:
        out = torch.empty((packed.shape[0], packed.shape[-1] * 2), dtype=torch.uint8, device=packed.device)
        run_offline(_qgemm.unpack_int4, out_values=out, packed=packed)
        return out

    @unpack_int4.register_fake
    def _(packed):
        return packed.new_empty((packed.shape[0], packed.shape[-1] * 2), dtype=torch.uint8)


def _quantize_outputs(input: Any, dtype: Any, quant_mode: str, symmetric: bool, group_size: int,
                      empty: Any) -> Tuple[Any, Any, Any]:
    torch = _torch_ops.torch
    q = empty(input.shape, dtype=dtype, device=input.device)
    if quant_mode == "static":
        return q, empty((0,), dtype=torch.float32, device=input.device), empty((0,), dtype=torch.int32,
                                                                                device=input.device)
    scale_shape, azp_shape = _torch_ops.quant_shapes(input, quant_mode, group_size)
    scale = empty(scale_shape, dtype=torch.float32, device=input.device)
    azp = empty((0,) if symmetric else azp_shape, dtype=torch.int32, device=input.device)
    return q, scale, azp


def _int4_outputs(w: Any, group_size: int, empty: Any) -> Tuple[Any, Any, Any]:
    torch = _torch_ops.torch
    rows, cols = w.shape[0], w.shape[-1]
    groups = cols // group_size if group_size > 0 else 0
    return (empty((rows, cols // 2), dtype=torch.uint8, device=w.device),
            empty((rows, groups), dtype=torch.float32, device=w.device),
            empty((rows, groups), dtype=torch.float32, device=w.device))
