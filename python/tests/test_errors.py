"""C++ errors reach Python as ValueError / TypeError (NotImplementedError,
RuntimeError) with the C++ message unchanged; argument-conversion errors read
the same way."""

import numpy as np
import pytest

import qgemm


@pytest.fixture
def problem(rng):
    a = rng.integers(-128, 128, (4, 8), dtype=np.int8)
    w = rng.integers(-128, 128, (6, 8), dtype=np.int8)
    return a, w, np.ones(1, np.float32), np.ones(1, np.float32)


def test_shape_errors_are_value_errors_with_the_cpp_message(problem):
    a, w, sa, sb = problem
    with pytest.raises(ValueError) as info:
        qgemm.scaled_mm(a, w.T, np.ones(3, np.float32), sb, out_dtype="fp32")
    assert str(info.value) == ("scale_a: expected 1 or M=4 elements shaped [1], [1, 1], [M=4] or [M=4, 1], "
                               "got shape [3] (3 elements)")
    with pytest.raises(ValueError, match=r"^b: expected a column-major matrix"):
        qgemm.scaled_mm(a, np.ascontiguousarray(w.T), sa, sb, out_dtype="fp32")
    with pytest.raises(ValueError, match=r"^b: expected shape \[K=8, N=5\], got \[8, 6\]$"):  # N read from out
        qgemm.scaled_mm(a, w.T, sa, sb, out=np.zeros((4, 5), np.float32))


def test_dtype_errors_are_type_errors(problem):
    a, w, sa, sb = problem
    with pytest.raises(TypeError, match=r"^scale_b: expected dtype fp32, got fp16$"):
        qgemm.scaled_mm(a, w.T, sa, np.ones(1, np.float16), out_dtype="fp32")
    with pytest.raises(TypeError, match=r"^out: expected dtype bf16, fp16 or fp32, got int32$"):
        qgemm.scaled_mm(a, w.T, sa, sb, out=np.zeros((4, 6), np.int32))
    with pytest.raises(TypeError, match=r"^a: "):
        qgemm.scaled_mm(a.astype(np.float32), w.T, sa, sb, out_dtype="fp32")


def test_quant_errors(rng):
    x = rng.standard_normal((2, 10)).astype(np.float32)
    with pytest.raises(ValueError, match=r"group_size"):
        qgemm.quantize(x, mode="per_group", group_size=4)
    with pytest.raises(ValueError, match=r"^mode: expected 'static', 'per_token' or 'per_group', got 'tensor'$"):
        qgemm.quantize(x, mode="tensor")
    with pytest.raises(TypeError, match=r"^in: "):
        qgemm.quantize(x.astype(np.int32))
    with pytest.raises(ValueError, match=r"^values: element \[0, 1\] = 16 does not fit in 4 bits"):
        qgemm.pack_int4(np.array([[0, 16]], np.uint8))


def test_argument_conversion_errors(problem):
    a, w, sa, sb = problem
    with pytest.raises(TypeError, match=r"^a: expected an array supporting DLPack"):
        qgemm.scaled_mm([[1]], w.T, sa, sb, out_dtype="fp32")
    with pytest.raises(TypeError, match=r"^scale_a: expected an array supporting DLPack"):
        qgemm.scaled_mm(a, w.T, 1.0, sb, out_dtype="fp32")
    with pytest.raises(TypeError, match=r"^a: expected dtype int8, uint8, int32, int64, fp8e4m3, fp16, bf16 or fp32, got"):
        qgemm.scaled_mm(a.astype(np.int16), w.T, sa, sb, out_dtype="fp32")
    with pytest.raises(ValueError, match=r"^a: expected rank <= 4, got 5$"):
        qgemm.scaled_mm(np.zeros((1,) * 5, np.int8), w.T, sa, sb, out=np.zeros((1, 6), np.float32))
    with pytest.raises(TypeError, match=r"bfloat16"):
        qgemm.scaled_mm(a, w.T, sa, sb)  # bf16 by default: NumPy has none
    with pytest.raises(TypeError, match=r"^dtype: expected one of"):
        qgemm.quantize(np.zeros((1, 2), np.float32), dtype="int4")
    with pytest.raises(TypeError, match=r"^stream: expected None or an int"):
        qgemm._qgemm.azp_adj(out=np.zeros(6, np.int32), b=w.T, stream="default")
    with pytest.raises(TypeError, match=r"^a: cannot view int8 as fp32 \(element sizes differ\)$"):
        qgemm._qgemm.scaled_mm(out=np.zeros((4, 6), np.float32), a=(a, "fp32"), b=w.T, scale_a=sa, scale_b=sb)


def test_error_kinds_map_to_exception_types():
    # kNotImplemented / kBackend need a CUDA tensor or a GPU failure; the
    # translation table is checked through the extension's own error path.
    assert issubclass(NotImplementedError, RuntimeError)
    with pytest.raises(ValueError, match=r"^out: a tensor is required, got None$"):
        qgemm._qgemm.azp_adj(out=None, b=np.zeros((2, 2), np.int8).T)
