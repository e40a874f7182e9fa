"""``fabcorr attribute``: whose traffic filled each link of a saved run, and the hotspots."""

from __future__ import annotations

import argparse
import gc
import json
import math
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

from correlator.attribution.hotspots import Thresholds
from correlator.cli.cells import (
    HOTSPOT_COLUMNS,
    HOTSPOT_WIDE,
    TRAFFIC_COLUMNS,
    WIDE_COLUMNS,
    hotspot_row,
    link_name,
    traffic_cells,
)
from correlator.cli.human import count, counted, interval, short_name
from correlator.cli.options import INTERVAL, add_format, add_snapshot, number
from correlator.cli.printers import Block, Fields, Table, emit
from correlator.cli.sflow import open_capture, warn_skipped
from correlator.cli.status import ExitStatus
from correlator.data import to_data
from correlator.replay import ReplayConfig, ReplayResult, replay
from correlator.sflow.accounting import MAX_FLOWS
from correlator.shards import ALONE, Shard, parse_shard
from inventory.counters import PortCounters
from inventory.errors import ConfigError
from topology.snapshot import load_snapshot


def register(commands: argparse._SubParsersAction) -> None:
    """Add ``fabcorr attribute``."""
    parser = commands.add_parser(
        "attribute", help="attribute a saved run's link traffic to tenants, jobs and pods",
        description="Replay a pcap of sFlow datagrams against a topology snapshot: for each "
        "interval and link direction, the bytes of each tenant, job and pod (apportioned "
        "from the port counters, with 95% intervals), then the hotspots with culprits and "
        "victims. Port counters come from the sFlow counter samples in the capture and "
        "from --counters. With --shard, only what that shard of a sharded service would "
        "attribute. Exit 0; 3 when datagrams were rejected, samples named ports the "
        "snapshot does not know or were lost to an interval's full table, or the capture "
        "is cut short.")
    add_snapshot(parser)
    parser.add_argument("--pcap", required=True, metavar="FILE",
                        help="sFlow capture (pcap or pcapng)")
    parser.add_argument("--counters", metavar="FILE",
                        help="port counter readings, one JSON object per line: switch, port, "
                        "at (Unix seconds), values {in_octets: N, pfc_rx_pause/3: N, ...}, "
                        "optional bits {name: 32}, speed_bps; a port's readings here "
                        "replace its sFlow counter samples")
    parser.add_argument("--port", type=number(int, 1, 65535), default=None,
                        help="only UDP datagrams to this port (default: every UDP datagram)")
    parser.add_argument("--interval", type=INTERVAL, default=10.0, metavar="SECONDS",
                        help="attribution interval (default 10)")
    parser.add_argument("--top-pods", type=number(int, 1), default=10, metavar="K",
                        help="pods listed per link direction before 'other' (default 10)")
    parser.add_argument("--shard", type=_shard, default=ALONE, metavar="I/N",
                        help="replay as shard I (from 0) of N (fabcorr run --shard): only "
                        "the datagrams of its switches' agents and the --counters of their "
                        "ports and of their cables' far ends; its link directions and the "
                        "hotspots it judges, from its share of the snapshot (default: the "
                        "whole run)")
    parser.add_argument("--max-flows", type=number(int, 1), default=MAX_FLOWS, metavar="N",
                        help="flow keys (agent, port, direction, addresses, traffic class, "
                        "sampling rate) one interval holds, as the service's bound (default "
                        f"{MAX_FLOWS:,}): a sample of a new key beyond them is lost, and "
                        "counted")
    parser.add_argument("--links", type=number(int, 1), default=20, metavar="N",
                        help="busiest link directions shown per interval in tables "
                        "(default 20; json/yaml list all)")
    limits = parser.add_argument_group("hotspot thresholds")
    default = Thresholds()
    limits.add_argument("--utilization", type=number(float, 0, 1), default=default.utilization,
                        help=f"utilization 0..1 (default {default.utilization})")
    limits.add_argument("--pfc", type=number(float, 0), default=default.pfc_per_s, metavar="PER_S",
                        help=f"PFC pause frames/s (default {default.pfc_per_s:g})")
    limits.add_argument("--ecn", type=number(float, 0), default=default.ecn_per_s, metavar="PER_S",
                        help=f"ECN-marked packets/s (default {default.ecn_per_s:g})")
    limits.add_argument("--discards", type=number(float, 0), default=default.discards_per_s,
                        metavar="PER_S", help=f"discards/s (default {default.discards_per_s:g})")
    limits.add_argument("--hot-intervals", type=number(int, 1), default=default.intervals,
                        metavar="N",
                        help=f"hot intervals in a row that make a hotspot "
                        f"(default {default.intervals})")
    add_format(parser)
    parser.set_defaults(run=_attribute)


def _attribute(args: argparse.Namespace) -> ExitStatus:
    thresholds = Thresholds(args.utilization, args.pfc, args.ecn, args.discards,
                            args.hot_intervals).validate()
    # One run, then the process ends: the cycle collector would only walk the snapshot's
    # millions of objects again and again (a third of the time), for nothing to free.
    gc.disable()
    fabric = load_snapshot(args.snapshot, args.shard.owns if args.shard != ALONE else None)
    readings = list(read_readings(args.counters)) if args.counters else []
    skipped: Counter[str] = Counter()
    capture = open_capture(args.pcap, args.port)
    result = replay(fabric, capture, readings,
                    ReplayConfig(args.interval, args.top_pods, thresholds, shard=args.shard,
                                 max_flows=args.max_flows))
    warn_skipped(args.pcap, capture, skipped)
    emit(result, lambda r, wide: _blocks(r, wide, args.links), args.output, sys.stdout)
    unknown = sum(sum(a.unknown_ports.values()) for a in result.attributions)
    partial = result.totals.rejects or result.totals.lost() or unknown or skipped["cut_short"]
    return ExitStatus.PARTIAL if partial else ExitStatus.OK


def _shard(text: str) -> Shard:
    try:
        return parse_shard(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def read_readings(path: str) -> Iterator[PortCounters]:
    """Port counter readings from a JSON-lines file; a bad line is a ConfigError naming the
    line and field."""
    try:
        with open(path, encoding="utf-8") as stream:
            for number, line in enumerate(stream, 1):
                if line.strip():
                    yield _reading(line, path, f"line {number}")
    except OSError as exc:
        raise ConfigError(path, "", f"cannot read: {exc.strerror}") from exc
    except UnicodeDecodeError as exc:
        raise ConfigError(path, "", f"not UTF-8 text (byte {exc.start})") from exc


def _reading(line: str, path: str, where: str) -> PortCounters:
    try:
        data = json.loads(line)
    except ValueError as exc:
        raise ConfigError(path, where, f"not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise ConfigError(path, where, "not a JSON object")
    for name, value in data.items():
        check = _FIELDS.get(name)
        if check is None:
            raise ConfigError(path, f"{where}: {name}", f"unknown field (fields: "
                              f"{', '.join(_FIELDS)})")
        reason = check(value)
        if reason:
            raise ConfigError(path, f"{where}: {name}", f"{reason}, not {value!r}")
    missing = [name for name in ("switch", "port", "at") if name not in data]
    if missing:
        raise ConfigError(path, where, f"missing field(s) {', '.join(missing)}")
    return PortCounters(**data)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and \
        math.isfinite(value)


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


_Check = Callable[[Any], str]
_FIELDS: dict[str, _Check] = {
    "switch": lambda v: "" if isinstance(v, str) and v else "expected a switch name",
    "port": lambda v: "" if isinstance(v, str) and v else "expected a port name",
    "at": lambda v: "" if _is_number(v) else "expected Unix seconds (a finite number)",
    "values": lambda v: "" if isinstance(v, dict) and all(
        isinstance(k, str) and _is_count(n) for k, n in v.items())
    else "expected {counter: non-negative integer}",
    "bits": lambda v: "" if isinstance(v, dict) and all(n in (32, 64) for n in v.values())
    else "expected {counter: 32 or 64}",
    "oper_status": lambda v: "" if isinstance(v, str) else "expected a string",
    "speed_bps": lambda v: "" if v is None or _is_count(v) else "expected bits/s (an integer)",
    "uptime_s": lambda v: "" if v is None or _is_number(v) else "expected seconds",
    "last_clear": lambda v: "" if v is None or _is_number(v) else "expected Unix seconds",
    "stamped": lambda v: "" if isinstance(v, bool) else "expected true or false",
}
"""Per field of a reading, what makes its value wrong ("" when it is fine)."""


def _blocks(result: ReplayResult, wide: bool, links: int) -> list[Block]:
    """The run for people: only the busiest ``links`` link directions of each interval
    are turned into data."""
    totals = to_data(result.totals)
    blocks: list[Block] = [Fields([
        ("Intervals", len(result.attributions)), ("Datagrams", count(totals["datagrams"])),
        ("Samples", counted(totals["samples"])), ("Rejected", counted(totals["rejects"])),
        ("Lost to full tables", counted(result.totals.lost())),
        ("Lost datagrams", count(totals["lost_datagrams"])),
        ("Hotspots", len(result.hotspots))])]
    for attribution in result.attributions:
        busy = sorted((x for x in attribution.links if x.samples or x.counter_bytes),
                      key=lambda x: -(x.counter_bytes or x.estimated_bytes))
        rows = [[link_name(x.port), x.direction, *traffic_cells(to_data(x), wide)]
                for x in busy[:links]]
        columns = ["link", "dir", *TRAFFIC_COLUMNS, *(WIDE_COLUMNS if wide else [])]
        title = f"Interval {interval(attribution.start, attribution.seconds)}"
        if len(busy) > links:
            title += f" (busiest {links} of {len(busy)} link directions)"
        if attribution.unknown_ports:
            title += "; samples of unknown ports: " + counted(
                {short_name(k): v for k, v in attribution.unknown_ports.items()})
        blocks.append(Table(columns, rows, title))
    if result.hotspots:
        blocks.append(Table(HOTSPOT_COLUMNS + (HOTSPOT_WIDE if wide else []),
                            [hotspot_row(h, wide) for h in to_data(result.hotspots)],
                            "Hotspots"))
    return blocks

