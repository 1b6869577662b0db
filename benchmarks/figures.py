"""How a figure is made from the runs of an item and written in results.md: medians, the 90th percentile,
"faster"/"slower" for a ratio, milliseconds, kilobytes."""

from __future__ import annotations

import statistics


def median(xs: list[float]) -> float:
    return float(statistics.median(xs))


def p90(xs: list[float]) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(round(0.9 * (len(s) - 1))))]


def faster(ratio: float) -> str:
    """'2.10× faster' for a ratio (baseline time / our time) above 1, '1.30× slower' below."""
    return f"{ratio:.2f}× faster" if ratio >= 1 else f"{1 / ratio:.2f}× slower"


def ms(seconds: float) -> float:
    return 1000.0 * seconds


def kb(n: float) -> str:
    return f"{n / 1e3:.0f} kB" if n < 1e6 else f"{n / 1e6:.1f} MB"
