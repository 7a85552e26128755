"""Small, dependency-free summary statistics shared by the benchmark scripts.

Benchmarks on shared or virtualised machines are noisy, so scripts report
robust order statistics (median, 10th and 90th percentile) rather than means.
Everything here is plain standard-library Python so that it can be imported by
an orchestrating process without pulling in numpy or the package under test.

Typical use::

    from _stats import summarize, ratio

    s = summarize([1.2, 1.1, 1.3, 1.0])
    s.median, s.p10, s.p90  # floats
    s.to_dict()  # JSON-ready mapping
    ratio(s.median, other.median)

Percentiles use linear interpolation between closest ranks (the same
definition as ``numpy.percentile``'s default ``"linear"`` method and
``statistics.quantiles(..., method="inclusive")``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass

__all__ = [
    "Summary",
    "median",
    "percentile",
    "ratio",
    "summarize",
]


def _clean(samples: Iterable[float]) -> list[float]:
    """Return sorted float samples; reject empty or non-finite input."""
    values = sorted(float(x) for x in samples)
    if not values:
        raise ValueError("no samples")
    if not all(math.isfinite(x) for x in values):
        raise ValueError("samples contain NaN or infinity")
    return values


def _percentile_sorted(values: Sequence[float], q: float) -> float:
    """Linear-interpolated percentile ``q`` (0..100) of already sorted ``values``."""
    if not 0.0 <= q <= 100.0:
        raise ValueError(f"percentile must be within [0, 100], got {q}")
    pos = (len(values) - 1) * q / 100.0
    lo = math.floor(pos)
    hi = min(lo + 1, len(values) - 1)
    frac = pos - lo
    return values[lo] + (values[hi] - values[lo]) * frac


def percentile(samples: Iterable[float], q: float) -> float:
    """Return the ``q``-th percentile (``q`` in 0..100) of ``samples``.

    Uses linear interpolation between closest ranks, so ``percentile(x, 50)``
    equals :func:`median`. Raises ``ValueError`` for empty or non-finite input.
    """
    return _percentile_sorted(_clean(samples), q)


def median(samples: Iterable[float]) -> float:
    """Return the median of ``samples`` (mean of the middle two if even)."""
    return _percentile_sorted(_clean(samples), 50.0)


def ratio(numerator: float, denominator: float) -> float:
    """Return ``numerator / denominator``; ``nan`` when the denominator is zero."""
    if denominator == 0:
        return math.nan
    return numerator / denominator


@dataclass(frozen=True)
class Summary:
    """Order statistics of one measured series (all in the samples' unit)."""

    n: int
    median: float
    p10: float
    p90: float
    min: float
    max: float
    mean: float

    def to_dict(self, ndigits: int | None = None) -> dict[str, float | int]:
        """Return a JSON-ready dict, floats optionally rounded to ``ndigits``."""
        out: dict[str, float | int] = asdict(self)
        if ndigits is not None:
            out = {k: (v if isinstance(v, int) else round(v, ndigits)) for k, v in out.items()}
        return out

    def scaled(self, factor: float) -> Summary:
        """Return the summary with every value multiplied by ``factor``."""
        return Summary(
            n=self.n,
            median=self.median * factor,
            p10=self.p10 * factor,
            p90=self.p90 * factor,
            min=self.min * factor,
            max=self.max * factor,
            mean=self.mean * factor,
        )


def summarize(samples: Iterable[float]) -> Summary:
    """Summarise ``samples``: median, p10, p90, min, max and mean."""
    values = _clean(samples)
    return Summary(
        n=len(values),
        median=_percentile_sorted(values, 50.0),
        p10=_percentile_sorted(values, 10.0),
        p90=_percentile_sorted(values, 90.0),
        min=values[0],
        max=values[-1],
        mean=math.fsum(values) / len(values),
    )
