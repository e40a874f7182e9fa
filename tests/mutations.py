"""Mutations of the hotspot thresholds, the share interval and the counter-rate,
counter-timeline and interval-rate logic that the tests must catch.

``python -m tests.mutations`` copies the project to a temporary folder, applies each
mutation there in turn (one at a time, the original restored before the next), runs the
tests of the mutated module with its doctests, and prints a table: the mutation, where it
is, and how many tests failed with the first of them. A mutation that no test catches is
``SURVIVED`` and makes the exit status 1. ``-k TEXT`` runs only the mutations whose
description contains TEXT.

A mutation of the Rust crate (``wire/src``) rebuilds the copy's extension
(``correlator/_wire.abi3.so``) before its tests, with cargo in a target folder kept
across the mutations (the first build takes about a minute, the next ones seconds), and
puts the original back after.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HOTSPOTS = "correlator/attribution/hotspots.py"
RATES = "correlator/collect/rates.py"
SHARE = "wire/src/share.rs"
TIMELINE = "wire/src/timeline.rs"
INTERVAL_RATES = "wire/src/interval_rates.rs"
TESTS = {HOTSPOTS: ("tests/correlator/attribution", HOTSPOTS),
         RATES: ("tests/correlator/collect/test_rates.py", RATES),
         SHARE: ("tests/correlator/attribution", "correlator/attribution/estimate.py"),
         TIMELINE: ("tests/correlator/collect/test_timeline.py",
                    "tests/correlator/collect/test_timeline_oracle.py",
                    "correlator/collect/timeline.py"),
         INTERVAL_RATES: ("tests/correlator/collect/test_interval_rates.py",
                          "tests/correlator/collect/test_interval_rates_oracle.py",
                          "correlator/collect/interval_rates.py")}


@dataclass(frozen=True)
class Mutation:
    """``before`` (found exactly once in ``path``) replaced by ``after``."""

    path: str
    before: str
    after: str
    what: str


MUTATIONS = (
    Mutation(HOTSPOTS, "if not getattr(self, key) > 0:", "if not getattr(self, key) >= 0:",
             "validate: threshold > 0 -> >= 0"),
    Mutation(HOTSPOTS, "if self.intervals < 1 or", "if self.intervals <= 1 or",
             "validate: intervals < 1 -> <= 1"),
    Mutation(HOTSPOTS, "or self.culprits < 1:", "or self.culprits <= 1:",
             "validate: culprits < 1 -> <= 1"),
    Mutation(HOTSPOTS, '"intervals" if self.intervals < 1 else', '"intervals" if '
             'self.intervals <= 1 else', "validate: the key named, intervals < 1 -> <= 1"),
    Mutation(HOTSPOTS, "found[k] >= bounds[k]", "found[k] > bounds[k]",
             "hot_kinds: signal >= threshold -> >"),
    Mutation(HOTSPOTS, "link.samples > best.samples", "link.samples >= best.samples",
             "story: more samples > best -> >="),
    Mutation(HOTSPOTS, "streak.count >= self.limits.intervals",
             "streak.count > self.limits.intervals", "streak: count >= intervals -> >"),
    Mutation(HOTSPOTS, "max(streak.peak.values()) >= 2", "max(streak.peak.values()) > 2",
             "severity: peak >= 2x -> >"),
    Mutation(HOTSPOTS, "while cut < min(", "while cut <= min(",
             "_split: cut < min(named, culprits) -> <="),
    Mutation(HOTSPOTS, "and total < 0.5:", "and total <= 0.5:", "_split: total < 0.5 -> <="),
    Mutation(HOTSPOTS, "named[0].share < self.limits.dominance",
             "named[0].share <= self.limits.dominance", "_verdict: share < dominance -> <="),
    Mutation(HOTSPOTS, "s.share >= self.limits.neighbour_share",
             "s.share > self.limits.neighbour_share", "_verdict: share >= neighbour_share -> >"),
    Mutation(HOTSPOTS, "known[0] <= other_known[1]", "known[0] < other_known[1]",
             "cable_utilization: ranges touching agree, low <= other's high -> <"),
    Mutation(HOTSPOTS, "other_known[0] <= known[1]", "other_known[0] < known[1]",
             "cable_utilization: ranges touching agree, other's low <= high -> <"),
    Mutation(RATES, "delta = after + (1 << bits) - before",
             "delta = after + (1 << bits) - before - 1", "wrap: one short of 2**bits"),
    Mutation(RATES, "delta = after + (1 << bits) - before",
             "delta = after + (1 << bits) - before + 1", "wrap: one past 2**bits"),
    Mutation(RATES, "delta = after + (1 << bits) - before", "delta = after - before",
             "wrap: not added"),
    Mutation(RATES, "elif bits >= 64:", "elif bits > 64:", "64-bit reset: bits >= 64 -> >"),
    Mutation(RATES, "elif bits >= 64:", "elif False:", "64-bit reset: branch removed"),
    Mutation(RATES, "limit >= 1 << bits", "limit > 1 << bits",
             "ambiguous: limit >= 2**bits -> >"),
    Mutation(RATES, "and delta > limit:", "and delta >= limit:",
             "implausible: delta > limit -> >="),
    Mutation(RATES, "if delta > limit:  # faster", "if delta >= limit:  # faster",
             "reset: a wrap beyond line rate, > -> >="),
    Mutation(RATES, "if delta > limit:  # faster", "if False:  # faster",
             "reset: a wrap beyond line rate taken as a wrap"),
    Mutation(RATES, "    elif limit is None:\n        return Skip.AMBIGUOUS",
             "    elif False:\n        return Skip.AMBIGUOUS",
             "ambiguous: a narrow fall at unknown speed taken as a wrap"),
    Mutation(RATES, "if reading.at > now + skew_s:", "if reading.at > now + 2 * skew_s:",
             "screen: the allowed skew doubled"),
    Mutation(RATES, "if not math.isfinite(reading.at):", "if False:",
             "screen: a reading at NaN kept"),
    Mutation(RATES, "span > max_gap", "span >= max_gap", "gap: span > max_gap -> >="),
    Mutation(RATES, "now.uptime_s < span", "now.uptime_s <= span",
             "reboot: uptime < span -> <="),
    Mutation(RATES, "now.uptime_s < last.uptime_s", "now.uptime_s <= last.uptime_s",
             "reboot: uptime < previous uptime -> <="),
    Mutation(RATES, "if after >= before:", "if after > before:",
             "delta: after >= before -> >"),
    Mutation(RATES, "0 <= v < 1 << reading.width(n)", "0 <= v <= 1 << reading.width(n)",
             "valid: v < 2**bits -> <="),
    Mutation(SHARE, "let half = Z95 * max(0.0, ratio).sqrt();", "let half = 0.0;",
             "share interval: the count interval alone"),
    Mutation(SHARE, "let (low, mut high) = (low * scale, high * scale);",
             "let (low, mut high) = (share, share);", "share interval: the ratio interval alone"),
    Mutation(SHARE, "if c < FEW_SAMPLES && share > 0.0 {", "if false {",
             "share interval: no log-scale bound with few samples"),
    Mutation(SHARE, "if c < FEW_SAMPLES && share > 0.0 {", "if c <= FEW_SAMPLES && share > 0.0 {",
             "share interval: few samples < FEW_SAMPLES -> <="),
    Mutation(SHARE, "if c < SCANT_SAMPLES && share > 0.0 {", "if false {",
             "share interval: no missed-class bound"),
    Mutation(SHARE, "if c < SCANT_SAMPLES && share > 0.0 {",
             "if c <= SCANT_SAMPLES && share > 0.0 {",
             "share interval: scant samples < SCANT_SAMPLES -> <="),
    Mutation(SHARE, "let packets = wilson(c, n, COUNT_Z).1 * float(n) / float(c);",
             "let packets = 1.0;", "share interval: missed-class packet share at its estimate"),
    Mutation(SHARE, "max(0.0, large - 1.0)", "max(0.0, large)",
             "share interval: missed class counted on top of the group's mean"),
    Mutation(SHARE, "pow(1.0 - share, 2.0) * float(group.variance)",
             "(1.0 - share) * float(group.variance)", "share interval: (1 - R) not squared"),
    Mutation(SHARE, "share * share * rest)", "share * share * float(total.variance))",
             "share interval: the others' variance"),
    Mutation(SHARE, "let scale = share * float(n) / float(c);", "let scale = 1.0;",
             "share interval: count interval not scaled"),
    Mutation(SHARE, "Z95 * float(group.variance).sqrt() }", "Z95 * float(group.variance) }",
             "estimate alone: its standard error"),
    Mutation(SHARE, "counted.low = min(counted.low, counted.share_low * least);", "",
             "shares: the counters' least bytes not stretching the bounds"),
    Mutation(SHARE, "if !counters.disputed {", "if true {",
             "shares: disputed counters apportioned as if agreed"),
    Mutation(SHARE, "Some(counted) if u128::from(samples) >= FEW_SAMPLES",
             "Some(counted) if u128::from(samples) > FEW_SAMPLES",
             "counter check: samples >= FEW_SAMPLES -> >"),
    Mutation(SHARE, "if (counted - float(estimated)).abs() > Z95 * float(variance).sqrt() {",
             "if (counted - float(estimated)).abs() > 2.0 * Z95 * float(variance).sqrt() {",
             "counter check: a bound twice as wide"),
    Mutation(TIMELINE, "Some(delta)", "Some(after)", "timeline: a wrap read as a reset"),
    Mutation(TIMELINE, "return Some(after); // a 64-bit counter's fall is a reset",
             "return None;", "timeline: a reset read as unknown"),
    Mutation(TIMELINE, "Some(after) // faster than line rate: a reset", "None",
             "timeline: a wrap beyond line rate read as unknown"),
    Mutation(TIMELINE, "rate * (at - self.since + self.period.unwrap_or(0.0))",
             "rate * (at - self.held)", "timeline: wrap judged over the last read only"),
    Mutation(TIMELINE, "self.unknown.iter().any(|&(a, b)| a < end && start < b)", "false",
             "timeline: an unknown step counted as nothing"),
    Mutation(TIMELINE, "let changed = if self.reads > 1 && !self.fresh { (self.held + at) / 2.0 }"
             " else { at };", "let changed = at;", "timeline: a stale change dated when read"),
    Mutation(TIMELINE, "let changed = if self.reads > 1 && !self.fresh { (self.held + at) / 2.0 }"
             " else { at };", "let changed = (self.held + at) / 2.0;",
             "timeline: a change after one read dated halfway"),
    Mutation(TIMELINE, "if self.held - period <= self.last_time() {", "if true {",
             "timeline: no hold of a quiet value"),
    Mutation(TIMELINE, "if self.fresh || self.values[n - 1] == self.values[0] {",
             "if self.values[n - 1] == self.values[0] {",
             "timeline: a device-dated value held like a stale one"),
    Mutation(TIMELINE, "if self.fresh || self.values[n - 1] == self.values[0] {",
             "if self.fresh {", "timeline: a value never seen to move held like a stale one"),
    Mutation(TIMELINE, "value = max(value, self.pins[i - 1].1);", "",
             "timeline: a value given below one given for an earlier instant"),
    Mutation(TIMELINE, "if 1 < i && i < times.len() - 1 {", "if false {",
             "timeline: steady through every gap (no kink)"),
    Mutation(TIMELINE, "            self.restarted = false;\n            return Some(after);",
             "            self.restarted = false;", "timeline: a restart read as a wrap"),
    Mutation(TIMELINE, "self.known(moment, self.cumulative, at - changed);",
             "self.known(moment, self.cumulative, 0.0);",
             "timeline: a stale change's bounds blind to how well it is dated"),
    Mutation(INTERVAL_RATES, "rebooted || cleared", "cleared",
             "interval rates: a reboot not restarting the counters"),
    Mutation(INTERVAL_RATES, "rebooted || cleared", "rebooted",
             "interval rates: an operator clear not restarting the counters"),
    Mutation(INTERVAL_RATES, "if rate * span * slack >= 2f64.powi(bits as i32) {", "if false {",
             "interval rates: a narrow counter read too seldom kept"),
    Mutation(INTERVAL_RATES, "if limit.is_some_and(|limit| increase > limit) {", "if false {",
             "interval rates: an implausible increase kept"),
    Mutation(INTERVAL_RATES, "found.provisional |= timeline.covered_until < end;", "",
             "interval rates: carried-on rates not provisional"),
    Mutation(INTERVAL_RATES, ".or(last.and_then(|last| last.speed))", "",
             "interval rates: the last known speed not carried on"),
)


def line_of(text: str, snippet: str) -> int:
    return text[:text.index(snippet)].count("\n") + 1


def run(copy: Path, mutation: Mutation) -> tuple[int, list[str]]:
    """Apply ``mutation`` in ``copy``, run its tests, restore; (line, failed test ids)."""
    target = copy / mutation.path
    original = target.read_text()
    if original.count(mutation.before) != 1:
        raise SystemExit(f"{mutation.path}: {mutation.before!r} found "
                         f"{original.count(mutation.before)} times")
    target.write_text(original.replace(mutation.before, mutation.after))
    try:
        if mutation.path.endswith(".rs"):
            build_extension(copy)
        result = subprocess.run(
            [sys.executable, "-m", "pytest", *TESTS[mutation.path], "-q", "--tb=no", "-rfE",
             "-p", "no:cacheprovider"], cwd=copy, capture_output=True, text=True)
    finally:
        target.write_text(original)
        if mutation.path.endswith(".rs"):
            build_extension(copy)
    failed = re.findall(r"^(?:FAILED|ERROR) (\S+?\[.*?\]|\S+)", result.stdout,
                        re.MULTILINE)  # a test id, with its parameters (which may hold " - ")
    if result.returncode not in (0, 1) and not failed:
        failed = [f"pytest exited {result.returncode}"]
    return line_of(original, mutation.before), failed


def build_extension(copy: Path) -> None:
    """Build the copy's crate as its Python extension, as maturin does (pyproject.toml's
    features), into ``copy/correlator``."""
    subprocess.run(["cargo", "build", "--quiet", "--release", "--features",
                    "python,pyo3/extension-module", "--manifest-path",
                    str(copy / "wire/Cargo.toml")], check=True,
                   env={**os.environ, "CARGO_TARGET_DIR": str(copy / "target"),
                        "RUSTFLAGS": "-Awarnings"})  # a mutant leaves values unused
    shutil.copyfile(copy / "target/release/libfabcorr_wire.so",
                    copy / "correlator/_wire.abi3.so")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-k", default="", help="only mutations whose description has this")
    args = parser.parse_args(argv)
    chosen = [m for m in MUTATIONS if args.k in m.what]
    survived = 0
    with tempfile.TemporaryDirectory(prefix="fabcorr-mutations-") as folder:
        copy = Path(folder) / "project"
        shutil.copytree(ROOT, copy, ignore=shutil.ignore_patterns(
            ".git", ".venv", "out", "__pycache__", "*.egg-info", "target"))
        where = subprocess.run([sys.executable, "-c", "import correlator; "
                                "print(correlator.__file__)"], cwd=copy, capture_output=True,
                               text=True, check=True).stdout.strip()
        if not where.startswith(str(copy)):
            raise SystemExit(f"the copy's tests would import {where}, not the copy")
        for mutation in chosen:
            line, failed = run(copy, mutation)
            survived += not failed
            caught = f"{len(failed)} failed, first {failed[0]}" if failed else "SURVIVED"
            print(f"{mutation.what:48} {mutation.path}:{line:<4} {caught}", flush=True)
    print(f"{len(chosen) - survived} of {len(chosen)} mutations caught")
    return 1 if survived else 0


if __name__ == "__main__":
    sys.exit(main())
