"""``python -m benchmarks --only X`` merges its rows into the results file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks import __main__ as bench
from benchmarks.harness import Result


def _rows(path: Path) -> list[tuple[str, str, str, float]]:
    return [(r["benchmark"], r["size"], r["metric"], r["value"])
            for r in json.loads(path.read_text())]


def test_only_replaces_its_suite_rows_and_keeps_the_others(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    runs = {"sflow": 0}

    def sflow(sizes: list[str], repeat: int) -> list[Result]:
        runs["sflow"] += 1
        return [Result("sflow", "10k-ips", "rate", 100.0 * runs["sflow"], "samples/s")]

    def pipeline(sizes: list[str], repeat: int) -> list[Result]:
        return [Result("pipeline", "medium", "cpu_s", 1.5, "s")]

    monkeypatch.setattr(bench, "SUITES", {"sflow": sflow, "pipeline": pipeline})
    monkeypatch.setattr(bench, "context", lambda suites: (
        "machine", [Result("context", suites, "loadavg_1m", 0.25, "load")]))
    output = tmp_path / "bench-results.json"
    assert bench.main(["--output", str(output)]) == 0
    assert _rows(output) == [("context", "-", "loadavg_1m", 0.25),
                             ("sflow", "10k-ips", "rate", 100.0),
                             ("pipeline", "medium", "cpu_s", 1.5)]
    assert bench.main(["--output", str(output), "--only", "sflow"]) == 0
    assert _rows(output) == [("context", "-", "loadavg_1m", 0.25),
                             ("pipeline", "medium", "cpu_s", 1.5),
                             ("context", "sflow", "loadavg_1m", 0.25),
                             ("sflow", "10k-ips", "rate", 200.0)]
    assert bench.main(["--output", str(output), "--only", "sflow"]) == 0
    assert _rows(output) == [("context", "-", "loadavg_1m", 0.25),
                             ("pipeline", "medium", "cpu_s", 1.5),
                             ("context", "sflow", "loadavg_1m", 0.25),
                             ("sflow", "10k-ips", "rate", 300.0)]
    assert bench.main(["--output", str(output)]) == 0  # every suite: the file anew
    assert _rows(output) == [("context", "-", "loadavg_1m", 0.25),
                             ("sflow", "10k-ips", "rate", 400.0),
                             ("pipeline", "medium", "cpu_s", 1.5)]


def test_a_missing_results_file_is_written(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bench, "SUITES", {"sflow": lambda sizes, repeat: []})
    output = tmp_path / "none-yet.json"
    assert bench.main(["--output", str(output), "--only", "sflow"]) == 0
    rows = [(r["benchmark"], r["metric"]) for r in json.loads(output.read_text())]
    assert rows == [("context", "cpu_count"), ("context", "loadavg_1m"),
                    ("context", "reference_loop_cpu_s")]


def test_an_x_large_suite_runs_only_when_named(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    ran: list[str] = []
    monkeypatch.setattr(bench, "SUITES", {"sflow": lambda sizes, repeat: ran.append("sflow")
                                          or []})
    monkeypatch.setattr(bench, "X_LARGE", {"shards": lambda sizes, repeat: ran.append("shards")
                                           or [Result("shards", "x-large", "n", 12, "count")]})
    output = tmp_path / "results.json"
    assert bench.main(["--output", str(output)]) == 0
    assert ran == ["sflow"]
    assert bench.main(["--output", str(output), "--only", "shards"]) == 0
    assert ran == ["sflow", "shards"]
    assert ("shards", "x-large", "n", 12) in _rows(output)
    assert bench.main(["--output", str(output)]) == 0  # a default run keeps its rows
    assert ("shards", "x-large", "n", 12) in _rows(output)
