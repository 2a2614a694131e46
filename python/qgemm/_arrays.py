"""Framework plumbing for the qgemm ops: which framework an array belongs to,
how it is handed to the extension (zero-copy, over DLPack), allocating
outputs with the same framework and device, the CUDA stream to run on, and
fp8 arrays.

fp8 e4m3 travels to the extension as a uint8 view plus the dtype name
("fp8e4m3"): not every framework exports fp8 over DLPack. Arrays whose dtype
is a native fp8 (``torch.float8_e4m3fn``, ``ml_dtypes.float8_e4m3fn``) are
viewed so automatically; a plain uint8 array of fp8 codes is marked with
``qgemm.fp8(array)``.
"""

from __future__ import annotations

import importlib.util
from typing import Any, Optional, Sequence, Tuple

FP8 = "fp8e4m3"
DTYPES = ("int8", "uint8", "int32", FP8, "fp16", "bf16", "fp32")


class Fp8:
    """A uint8 array of fp8 e4m3 codes, marked as fp8: ``qgemm.fp8(array)``.

    NumPy and CuPy results of fp8 ops come back wrapped like this unless
    ml_dtypes is installed (then they are ``ml_dtypes.float8_e4m3fn``
    arrays). ``.array`` is the uint8 array itself."""

    __slots__ = ("array",)

    def __init__(self, array: Any):
        self.array = array

    @property
    def shape(self) -> Tuple[int, ...]:
        return tuple(self.array.shape)

    @property
    def dtype(self) -> str:
        return FP8

    def __repr__(self) -> str:
        return f"qgemm.Fp8({self.array!r})"


def fp8(array: Any) -> Fp8:
    """Marks a uint8 array of fp8 e4m3 codes as fp8."""
    return array if isinstance(array, Fp8) else Fp8(array)


def _base(x: Any) -> Any:
    return x.array if isinstance(x, Fp8) else x


def require(x: Any, name: str) -> None:
    """TypeError, worded like the extension's, when `x` is not an array."""
    if not isinstance(x, Fp8) and not hasattr(x, "__dlpack__") and not hasattr(x, "__array_interface__"):
        raise TypeError(f"{name}: expected an array supporting DLPack (torch, cupy, jax, numpy), got {type(x)}")


def framework(x: Any) -> str:
    """'torch', 'numpy', 'cupy', 'jax' or the array type's top-level module."""
    module = type(_base(x)).__module__.split(".")[0]
    return "jax" if module == "jaxlib" else module


def _is_native_fp8(x: Any) -> bool:
    return "float8_e4m3fn" in str(getattr(x, "dtype", ""))


def dtype_name(x: Any) -> str:
    """qgemm's name for the dtype of an array ('int8', 'bf16', 'fp8e4m3', ...)."""
    if isinstance(x, Fp8) or _is_native_fp8(x):
        return FP8
    return canonical_dtype(x.dtype)


_ALIASES = {"float16": "fp16", "half": "fp16", "bfloat16": "bf16", "float32": "fp32", "float": "fp32",
            "float8_e4m3fn": FP8, "int8": "int8", "uint8": "uint8", "int32": "int32"}


def canonical_dtype(dtype: Any) -> str:
    """'bf16', torch.bfloat16, np.float16, 'float32', ... → qgemm's dtype name."""
    if isinstance(dtype, str) and dtype in DTYPES:
        return dtype
    name = getattr(dtype, "__name__", None) or str(dtype)
    name = name.replace("torch.", "")
    if name in _ALIASES:
        return _ALIASES[name]
    raise TypeError(f"dtype: expected one of {', '.join(DTYPES)} (or the framework's equivalent), got {dtype!r}")


def to_arg(x: Any) -> Any:
    """The form the extension takes: the array (or a DLPack capsule of it),
    or a (uint8 view, 'fp8e4m3') pair for fp8."""
    if x is None:
        return None
    if isinstance(x, Fp8):
        return (to_arg(x.array), FP8)
    fw = framework(x)
    if fw == "torch":
        if _is_native_fp8(x):
            import torch

            return (_torch_capsule(x.view(torch.uint8)), FP8)
        return _torch_capsule(x)
    if _is_native_fp8(x) and fw in ("numpy", "cupy"):
        return (x.view("uint8"), FP8)
    return x


def _torch_capsule(t: Any) -> Any:
    # The legacy to_dlpack() exports without stream synchronization (torch's
    # __dlpack__() may make the default stream wait on the current one, which
    # breaks CUDA graph capture) and without a current-device check: qgemm
    # enqueues on the stream it is given and guards the device itself.
    from torch.utils.dlpack import to_dlpack

    return to_dlpack(t.detach())


def empty(like: Any, shape: Sequence[int], dtype: str) -> Any:
    """An uninitialized array of `dtype` of the framework and device of `like`."""
    fw = framework(like)
    base = _base(like)
    shape = tuple(int(s) for s in shape)
    if fw == "torch":
        import torch

        names = {FP8: "float8_e4m3fn", "fp16": "float16", "bf16": "bfloat16", "fp32": "float32"}
        return torch.empty(shape, dtype=getattr(torch, names.get(dtype, dtype)), device=base.device)
    if fw in ("numpy", "cupy"):
        if fw == "numpy":
            import numpy as xp

            device = None
        else:
            import cupy as xp

            device = xp.cuda.Device(base.device.id)
        if dtype == "bf16":
            raise TypeError(f"out_dtype: {fw} has no bfloat16; pass out_dtype='fp16' or 'fp32', or an out= array")
        if dtype == FP8:
            native = _ml_dtypes_fp8()
            if native is not None:
                return _alloc(xp, device, shape, "uint8").view(native)
            return Fp8(_alloc(xp, device, shape, "uint8"))
        numpy_names = {"fp16": "float16", "fp32": "float32"}
        return _alloc(xp, device, shape, numpy_names.get(dtype, dtype))
    raise TypeError(f"out: cannot allocate a result for {fw} arrays; pass out= (a torch, cupy or numpy array)")


def _alloc(xp: Any, device: Any, shape: Tuple[int, ...], dtype: str) -> Any:
    if device is None:
        return xp.empty(shape, dtype=dtype)
    with device:
        return xp.empty(shape, dtype=dtype)


def _ml_dtypes_fp8() -> Any:
    if importlib.util.find_spec("ml_dtypes") is None:
        return None
    import ml_dtypes

    return ml_dtypes.float8_e4m3fn


def device_of(x: Any) -> str:
    """'cpu' or 'cuda:N' for an array of any supported framework."""
    base = _base(x)
    fw = framework(base)
    if fw == "torch":
        return "cpu" if base.device.type == "cpu" else f"cuda:{base.device.index or 0}"
    if fw == "cupy":
        return f"cuda:{base.device.id}"
    if hasattr(base, "__dlpack_device__"):
        kind, index = base.__dlpack_device__()
        return "cpu" if int(kind) in (1, 3) else f"cuda:{index}"
    return "cpu"


def stream_for(like: Any, stream: Optional[Any]) -> Optional[int]:
    """The CUDA stream to enqueue on: an explicit `stream` (an int handle, or
    an object with .cuda_stream (torch) or .ptr (cupy)), else the current
    stream of the framework of `like` (torch, cupy), else None (the legacy
    default stream; ignored on the CPU)."""
    if stream is not None:
        for attribute in ("cuda_stream", "ptr"):
            if hasattr(stream, attribute):
                return int(getattr(stream, attribute))
        return int(stream)
    base = _base(like)
    fw = framework(base)
    if fw == "torch" and base.is_cuda:
        import torch

        return torch.cuda.current_stream(base.device).cuda_stream
    if fw == "cupy":
        import cupy

        return cupy.cuda.get_current_stream().ptr
    return None


def cuda_index(device: Any) -> Optional[int]:
    """A CUDA device index, a torch.device / "cuda:N" / "cpu" as an index
    (None: the CPU)."""
    if device is None:
        return None
    if not isinstance(device, int):
        text = str(device)
        if text == "cpu":
            return None
        if text == "cuda":
            return 0
        if text.startswith("cuda:"):
            return int(text.split(":", 1)[1])
        raise ValueError(f"device: expected a CUDA index, 'cuda[:N]' or 'cpu', got {device!r}")
    if device < 0:
        raise ValueError(f"device: expected a CUDA device index >= 0, got {device}")
    return device
