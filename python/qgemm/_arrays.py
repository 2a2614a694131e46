"""Framework plumbing: which framework an array belongs to, allocating outputs
with the same framework and device, the stream to run on, and fp8 arrays
(passed to the extension as a uint8 view plus the dtype name)."""

from __future__ import annotations

import sys
from typing import Any, Optional, Sequence

FP8 = "fp8e4m3"


class Fp8:
    """Marks an array of bytes (uint8) as fp8 e4m3 data: ``qgemm.fp8(x)``.

    Frameworks with a native fp8 dtype (``torch.float8_e4m3fn``,
    ``ml_dtypes.float8_e4m3fn`` in NumPy/JAX) need no marking."""

    __slots__ = ("array",)

    def __init__(self, array: Any):
        self.array = array

    @property
    def shape(self):
        return self.array.shape


def fp8(array: Any) -> Fp8:
    return Fp8(array)


def framework(x: Any) -> str:
    if isinstance(x, Fp8):
        x = x.array
    module = type(x).__module__.split(".")[0]
    if module in ("torch", "numpy", "cupy", "jax", "jaxlib"):
        return "jax" if module == "jaxlib" else module
    return module


def require(x: Any, name: str) -> None:
    """TypeError, worded like the extension's, when x is not an array."""
    if not isinstance(x, Fp8) and not hasattr(x, "__dlpack__") and not hasattr(x, "__array_interface__"):
        raise TypeError(f"{name}: expected an array supporting DLPack (torch, cupy, jax, numpy), got {type(x)}")


def _is_native_fp8(x: Any) -> bool:
    return "float8_e4m3fn" in str(getattr(x, "dtype", ""))


def to_arg(x: Any) -> Any:
    """The form the extension takes: the array itself, or (uint8 view, 'fp8e4m3')."""
    if x is None:
        return None
    if isinstance(x, Fp8):
        return (x.array, FP8)
    if _is_native_fp8(x):
        fw = framework(x)
        if fw == "torch":
            import torch

            return (x.view(torch.uint8), FP8)
        if fw in ("numpy", "cupy"):
            return (x.view("uint8"), FP8)
    return x


def dtype_name(x: Any) -> str:
    if isinstance(x, Fp8) or _is_native_fp8(x):
        return FP8
    name = str(x.dtype).replace("torch.", "")
    return {"int8": "int8", "uint8": "uint8", "int32": "int32", "float16": "fp16", "bfloat16": "bf16",
            "float32": "fp32"}.get(name, name)


_TORCH = {"int8": "int8", "uint8": "uint8", "int32": "int32", FP8: "float8_e4m3fn", "fp16": "float16",
          "bf16": "bfloat16", "fp32": "float32"}
_NUMPY = {"int8": "int8", "uint8": "uint8", "int32": "int32", FP8: "uint8", "fp16": "float16", "fp32": "float32"}


def canonical_dtype(dtype: Any) -> str:
    """'bf16', torch.bfloat16, np.float16, 'float32', ... → qgemm's dtype name."""
    if isinstance(dtype, str) and dtype in _TORCH:
        return dtype
    name = str(dtype).replace("torch.", "").replace("<class 'numpy.", "").rstrip("'>")
    aliases = {"float16": "fp16", "half": "fp16", "bfloat16": "bf16", "float32": "fp32", "float": "fp32",
               "float8_e4m3fn": FP8, "int8": "int8", "uint8": "uint8", "int32": "int32"}
    if name in aliases:
        return aliases[name]
    raise TypeError(f"unsupported dtype {dtype!r}")


def empty(like: Any, shape: Sequence[int], dtype: str) -> Any:
    """An uninitialized array of the framework and device of `like`."""
    fw = framework(like)
    base = like.array if isinstance(like, Fp8) else like
    if fw == "torch":
        import torch

        return torch.empty(tuple(shape), dtype=getattr(torch, _TORCH[dtype]), device=base.device)
    if fw == "numpy":
        import numpy as np

        if dtype == "bf16":
            raise TypeError("NumPy has no bfloat16: pass out_dtype='fp16' or 'fp32', or an out= array")
        out = np.empty(tuple(shape), dtype=_NUMPY[dtype])
        return Fp8(out) if dtype == FP8 else out
    if fw == "cupy":
        import cupy

        if dtype == "bf16":
            raise TypeError("CuPy has no bfloat16: pass out_dtype='fp16' or 'fp32', or an out= array")
        with cupy.cuda.Device(base.device.id):
            out = cupy.empty(tuple(shape), dtype=_NUMPY[dtype])
        return Fp8(out) if dtype == FP8 else out
    raise TypeError(f"cannot allocate outputs for {fw} arrays (immutable or unknown): pass out=")


def stream_for(like: Any, stream: Optional[Any]) -> Optional[int]:
    """The CUDA stream to enqueue on: an explicit `stream` (int handle, or an
    object with .cuda_stream / .ptr), else the framework's current stream."""
    if stream is not None:
        for attribute in ("cuda_stream", "ptr"):
            if hasattr(stream, attribute):
                return int(getattr(stream, attribute))
        return int(stream)
    base = like.array if isinstance(like, Fp8) else like
    fw = framework(base)
    if fw == "torch" and base.is_cuda:
        import torch

        return torch.cuda.current_stream(base.device).cuda_stream
    if fw == "cupy":
        import cupy

        return cupy.cuda.get_current_stream().ptr
    return None


def torch_available() -> bool:
    return "torch" in sys.modules or _importable("torch")


def _importable(name: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(name) is not None
