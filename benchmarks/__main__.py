"""``python -m benchmarks``: run the benchmark suites, print a table, write JSON results.

With ``--only``, the suite's rows replace its rows in the results file and the other
suites' rows stay (:func:`~benchmarks.harness.merge`).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from collections.abc import Callable
from pathlib import Path

from benchmarks import (
    attribute_suite,
    gnmi_suite,
    inlet_suite,
    inventory_suite,
    pipeline_suite,
    service_suite,
    sflow_suite,
    shard_suite,
    topology_suite,
)
from benchmarks.harness import EVERY_SUITE, Result, context, merge, table
from simulator.ladder import LADDER

SUITES: dict[str, Callable[[list[str], int], list[Result]]] = {
    "topology": topology_suite.run,
    "inventory": inventory_suite.run,
    "gnmi": gnmi_suite.run,
    "sflow": sflow_suite.run,
    "inlet": inlet_suite.run,
    "attribute": attribute_suite.run,
    "exporter": service_suite.run,
    "pipeline": pipeline_suite.run,
}
X_LARGE: dict[str, Callable[[list[str], int], list[Result]]] = {"shards": shard_suite.run}
"""Suites run only when named (``--only``; ``make bench-xl``): minutes and gigabytes each."""


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    suites = [args.only] if args.only else list(SUITES)
    line, results = context(args.only or EVERY_SUITE)
    print(line, flush=True)
    for name in suites:
        print(f"running {name} on {', '.join(args.sizes)} ...", file=sys.stderr, flush=True)
        results += {**SUITES, **X_LARGE}[name](args.sizes, args.repeat)
    print(table(results))
    written = merge(read_results(args.output), results, suites, list(SUITES))
    args.output.write_text(json.dumps([dataclasses.asdict(r) for r in written], indent=1)
                           + "\n")
    print(f"wrote {len(results)} results to {args.output} ({len(written)} in all)",
          file=sys.stderr)
    return 0


def read_results(path: Path) -> list[Result]:
    """The results in ``path`` (none when it does not exist)."""
    if not path.exists():
        return []
    return [Result(**row) for row in json.loads(path.read_text())]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument("--sizes", type=_sizes, default=["small", "medium"],
                        help=f"comma-separated ladder sizes ({', '.join(LADDER)}); "
                             "default: small,medium")
    parser.add_argument("--repeat", type=_positive, default=3,
                        help="runs per timed step, the median is reported (default: 3)")
    parser.add_argument("--output", type=Path, default=Path("bench-results.json"),
                        help="JSON results file (default: bench-results.json)")
    parser.add_argument("--only", choices=[*SUITES, *X_LARGE],
                        help="run this suite only (shards: only this way, see make bench-xl)")
    return parser


def _sizes(text: str) -> list[str]:
    sizes = [s.strip() for s in text.split(",") if s.strip()]
    unknown = [s for s in sizes if s not in LADDER]
    if unknown or not sizes:
        raise argparse.ArgumentTypeError(
            f"unknown size(s) {', '.join(unknown) or '(none)'}; sizes: {', '.join(LADDER)}")
    return sizes


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


if __name__ == "__main__":
    sys.exit(main())
