"""Shared benchmark helpers: timing, median and percentiles, Result records, the table."""

from __future__ import annotations

import gc
import math
import os
import platform
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar, cast

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
    """Median seconds of ``repeat`` calls of ``call(*args)``, and what the last returned;
    each earlier result is dropped and its cycles collected before the next call, so a
    run holds one result at a time (three x-large fabrics held together: 7.9 GB)."""
    times, result = [], None
    for run in range(repeat):
        if run:
            result = None
            gc.collect()
        seconds, result = timed(call, *args)
        times.append(seconds)
    return median(times), cast(T, result)


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile of ``values``, interpolated between the closest ranks."""
    ordered = sorted(values)
    rank = (len(ordered) - 1) * q / 100
    low = math.floor(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def median(values: Sequence[float]) -> float:
    return percentile(values, 50)


CONTEXT = "context"
EVERY_SUITE = "-"
"""The ``size`` of the context rows of a run of every suite; a run of some suites names
them there instead (``sflow,pipeline``)."""


def context(suites: str = EVERY_SUITE) -> tuple[str, list[Result]]:
    """A line describing the machine, and the Results recording how busy it was while
    ``suites`` ran and how fast it was (:func:`machine_speed`)."""
    load, speed = os.getloadavg(), machine_speed()
    line = (f"python {platform.python_version()}, {os.cpu_count()} CPUs, "
            f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}, "
            f"reference loop {speed:.2f} s")
    return line, [Result(CONTEXT, suites, "cpu_count", os.cpu_count() or 0, "count"),
                  Result(CONTEXT, suites, "loadavg_1m", load[0], "load"),
                  Result(CONTEXT, suites, "reference_loop_cpu_s", speed, "s")]


def machine_speed() -> float:
    """CPU seconds of a fixed loop of 20 million Python additions (the median of 3): a
    virtual machine's CPU second is worth less while the host is busy (the same command
    took 1.6 times the CPU seconds in one hour here), so every figure of a run is read
    next to this one (0.46 s on a quiet machine here)."""
    def once() -> float:
        start, total = time.process_time(), 0
        for number in range(20_000_000):
            total += number
        return time.process_time() - start
    return median([once() for _ in range(3)])


def merge(old: Sequence[Result], new: Sequence[Result], suites: Sequence[str],
          every: Sequence[str]) -> list[Result]:
    """The results file after a run of ``suites`` (of ``every`` suite; a suite's name is
    its rows' benchmark): the rows of other suites stay, those of ``suites`` are replaced
    by ``new``. A context row goes when every suite it describes ran again (its size
    names them; ``-``: every suite).

    >>> old = [Result("context", "-", "loadavg_1m", 1.0, "load"),
    ...        Result("a", "s", "x", 1.0, "s"), Result("b", "s", "y", 2.0, "s")]
    >>> new = [Result("context", "b", "loadavg_1m", 0.5, "load"),
    ...        Result("b", "s", "y", 3.0, "s")]
    >>> [(r.benchmark, r.size, r.value) for r in merge(old, new, ["b"], ["a", "b"])]
    [('context', '-', 1.0), ('a', 's', 1.0), ('context', 'b', 0.5), ('b', 's', 3.0)]
    """
    ran = set(suites)

    def replaced(row: Result) -> bool:
        if row.benchmark != CONTEXT:
            return row.benchmark in ran
        described = every if row.size == EVERY_SUITE else row.size.split(",")
        return set(described) <= ran

    return [r for r in old if not replaced(r)] + list(new)


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
