"""The attribution log holds what it cannot write and writes it, in order, once it can."""

import json
import logging

from correlator.attribution.attribute import Attribution
from correlator.service.attribution_log import AttributionLog
from correlator.sflow.accounting import Totals


def _interval(start: float) -> Attribution:
    return Attribution(start, 1.0, (), {}, 0)


def _starts(path) -> list[float]:
    return [json.loads(line)["attribution"]["start"] for line in path.read_text().splitlines()]


def test_lines_that_could_not_be_written_are_written_in_order_once_they_can(tmp_path, caplog):
    folder = tmp_path / "logs"
    log = AttributionLog(str(folder / "attribution.jsonl"))
    with caplog.at_level(logging.WARNING, "correlator.service.attribution_log"):
        assert log.append(_interval(10.0), Totals()) is False  # no such folder yet
        assert log.append(_interval(11.0), Totals()) is False
        assert log.failing == "No such file or directory"
        folder.mkdir()
        assert log.append(_interval(12.0), Totals()) is True
    assert (log.failing, log.lost) == ("", 0)
    assert _starts(folder / "attribution.jsonl") == [10.0, 11.0, 12.0]
    assert [r.getMessage() for r in caplog.records] == [
        f"attribution log {folder / 'attribution.jsonl'} cannot be written, lines held "
        "until it can: No such file or directory",  # once, not per line
        f"attribution log {folder / 'attribution.jsonl'} written again: 3 held lines"]


def test_the_lines_held_are_bounded_and_the_oldest_let_go_counted(tmp_path):
    measure = tmp_path / "one.jsonl"
    AttributionLog(str(measure)).append(_interval(0.0), Totals())
    size = measure.stat().st_size  # one line's bytes (every start here has as many digits)
    path = tmp_path / "gone" / "attribution.jsonl"
    log = AttributionLog(str(path), held_bytes=3 * size)
    for start in range(5):
        assert log.append(_interval(float(start)), Totals()) is False
    assert log.lost == 2  # 0 and 1 let go, 2 to 4 held
    path.parent.mkdir()
    assert log.append(_interval(5.0), Totals()) is True  # 2 let go for it
    assert (_starts(path), log.lost) == ([3.0, 4.0, 5.0], 3)
