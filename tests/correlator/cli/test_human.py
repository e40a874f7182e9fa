"""The one formatting module (correlator/cli/human.py) and the table printer, exact strings.

The CLI tests run at UTC+02:00 (conftest): a local time is told from a UTC one."""

import io

import pytest

from correlator.cli.human import (
    bit_rate,
    byte_rate,
    count,
    counted,
    interval,
    local_time,
    offset,
    plural,
    short_name,
)
from correlator.cli.printers import Table, render


def test_times_are_local_iso_8601_and_offsets_are_seconds():
    assert local_time(1767229200) == "2026-01-01T03:00:00+02:00"
    assert local_time(1796148255.4) == "2026-12-01T20:04:15+02:00"
    assert interval(1767229200, 10) == "2026-01-01T03:00:00+02:00 +10 s"
    assert [offset(s) for s in (10, 2.5, 0, -3)] == ["+10 s", "+2.5 s", "+0 s", "-3 s"]


@pytest.mark.parametrize(("bps", "text"), [
    (0, "0 b/s"), (999, "999 b/s"), (999.6, "1 kb/s"), (1500, "1.5 kb/s"),
    (123_456_789, "123 Mb/s"), (2.5e9, "2.5 Gb/s"), (400e9, "400 Gb/s"), (1.6e12, "1.6 Tb/s"),
    (99_950_000, "100 Mb/s")])
def test_rates_are_bit_per_second_with_si_prefixes(bps, text):
    assert bit_rate(bps) == text


def test_byte_rates_become_bit_rates():
    assert byte_rate(1.25e9) == "10 Gb/s"
    assert byte_rate(85_123_456_789 / 10) == "68.1 Gb/s"


def test_counts_have_thousands_separators_and_plurals_agree():
    assert count(12_345_678_901) == "12,345,678,901"
    assert count(0.4) == "0"
    assert counted({"flow": 31552, "counters": 12}) == "31,552 flow, 12 counters"
    assert counted({}) == "none"
    assert [plural(n, "problem") for n in (0, 1, 2)] == ["0 problems", "1 problem",
                                                         "2 problems"]
    assert plural(1, "leaf", "leaves") == "1 leaf"
    assert plural(2048, "leaf", "leaves") == "2,048 leaves"


def test_names_lose_their_kind_prefix_only():
    assert [short_name(n) for n in (
        "tenant:team-a", "job:team-a/llm", "pod:team-b/w-0", "port:leaf01/Ethernet1",
        "podif:a/w-0/net1", "other", "unattributed", "2001:db8::1")] == [
        "team-a", "team-a/llm", "team-b/w-0", "leaf01/Ethernet1", "a/w-0/net1", "other",
        "unattributed", "2001:db8::1"]


def test_tables_fold_their_widest_cells_to_the_width():
    table = Table(["link", "tenants (share, 95%)"],
                  [["leaf01:Ethernet9", "team-c 85.6% (85.0%-86.3%), team-a 9.9% (9.1%-10.8%)"],
                   ["spine01:Ethernet2", "ok"]], "Interval")
    out = io.StringIO()
    render([table], out, width=40)
    assert out.getvalue().splitlines() == [
        "Interval",
        "LINK               TENANTS (SHARE, 95%)",
        "leaf01:Ethernet9   team-c 85.6%",
        "                   (85.0%-86.3%), team-a",
        "                   9.9% (9.1%-10.8%)",
        "spine01:Ethernet2  ok"]
    assert all(len(line) <= 40 for line in out.getvalue().splitlines())
    unfolded = io.StringIO()
    render([table], unfolded)
    assert unfolded.getvalue().splitlines()[2] == (
        "leaf01:Ethernet9   team-c 85.6% (85.0%-86.3%), team-a 9.9% (9.1%-10.8%)")


def test_headers_are_bold_only_when_asked_for_a_terminal():
    out = io.StringIO()
    render([Table(["a"], [["1"]])], out, bold=True)
    assert out.getvalue() == "\033[1mA\033[0m\n1\n"
