"""qgemm: quantized transformer-inference kernels (INT8 / FP8 / INT4).

Every op takes arrays from any DLPack framework (PyTorch, CuPy, JAX, NumPy)
zero-copy; see docs/python.md."""

from . import _qgemm
from ._arrays import Fp8, fp8
from .ops import (azp_adj, dequantize, pack_int4, quantize, quantize_weight_int4, scaled_mm, scaled_mm_azp,
                  unpack_int4)

__version__ = _qgemm.version()
built_with_cuda = _qgemm.built_with_cuda
cuda_device_count = _qgemm.cuda_device_count

__all__ = ["scaled_mm", "scaled_mm_azp", "azp_adj", "quantize", "dequantize", "quantize_weight_int4",
           "pack_int4", "unpack_int4", "fp8", "Fp8", "built_with_cuda", "cuda_device_count", "__version__"]
