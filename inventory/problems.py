"""Problems: things found wrong or incomplete while reading sources or building the graph.

A problem is reported, counted and kept beside the result; it never stops the pipeline.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Problem:
    """One finding: a short machine-readable ``kind``, the ``subject`` it is about, details."""

    kind: str
    subject: str
    detail: str = ""
