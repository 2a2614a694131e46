import numpy as np
import pytest


@pytest.fixture
def rng(request):
    # Seeded per test so failures reproduce.
    return np.random.default_rng(abs(hash(request.node.name)) % (2**32))


def fp8_decode(codes: np.ndarray) -> np.ndarray:
    """fp8 e4m3fn codes (uint8) → float64, by the format's definition."""
    c = codes.astype(np.int64)
    sign = np.where(c & 0x80, -1.0, 1.0)
    exponent = (c >> 3) & 0xF
    mantissa = c & 0x7
    value = np.where(exponent == 0, mantissa * 2.0**-9, (1 + mantissa / 8.0) * 2.0 ** (exponent - 7))
    return sign * value


def random_fp8_codes(rng, shape, max_code=0x5F) -> np.ndarray:
    """Random finite fp8 codes (magnitudes up to code `max_code`), random signs."""
    codes = rng.integers(0, max_code + 1, shape).astype(np.uint8)
    return codes | (rng.integers(0, 2, shape).astype(np.uint8) << 7)
