"""``python -m benchmarks``: run the benchmark suites, print a table, write JSON results."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from collections.abc import Callable
from pathlib import Path

from benchmarks import (
    gnmi_suite,
    inventory_suite,
    pipeline_suite,
    service_suite,
    sflow_suite,
    topology_suite,
)
from benchmarks.harness import Result, context, table
from simulator.ladder import LADDER

SUITES: dict[str, Callable[[list[str], int], list[Result]]] = {
    "topology": topology_suite.run,
    "inventory": inventory_suite.run,
    "gnmi": gnmi_suite.run,
    "sflow": sflow_suite.run,
    "exporter": service_suite.run,
    "pipeline": pipeline_suite.run,
}


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    line, results = context()
    print(line, flush=True)
    suites = [args.only] if args.only else list(SUITES)
    for name in suites:
        print(f"running {name} on {', '.join(args.sizes)} ...", file=sys.stderr, flush=True)
        results += SUITES[name](args.sizes, args.repeat)
    print(table(results))
    args.output.write_text(json.dumps([dataclasses.asdict(r) for r in results], indent=1) + "\n")
    print(f"wrote {len(results)} results to {args.output}", file=sys.stderr)
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument("--sizes", type=_sizes, default=["small", "medium"],
                        help=f"comma-separated ladder sizes ({', '.join(LADDER)}); "
                             "default: small,medium")
    parser.add_argument("--repeat", type=_positive, default=3,
                        help="runs per timed step, the median is reported (default: 3)")
    parser.add_argument("--output", type=Path, default=Path("bench-results.json"),
                        help="JSON results file (default: bench-results.json)")
    parser.add_argument("--only", choices=list(SUITES), help="run this suite only")
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
