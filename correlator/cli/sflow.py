"""``fabcorr sflow decode``: every sample of a capture, as tshark shows it plus who sent it."""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Iterator
from typing import Any

from correlator.attribution.accumulate import IN, data_source
from correlator.attribution.attribute import UNATTRIBUTED
from correlator.cli.cells import link_name
from correlator.cli.human import count, counted, local_time, plural, short_name
from correlator.cli.options import add_format
from correlator.cli.printers import Block, Fields, Table, emit, stream_list
from correlator.cli.status import ExitStatus
from correlator.sflow.decode import Decoder
from correlator.sflow.pcap import Capture
from correlator.sflow.records import (
    CounterSample,
    Datagram,
    DiscardSample,
    FlowSample,
    Packet,
    address_text,
    discard_reason,
)
from inventory.errors import ConfigError
from topology.footprint import owners
from topology.graph import FabricGraph
from topology.snapshot import load_snapshot


def register(commands: argparse._SubParsersAction) -> None:
    """Add ``fabcorr sflow``."""
    parser = commands.add_parser("sflow", help="decode sFlow captures",
                                 description="Work with sFlow v5 datagrams.")
    sub = parser.add_subparsers(dest="sflow_command", metavar="COMMAND", required=True)
    decode = sub.add_parser(
        "decode", help="print every sample of a capture",
        description="Decode the sFlow v5 datagrams of a capture (pcap or pcapng, told apart "
        "by their contents; UDP to any port) and print one record per sample: datagram and "
        "sample fields, the sampled packet down to the RoCEv2 BTH, and, with --snapshot, the "
        "switch port and the pods, jobs and tenants behind the addresses. json, yaml and "
        "jsonl are written as the capture is read. Exit 0; 3 when some datagrams or "
        "samples were rejected (counted by reason on stderr) or the capture is cut short.")
    decode.add_argument("pcap", metavar="FILE", help="capture to decode (pcap or pcapng)")
    decode.add_argument("--snapshot", metavar="FILE",
                        help="topology snapshot to resolve ports and addresses with")
    decode.add_argument("--port", type=int, default=None,
                        help="only UDP datagrams to this port (default: every UDP datagram)")
    add_format(decode)
    decode.set_defaults(run=_decode)


def read_capture(path: str, port: int | None = None, skipped: Counter[str] | None = None
                 ) -> Iterator[tuple[float, bytes]]:
    """(time, payload) of the UDP datagrams of a capture; a bad file is a ConfigError. A
    capture cut short warns on stderr once read (and counts ``cut_short`` in ``skipped``)."""
    capture = open_capture(path, port)
    try:
        for at, _, _, _, payload in capture:
            yield at, payload
    except OSError as exc:
        raise ConfigError(path, "", f"cannot read: {exc.strerror}") from exc
    warn_skipped(path, capture, skipped)


def open_capture(path: str, port: int | None = None) -> Capture:
    """The capture at ``path`` (only UDP datagrams to ``port``, when given); a bad file is
    a ConfigError."""
    try:
        return Capture(path, port)
    except OSError as exc:
        raise ConfigError(path, "", f"cannot read: {exc.strerror}") from exc
    except ValueError as exc:
        raise ConfigError(path, "", str(exc).removeprefix(f"{path}: ")) from exc


def warn_skipped(path: str, capture: Capture, skipped: Counter[str] | None = None) -> None:
    """Once ``capture`` is read: what it skipped added to ``skipped``, and a warning on
    stderr if it was cut short."""
    found = capture.skipped()
    if skipped is not None:
        skipped.update(found)
    if found["cut_short"]:
        print(f"fabcorr: {path}: warning: the capture ends inside a record (cut short); "
              "what came before it was read", file=sys.stderr)


def _decode(args: argparse.Namespace) -> ExitStatus:
    fabric = load_snapshot(args.snapshot) if args.snapshot else None
    decoder, skipped = Decoder(), Counter[str]()
    records = (record for at, payload in read_capture(args.pcap, args.port, skipped)
               if (datagram := decoder.decode(payload)) is not None
               for record in describe(datagram, at, fabric))
    if args.output in ("table", "wide"):
        emit(list(records), _blocks, args.output, sys.stdout)
    else:
        stream_list(records, args.output, sys.stdout)
    return _report(decoder, skipped)


def _report(decoder: Decoder, skipped: Counter[str]) -> ExitStatus:
    rejects: Counter[str] = decoder.rejects
    print(f"{plural(decoder.datagrams, 'datagram')}, "
          f"{plural(sum(decoder.samples.values()), 'sample')}"
          + (f", rejected: {counted(dict(rejects))}" if rejects else ""), file=sys.stderr)
    return ExitStatus.PARTIAL if rejects or skipped["cut_short"] else ExitStatus.OK


def describe(datagram: Datagram, at: float, fabric: FabricGraph | None = None
             ) -> list[dict[str, Any]]:
    """One plain record per sample of ``datagram`` (received at ``at``)."""
    head = {"time": at, "agent": address_text(datagram.agent), "sub_agent": datagram.sub_agent,
            "datagram_seq": datagram.seq, "uptime_ms": datagram.uptime_ms}
    records = []
    for sample in datagram.samples:
        record = head | {"type": _TYPES[type(sample)], "seq": sample.seq,
                         "source_type": sample.source_type, "source_index": sample.source_index}
        if isinstance(sample, FlowSample):
            record |= {"sampling_rate": sample.sampling_rate, "sample_pool": sample.sample_pool,
                       "drops": sample.drops, **_interfaces(sample.input, sample.output),
                       "frame_length": sample.frame_length, "stripped": sample.stripped,
                       "src_vlan": sample.src_vlan, "dst_vlan": sample.dst_vlan,
                       **_packet(sample.packet)}
        elif isinstance(sample, DiscardSample):
            record |= {"drops": sample.drops, **_interfaces(sample.input, sample.output),
                       "reason": sample.reason, "reason_name": discard_reason(sample.reason),
                       "frame_length": sample.frame_length, **_packet(sample.packet)}
        elif sample.interface is not None:
            record |= {"counters": sample.interface._asdict(),
                       "ethernet": list(sample.ethernet) if sample.ethernet else None}
        if fabric is not None:
            record |= _resolve(fabric, datagram.agent, sample, at)
        records.append(record)
    return records


_TYPES = {FlowSample: "flow", CounterSample: "counters", DiscardSample: "discard"}


def _interfaces(inp: int, out: int) -> dict[str, int]:
    return {"input_format": inp >> 30, "input": inp & 0x3FFFFFFF,
            "output_format": out >> 30, "output": out & 0x3FFFFFFF}


def _packet(packet: Packet | None) -> dict[str, Any]:
    if packet is None:
        return {"traffic": None}
    fields = packet._asdict()
    fields["src_ip"], fields["dst_ip"] = address_text(packet.src_ip), address_text(packet.dst_ip)
    return fields


def _resolve(fabric: FabricGraph, agent: bytes, sample: Any, at: float) -> dict[str, Any]:
    index, direction = (data_source(sample.source_index, sample.input, sample.output)
                        if isinstance(sample, FlowSample) else (sample.source_index, IN))
    found: dict[str, Any] = {"port": fabric.indexes.port_for_sample(agent, index),
                             "direction": direction}
    packet = getattr(sample, "packet", None)
    if packet is not None:
        table = owners(fabric)
        for end, address in (("src", packet.src_ip), ("dst", packet.dst_ip)):
            hit = fabric.indexes.ips.owner(address, at) if address else None
            owner = table.get(hit.interface) if hit is not None else None
            found[f"{end}_pod"] = owner.pod if owner else UNATTRIBUTED
            found[f"{end}_job"] = (owner.job or None) if owner else UNATTRIBUTED
            found[f"{end}_tenant"] = (owner.tenant or None) if owner else UNATTRIBUTED
    return found


def _blocks(records: list[dict[str, Any]], wide: bool) -> list[Block]:
    flows = [r for r in records if r["type"] != "counters"]
    columns = ["agent", "seq", "in", "out", "1-in", "len", "traffic", "src", "dst", "qp"]
    if wide:
        columns += ["time", "dscp", "ecn", "vlan", "psn", "src pod", "dst pod", "src tenant",
                    "port"]
    rows = []
    for r in flows:
        row = [r["agent"], r["seq"], r["input"], r["output"],
               count(r["sampling_rate"]) if "sampling_rate" in r else "",
               r["frame_length"], r.get("traffic"), r.get("src_ip"), r.get("dst_ip"),
               f"{r['dest_qp']:#x}" if r.get("opcode", -1) >= 0 else ""]
        if wide:
            vlan = r.get("vlan")
            row += [local_time(r["time"]), r.get("dscp"), r.get("ecn"),
                    "" if vlan is None or vlan < 0 else vlan, r.get("psn"),
                    *(short_name(r[k]) if r.get(k) else "" for k in
                      ("src_pod", "dst_pod", "src_tenant"))]
            row.append(link_name(r["port"]) if r.get("port") else "")
        rows.append(row)
    counters = [r for r in records if r["type"] == "counters"]
    blocks: list[Block] = [Table(columns, rows, f"Packet samples ({count(len(flows))})")]
    if counters:
        blocks.append(Fields([("Counter samples", count(len(counters)))]))
    return blocks
