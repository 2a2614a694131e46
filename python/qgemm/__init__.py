"""qgemm — quantized transformer-inference kernels (INT8 / FP8 / INT4).

Every op takes arrays of any DLPack-capable framework (PyTorch, CuPy, JAX,
NumPy) zero-copy, runs on the device holding them (CUDA or the CPU backend)
and, on CUDA, on the framework's current stream (or an explicit stream=).
Without out= the result is allocated with the framework and on the device
of the inputs. Errors from the C++ core are raised as ValueError (shapes,
strides, values), TypeError (dtypes), NotImplementedError (no backend) or
RuntimeError (CUDA failures), with the core's message. With PyTorch
installed, the ops are also torch.ops.qgemm.* custom operators (torch.compile,
CUDA graphs). docs/python.md has the details.
"""

from . import _qgemm
from ._arrays import Fp8, fp8
from ._torch_ops import enabled as torch_ops_registered
from .calibration import Calibrator
from .checkpoints import Int4Weight, from_awq, from_gptq
from .gemm import azp_adj, scaled_mm, scaled_mm_azp, scaled_mm_workspace_bytes
from .fused import (add_rms_norm_quant, bias_gelu_quant, bias_gelu_quant_int32, layer_norm_quant,
                    layer_norm_quant_int32, rms_norm_quant, silu_and_mul_quant)
from .quant import dequantize, pack_int4, quantize, quantize_weight_int4, unpack_int4
from .weight_only import (weight_only_mm, weight_only_prepack, weight_only_prepacked_shape,
                          weight_only_workspace_bytes, weight_only_dense_workspace_bytes)
from .kv_cache import kv_cache_write, paged_attention_decode, paged_attention_workspace_bytes

__version__: str = _qgemm.version()


def built_with_cuda() -> bool:
    """True when the extension was built with the CUDA backend."""
    return _qgemm.built_with_cuda()


def cuda_archs() -> str:
    """CUDA architectures compiled in ("90a;80"), or "" without CUDA."""
    return _qgemm.cuda_archs()


def cuda_device_count() -> int:
    """CUDA devices visible to qgemm (0 without CUDA or without a GPU)."""
    return _qgemm.cuda_device_count()


def set_programmatic_dependent_launch(enabled: bool) -> None:
    """Turns programmatic dependent launch on or off for the launches that follow.

    On GPUs of compute capability 9.0+, qgemm's own kernels may then be
    scheduled while the previous kernel in the stream finishes; each waits for
    it before touching memory, so results are identical either way (only the
    launch gap shrinks). On by default; QGEMM_PDL=0 in the environment turns it
    off at load. Process-wide. See docs/api.md.
    """
    _qgemm.set_programmatic_dependent_launch(bool(enabled))


def programmatic_dependent_launch() -> bool:
    """Whether qgemm launches its kernels with programmatic dependent launch."""
    return _qgemm.programmatic_dependent_launch()


__all__ = [
    "Fp8", "fp8", "scaled_mm", "scaled_mm_azp", "scaled_mm_workspace_bytes", "azp_adj", "quantize", "dequantize",
    "quantize_weight_int4",
    "pack_int4", "unpack_int4", "rms_norm_quant", "add_rms_norm_quant", "layer_norm_quant", "layer_norm_quant_int32",
    "silu_and_mul_quant", "bias_gelu_quant", "bias_gelu_quant_int32", "weight_only_mm", "weight_only_prepack",
    "weight_only_workspace_bytes", "weight_only_dense_workspace_bytes", "weight_only_prepacked_shape",
    "Int4Weight", "from_awq", "from_gptq", "kv_cache_write", "paged_attention_decode", "paged_attention_workspace_bytes",
    "built_with_cuda", "cuda_archs", "cuda_device_count", "set_programmatic_dependent_launch",
    "programmatic_dependent_launch", "torch_ops_registered",
    "__version__",
]
