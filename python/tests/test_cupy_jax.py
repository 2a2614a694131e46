"""CuPy and JAX arrays go in zero-copy over DLPack (GPU only: both are
installed where a GPU is). Results are compared with the same op on NumPy
arrays through the CPU backend."""

import os

import numpy as np
import pytest

import qgemm

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
cupy = pytest.importorskip("cupy")

needs_gpu = pytest.mark.skipif(not qgemm.built_with_cuda() or qgemm.cuda_device_count() == 0,
                               reason="needs a CUDA GPU and a CUDA build of qgemm")


@needs_gpu
def test_cupy_scaled_mm_matches_the_cpu_backend():
    rng = np.random.default_rng(5)
    a = rng.integers(-128, 128, (33, 64), dtype=np.int8)
    w = rng.integers(-128, 128, (48, 64), dtype=np.int8)
    sa = rng.uniform(1e-3, 1e-2, (33, 1)).astype(np.float32)
    sb = rng.uniform(1e-3, 1e-2, 48).astype(np.float32)
    out = qgemm.scaled_mm(cupy.asarray(a), cupy.asarray(w).T, cupy.asarray(sa), cupy.asarray(sb), out_dtype="fp16")
    assert isinstance(out, cupy.ndarray) and out.dtype == np.float16
    cupy.cuda.get_current_stream().synchronize()
    expected = qgemm.scaled_mm(a, w.T, sa, sb, out_dtype="fp16")
    np.testing.assert_array_equal(cupy.asnumpy(out), expected)  # int8: exact accumulator, same epilogue


@needs_gpu
def test_cupy_quantize_is_bit_identical_to_numpy():
    x = np.random.default_rng(6).standard_normal((17, 256)).astype(np.float32)
    q, scale, _ = qgemm.quantize(cupy.asarray(x))
    cupy.cuda.get_current_stream().synchronize()
    q_ref, scale_ref, _ = qgemm.quantize(x)
    np.testing.assert_array_equal(cupy.asnumpy(q), q_ref)
    np.testing.assert_array_equal(cupy.asnumpy(scale), scale_ref)


@needs_gpu
def test_jax_inputs_with_cupy_outputs():
    jax = pytest.importorskip("jax")
    gpus = [d for d in jax.devices() if d.platform == "gpu"]
    if not gpus:
        pytest.skip("JAX sees no GPU")
    x = np.random.default_rng(7).standard_normal((9, 128)).astype(np.float32)
    x_jax = jax.device_put(x, gpus[0]).block_until_ready()
    q = cupy.empty((9, 128), dtype=np.int8)
    scale = cupy.empty((9, 1), dtype=np.float32)
    qgemm.quantize(x_jax, out=q, scale=scale)
    cupy.cuda.get_current_stream().synchronize()
    q_ref, scale_ref, _ = qgemm.quantize(x)
    np.testing.assert_array_equal(cupy.asnumpy(q), q_ref)
    np.testing.assert_array_equal(cupy.asnumpy(scale).reshape(-1), np.asarray(scale_ref).reshape(-1))
    with pytest.raises(TypeError, match="cannot allocate"):
        qgemm.quantize(x_jax)  # JAX arrays are immutable: outputs need out=
