"""qgemm's ops as PyTorch custom operators (torch.library), registered when
torch is importable (set QGEMM_NO_TORCH=1 to skip):

    torch.ops.qgemm.<op>      allocates its outputs (a functional op)
    torch.ops.qgemm.<op>_out  writes into the given outputs (mutates them)

Each has a fake (meta) implementation giving the output shapes and dtypes, so
the ops trace under torch.compile(fullgraph=True); the real implementations
run the extension on torch's current CUDA stream and allocate nothing but
their outputs (through torch's caching allocator), so they can be captured
in CUDA graphs. The qgemm.* functions route torch tensors here.

No `from __future__ import annotations`: torch.library reads the annotations
as types to infer each op's schema.
"""

import os
from typing import Any, Callable, Dict, Optional, Tuple

from . import _arrays, _qgemm

torch: Any = None
enabled = False


def use_torch_op(x: Any, stream: Any) -> bool:
    """True when `x` is a torch tensor and no explicit stream was given."""
    return enabled and stream is None and isinstance(x, torch.Tensor)


# Each op's Python implementation, by op name (filled by _register).
DIRECT: Dict[str, Callable[..., Any]] = {}


class _DirectOps:
    def __getattr__(self, name: str) -> Callable[..., Any]:
        return DIRECT[name]


_direct_ops = _DirectOps()


def ops(anchor: Any) -> Any:
    """Where a torch-tensor call goes: torch.ops.qgemm while torch.compile
    traces (and for tensor subclasses, e.g. fake tensors), otherwise the
    ops' Python implementations themselves. Those are the same code the
    registered ops run, minus the dispatcher and custom-op wrapper, which
    cost tens of µs per eager call."""
    if type(anchor) is not torch.Tensor or torch.compiler.is_compiling():
        return torch.ops.qgemm
    return _direct_ops


def _remembering(custom_op: Any) -> Any:
    """torch.library.custom_op that also records the implementation in DIRECT."""

    def define(name: str, fn: Any = None, **kwargs: Any) -> Any:
        def register(impl: Any) -> Any:
            DIRECT[name.split("::", 1)[1]] = impl
            return custom_op(name, impl, **kwargs)

        return register if fn is None else register(fn)

    return define


_NAMES = {"bf16": "bfloat16", "fp16": "float16", "fp32": "float32", "fp8e4m3": "float8_e4m3fn",
          "int8": "int8", "uint8": "uint8", "int32": "int32"}


def torch_dtype(dtype: Any) -> Any:
    """A torch.dtype from a torch.dtype or any name qgemm accepts."""
    if isinstance(dtype, torch.dtype):
        return dtype
    return getattr(torch, _NAMES[_arrays.canonical_dtype(dtype)])


def _args(tensors: Any) -> Any:
    return {name: (_arrays.to_arg(value) if isinstance(value, torch.Tensor) else value)
            for name, value in tensors.items()}


def _run(op: Any, anchor: Any, **tensors: Any) -> None:
    """Calls extension op `op` on torch's current stream of `anchor`'s device."""
    stream = torch.cuda.current_stream(anchor.device).cuda_stream if anchor.is_cuda else None
    op(**_args(tensors), stream=stream)


def _run_offline(op: Any, **tensors: Any) -> None:
    """Calls a CPU-only extension op (no stream)."""
    op(**_args(tensors))


def quant_shapes(input: Any, mode: str, group_size: int) -> Tuple[Tuple[int, ...], ...]:
    """(scale shape, azp shape) written by dynamic quantization of input [T,H]:
    per-token [T,1], per-group [T, H/group_size]."""
    tokens, hidden = input.shape[0], input.shape[-1]
    if mode == "per_group":
        shape = (tokens, hidden // group_size if group_size > 0 else 0)
    else:
        shape = (tokens, 1)
    return shape, shape


def _register() -> None:
    # The functional ops (which allocate their outputs) call the extension
    # through _run directly rather than through their _out op: a custom op
    # called from inside another costs a second pass through the dispatcher.
    from torch import Tensor
    from torch.library import custom_op as torch_custom_op

    custom_op = _remembering(torch_custom_op)

    # ---- gemm ----------------------------------------------------------
    # workspace: stream-K scratch the kernel writes (declared mutated), or
    # None; always passed, as for weight_only_mm below. Only the _out forms
    # take it: the functional ops stay free of mutation, which inductor
    # handles; qgemm.scaled_mm with a workspace and no out= allocates out
    # and calls the _out op.
    @custom_op("qgemm::scaled_mm_out", mutates_args=("out", "workspace"))
    def scaled_mm_out(out: Tensor, a: Tensor, b: Tensor, scale_a: Tensor, scale_b: Tensor,
                      bias: Optional[Tensor], workspace: Optional[Tensor], fast_accum: bool = False) -> None:
        _run(_qgemm.scaled_mm, a, out=out, a=a, b=b, scale_a=scale_a, scale_b=scale_b, bias=bias,
             workspace=workspace, fast_accum=fast_accum)

    @scaled_mm_out.register_fake
    def _(out, a, b, scale_a, scale_b, bias, workspace, fast_accum=False):
        return None

    @custom_op("qgemm::scaled_mm", mutates_args=())
    def scaled_mm(a: Tensor, b: Tensor, scale_a: Tensor, scale_b: Tensor, bias: Optional[Tensor],
                  out_dtype: torch.dtype, fast_accum: bool = False) -> Tensor:
        out = torch.empty((a.shape[0], b.shape[1]), dtype=out_dtype, device=a.device)
        _run(_qgemm.scaled_mm, a, out=out, a=a, b=b, scale_a=scale_a, scale_b=scale_b, bias=bias,
             fast_accum=fast_accum)
        return out

    @scaled_mm.register_fake
    def _(a, b, scale_a, scale_b, bias, out_dtype, fast_accum=False):
        return a.new_empty((a.shape[0], b.shape[1]), dtype=out_dtype)

    @custom_op("qgemm::scaled_mm_azp_out", mutates_args=("out", "workspace"))
    def scaled_mm_azp_out(out: Tensor, a: Tensor, b: Tensor, scale_a: Tensor, scale_b: Tensor, azp_adj: Tensor,
                          azp: Optional[Tensor], bias: Optional[Tensor], workspace: Optional[Tensor]) -> None:
        _run(_qgemm.scaled_mm_azp, a, out=out, a=a, b=b, scale_a=scale_a, scale_b=scale_b, azp_adj=azp_adj,
             azp=azp, bias=bias, workspace=workspace)

    @scaled_mm_azp_out.register_fake
    def _(out, a, b, scale_a, scale_b, azp_adj, azp, bias, workspace):
        return None

    @custom_op("qgemm::scaled_mm_azp", mutates_args=())
    def scaled_mm_azp(a: Tensor, b: Tensor, scale_a: Tensor, scale_b: Tensor, azp_adj: Tensor,
                      azp: Optional[Tensor], bias: Optional[Tensor], out_dtype: torch.dtype) -> Tensor:
        out = torch.empty((a.shape[0], b.shape[1]), dtype=out_dtype, device=a.device)
        _run(_qgemm.scaled_mm_azp, a, out=out, a=a, b=b, scale_a=scale_a, scale_b=scale_b, azp_adj=azp_adj,
             azp=azp, bias=bias)
        return out

    @scaled_mm_azp.register_fake
    def _(a, b, scale_a, scale_b, azp_adj, azp, bias, out_dtype):
        return a.new_empty((a.shape[0], b.shape[1]), dtype=out_dtype)

    @custom_op("qgemm::azp_adj_out", mutates_args=("out",))
    def azp_adj_out(out: Tensor, b: Tensor, azp: Optional[int]) -> None:
        _run(_qgemm.azp_adj, b, out=out, b=b, azp=azp)

    @azp_adj_out.register_fake
    def _(out, b, azp):
        return None

    @custom_op("qgemm::azp_adj", mutates_args=())
    def azp_adj(b: Tensor, azp: Optional[int]) -> Tensor:
        out = torch.empty((b.shape[1],), dtype=torch.int32, device=b.device)
        _run(_qgemm.azp_adj, b, out=out, b=b, azp=azp)
        return out

    @azp_adj.register_fake
    def _(b, azp):
        return b.new_empty((b.shape[1],), dtype=torch.int32)

    # ---- weight-only ---------------------------------------------------
    # workspace: scratch the kernel writes (declared mutated), or None. No
    # default: torch's in-place bookkeeping indexes a mutated argument by
    # position, so it must always be passed.
    @custom_op("qgemm::weight_only_mm_out", mutates_args=("out", "workspace"))
    def weight_only_mm_out(out: Tensor, a: Tensor, w: Tensor, scales: Tensor, offsets: Optional[Tensor],
                           group_size: int, bias: Optional[Tensor], workspace: Optional[Tensor]) -> None:
        _run(_qgemm.weight_only_mm, a, out=out, a=a, w=w, scales=scales, offsets=offsets, group_size=group_size,
             bias=bias, workspace=workspace)

    @weight_only_mm_out.register_fake
    def _(out, a, w, scales, offsets, group_size, bias, workspace):
        return None

    @custom_op("qgemm::weight_only_mm", mutates_args=("workspace",))
    def weight_only_mm(a: Tensor, w: Tensor, scales: Tensor, offsets: Optional[Tensor], group_size: int,
                       bias: Optional[Tensor], workspace: Optional[Tensor]) -> Tensor:
        out = torch.empty((a.shape[0], scales.shape[0]), dtype=a.dtype, device=a.device)
        _run(_qgemm.weight_only_mm, a, out=out, a=a, w=w, scales=scales, offsets=offsets, group_size=group_size,
             bias=bias, workspace=workspace)
        return out

    @weight_only_mm.register_fake
    def _(a, w, scales, offsets, group_size, bias, workspace):
        return a.new_empty((a.shape[0], scales.shape[0]))

    @custom_op("qgemm::weight_only_prepack", mutates_args=())
    def weight_only_prepack(w: Tensor) -> Tensor:
        int4 = w.dtype == torch.uint8
        shape = _qgemm.weight_only_prepacked_shape(w.shape[0], w.shape[-1] * (2 if int4 else 1), int4)
        out = torch.empty(shape, dtype=w.dtype, device=w.device)
        _run(_qgemm.weight_only_prepack, w, out=out, w=w)
        return out

    @weight_only_prepack.register_fake
    def _(w):
        int4 = w.dtype == torch.uint8
        # the prepacked shape: ceil(N/16) row blocks × ceil(K/kc) tiles × 1024 bytes
        k = w.shape[-1] * (2 if int4 else 1)
        tile_k = 128 if int4 else 64
        return w.new_empty(((w.shape[0] + 15) // 16, (k + tile_k - 1) // tile_k, 1024))

    from . import _torch_fused_ops, _torch_kv_cache_ops, _torch_quant_ops

    _torch_quant_ops.register(custom_op, Tensor, _run, _run_offline)
    _torch_fused_ops.register(custom_op, _run)
    _torch_kv_cache_ops.register(custom_op, Tensor, _run)


def _init() -> None:
    global torch, enabled
    if os.environ.get("QGEMM_NO_TORCH") == "1":
        return
    import importlib.util

    if importlib.util.find_spec("torch") is None:
        return
    import torch as _torch

    torch = _torch
    _register()
    enabled = True


_init()
