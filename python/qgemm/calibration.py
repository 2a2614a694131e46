"""Calibration: a static per-tensor activation scale from calibration
batches (qgemm/calibration.h, docs/calibration.md).

    c = Calibrator()              # 2048 bins
    for batch in batches:
        c.observe(batch)          # CPU arrays: NumPy, or torch's x.cpu()
    s = c.scale("entropy", target="int8")   # or 'max', 'percentile', 'mse'
    q, _, _ = quantize(x, mode="static", scale=torch.tensor([s]))

observe() reads CPU memory; a CUDA tensor is a ValueError naming it (copy
the batch with .cpu() first). target: 'int8' or 'fp8e4m3' (or the
framework's dtype).
"""

from __future__ import annotations

from typing import Any, List

from . import _arrays, _qgemm


class Calibrator:
    """Max |x| and a histogram of |x| over every observed batch; the clipping
    threshold and scale each method picks from them."""

    def __init__(self, bins: int = 2048) -> None:
        self._c = _qgemm.Calibrator(bins)

    def observe(self, x: Any) -> None:
        """Adds the finite elements of x (fp32 / fp16 / bf16, any shape)."""
        self._c.observe(_arrays.to_arg(x))

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
