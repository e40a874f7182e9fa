"""Shared benchmark helpers: timing, median and percentiles, Result records, the table."""

from __future__ import annotations

import math
import os
import platform
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

T = TypeVar("T")

COLUMNS = ("benchmark", "size", "metric", "value", "unit")


@dataclass(frozen=True, slots=True)
class Result:
    """One measured number: ``metric`` of ``benchmark`` at fabric ``size``, in ``unit``."""

    benchmark: str
    size: str
    metric: str
    value: float
    unit: str


def timed(call: Callable[..., T], *args: Any) -> tuple[float, T]:
    """Seconds ``call(*args)`` took, and what it returned."""
    start = time.perf_counter()
    value = call(*args)
    return time.perf_counter() - start, value


def median_time(call: Callable[..., T], repeat: int, *args: Any) -> tuple[float, T]:
    """Median seconds of ``repeat`` calls of ``call(*args)``, and what the last returned."""
    runs = [timed(call, *args) for _ in range(repeat)]
    return median([seconds for seconds, _ in runs]), runs[-1][1]


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile of ``values``, interpolated between the closest ranks."""
    ordered = sorted(values)
    rank = (len(ordered) - 1) * q / 100
    low = math.floor(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def median(values: Sequence[float]) -> float:
    return percentile(values, 50)


def context() -> tuple[str, list[Result]]:
    """A line describing the machine, and the Results recording how busy it was."""
    load = os.getloadavg()
    line = (f"python {platform.python_version()}, {os.cpu_count()} CPUs, "
            f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    return line, [Result("context", "-", "cpu_count", os.cpu_count() or 0, "count"),
                  Result("context", "-", "loadavg_1m", load[0], "load")]


def format_value(value: float) -> str:
    """Three significant digits, without exponents for large numbers: 2.16, 0.155, 134,240."""
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:.3g}"


def table(results: Sequence[Result]) -> str:
    """``results`` as an aligned text table, values right-aligned."""
    rows = [COLUMNS] + [(r.benchmark, r.size, r.metric, format_value(r.value), r.unit)
                        for r in results]
    widths = [max(len(row[i]) for row in rows) for i in range(len(COLUMNS))]
    return "\n".join(
        "  ".join(cell.rjust(w) if i == 3 else cell.ljust(w)
                  for i, (cell, w) in enumerate(zip(row, widths, strict=True))).rstrip()
        for row in rows
    )
