"""Calibration: a static per-tensor activation scale from calibration
batches (qgemm/calibration.h, docs/calibration.md).

    c = Calibrator()              # 2048 bins
    for batch in batches:
        c.observe(batch)          # any framework's array; CUDA ones are copied to the host
    s = c.scale("entropy", target="int8")   # or 'max', 'percentile', 'mse'
    q, _, _ = quantize(x, mode="static", scale=torch.tensor([s]))

observe() reads host memory: a CUDA array (torch, CuPy, JAX) is copied to
the host first — calibration is offline, and the copy costs little next to
the forward pass that produced the batch. (The C++ Calibrator takes CPU
tensors only.) target: 'int8' or 'fp8e4m3' (or the framework's dtype).
"""

from __future__ import annotations

from typing import Any, List

import numpy as np

from . import _arrays, _qgemm


def _on_host(x: Any) -> Any:
    """x if it is in host memory, else its copy there."""
    if _arrays.device_of(x) == "cpu":
        return x
    framework = _arrays.framework(x)
    if framework == "torch":
        return x.detach().cpu()
    if framework == "cupy":
        return x.get()
    return np.asarray(x)  # JAX and any other array NumPy can read


class Calibrator:
    """Max |x| and a histogram of |x| over every observed batch; the clipping
    threshold and scale each method picks from them."""

    def __init__(self, bins: int = 2048) -> None:
        self._c = _qgemm.Calibrator(bins)

    def observe(self, x: Any) -> None:
        """Adds the finite elements of x (fp32 / fp16 / bf16, any shape; a
        CUDA array is copied to the host first)."""
        self._c.observe(_arrays.to_arg(_on_host(x)))

    def threshold(self, method: str = "max", *, target: Any = "int8", percentile: float = 99.99) -> float:
        """The clipping threshold: 'max', 'percentile', 'mse' or 'entropy'."""
        return self._c.threshold(method, _arrays.canonical_dtype(target), percentile)

    def scale(self, method: str = "max", *, target: Any = "int8", percentile: float = 99.99) -> float:
        """threshold / qmax (127 for int8, 448 for fp8 e4m3): the scale of
        quantize(mode='static')."""
        return self._c.scale(method, _arrays.canonical_dtype(target), percentile)

    @property
    def amax(self) -> float:
        return self._c.amax

    @property
    def count(self) -> int:
        """Finite elements observed."""
        return self._c.count

    @property
    def range(self) -> float:
        """The histogram covers [0, range)."""
        return self._c.range

    @property
    def bins(self) -> List[int]:
        """Counts of |x| in [b, b + 1) · range / len(bins)."""
        return self._c.bins
