"""tshark as the oracle for sFlow: what tshark 4.0 decodes from a pcap, as plain dicts.

``-T json`` (``-T fields`` merges the samples of a datagram). tshark's JSON repeats keys
(``udp.port``, ``ip.addr``, one top-level ``infiniband`` per RoCE sample), so it is read
as ordered pairs. The InfiniBand layers sit at the packet's top level, not inside the
sample that carried them: they are handed, in order, to the flow samples whose sampled
header is UDP to or from 4791, and each one is checked against that header's UDP payload.

tshark 4.0 limits: discard samples (0,5) and other unknown enterprise-0 samples are only
skipped ("Unknown sample format", by their length, which must be a multiple of 4); a
sample of a non-zero enterprise makes the rest of the datagram malformed; a flow record
it does not know (1036) garbles the records after it; ``sflow_245.header`` includes the
XDR padding (cut here to ``sampled_header_length``).
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.tools import require

ROCE_PORT = 4791
FLOW_FORMATS, COUNTER_FORMATS = {1, 3}, {2, 4}


class _Pairs(list):
    """A JSON object as its (key, value) pairs, duplicates and order kept."""

    def get(self, key: str, default: Any = None) -> Any:
        return next((v for k, v in self if k == key), default)

    def all(self, key: str) -> list[Any]:
        return [v for k, v in self if k == key]


@dataclass
class Decoded:
    """tshark's reading of a capture: samples in file order, ``malformed`` frame numbers."""

    flows: list[dict[str, Any]] = field(default_factory=list)
    counters: list[dict[str, Any]] = field(default_factory=list)
    others: list[dict[str, Any]] = field(default_factory=list)
    malformed: list[int] = field(default_factory=list)


def run_tshark(pcap: str | Path) -> list[_Pairs]:
    """The packets of ``pcap`` as tshark's JSON, with a private (default) configuration."""
    with tempfile.TemporaryDirectory() as config:
        result = subprocess.run(
            [require("tshark", "tshark"), "-n", "-r", str(pcap), "-T", "json",
             "-d", "udp.port==6343,sflow", "-d", f"udp.port=={ROCE_PORT},infiniband",
             "-o", "sflow.enable_dissection:TRUE"],
            capture_output=True, text=True, check=True, timeout=120,
            env={**os.environ, "WIRESHARK_CONFIG_DIR": config})
    return json.loads(result.stdout, object_pairs_hook=_Pairs)


def decode(pcap: str | Path) -> Decoded:
    """Every sample tshark finds in ``pcap``."""
    decoded = Decoded()
    for number, packet in enumerate(run_tshark(pcap), 1):
        layers = packet.get("_source").get("layers")
        if layers.get("_ws.malformed") is not None:
            decoded.malformed.append(number)
        sflow = layers.get("sflow")
        if sflow is None:
            continue
        roce = iter(layers.all("infiniband"))
        datagram = {
            "agent": sflow.get("sflow_245.agent") or sflow.get("sflow_245.agent.v6"),
            "sub_agent": _int(sflow.get("sflow_245.sub_agent_id")),
            "datagram_seq": _int(sflow.get("sflow_245.sequence_number")),
            "uptime_ms": _int(sflow.get("sflow_245.sysuptime")),
        }
        for _, sample in sflow:
            if not isinstance(sample, _Pairs) or sample.get("sflow_245.sampletype") is None:
                continue
            fmt = (_int(sample.get("sflow.enterprise")), _int(sample.get("sflow_245.sampletype")))
            if fmt[0] == 0 and fmt[1] in FLOW_FORMATS:
                decoded.flows.append(datagram | _flow(sample, fmt[1] == 3, roce))
            elif fmt[0] == 0 and fmt[1] in COUNTER_FORMATS:
                decoded.counters.append(datagram | _counters(sample, fmt[1] == 4))
            else:
                decoded.others.append(datagram | {
                    "enterprise": fmt[0], "format": fmt[1],
                    "length": _int(sample.get("sflow_5.sample_length"))})
    return decoded


def _flow(sample: _Pairs, expanded: bool, roce: Any) -> dict[str, Any]:
    prefix = "sflow.flow_sample."
    out: dict[str, Any] = {
        "expanded": expanded, "seq": _int(sample.get(prefix + "sequence_number")),
        "sampling_rate": _int(sample.get(prefix + "sampling_rate")),
        "sample_pool": _int(sample.get(prefix + "sample_pool")),
        "drops": _int(sample.get(prefix + "dropped_packets")),
    }
    if expanded:
        out["source_type"] = _int(sample.get(prefix + "source_id_type"))
        out["source_index"] = _int(sample.get(prefix + "source_id_index"))
        out["input"] = (_int(sample.get(prefix + "input_interface_format")),
                        _int(sample.get(prefix + "input_interface_value")))
        out["output"] = (_int(sample.get(prefix + "output_interface.format")),
                         _int(sample.get(prefix + "output_interface_value")))
    else:
        out["source_type"] = _int(sample.get(prefix + "source_id_class"))
        out["source_index"] = _int(sample.get(prefix + "index"))
        raw = _int(sample.get(prefix + "input_interface"))
        out["input"] = (raw >> 30, raw & 0x3FFFFFFF)
        tree = sample.get(prefix + "output_interface_tree")
        out["output"] = (_int(tree.get(prefix + "output_interface_format")),
                         _int(tree.get(prefix + "output_interface_value")))
    records = [v for _, v in sample
               if isinstance(v, _Pairs) and v.get("sflow_245.flow_record_format") is not None]
    out["records"] = [(_int(r.get("sflow.enterprise")), _int(r.get("sflow_245.flow_record_format")))
                      for r in records]
    for rec in records:
        if rec.get("sflow_245.flow_record_format") == "1":
            out.update(_sampled_header(rec, roce))
        elif rec.get("sflow_245.flow_record_format") == "1001":
            out["extended_switch"] = tuple(_int(rec.get(f"sflow_245.{k}")) for k in
                                           ("vlan.in", "pri.in", "vlan.out", "pri.out"))
    return out


def _sampled_header(rec: _Pairs, roce: Any) -> dict[str, Any]:
    out: dict[str, Any] = {
        "header_protocol": _int(rec.get("sflow_245.header_protocol")),
        "frame_length": _int(rec.get("sflow_245.header.frame_length")),
        "stripped": _int(rec.get("sflow_245.header.payload_stripped")),
        "header_length": _int(rec.get("sflow_245.header.sampled_header_length")),
        "header": bytes.fromhex(rec.get("sflow_245.header", "").replace(":", "")),  # padded
        "vlan": None, "priority": None, "src_ip": None, "dst_ip": None, "dscp": None,
        "ecn": None, "ip_protocol": None, "src_port": None, "dst_port": None,
        "opcode": None, "dest_qp": None, "psn": None,
    }
    out["header"] = out["header"][:out["header_length"]]
    tree = rec.get("sflow_245.header_tree", _Pairs())
    if (vlan := tree.get("vlan")) is not None:  # the outer tag
        out["vlan"], out["priority"] = _int(vlan.get("vlan.id")), _int(vlan.get("vlan.priority"))
    if (ip := tree.get("ip")) is not None:
        out |= {"src_ip": ip.get("ip.src"), "dst_ip": ip.get("ip.dst"),
                "ip_protocol": _int(ip.get("ip.proto"))}
        ds = ip.get("ip.dsfield_tree")
        out["dscp"], out["ecn"] = _int(ds.get("ip.dsfield.dscp")), _int(ds.get("ip.dsfield.ecn"))
    elif (ip6 := tree.get("ipv6")) is not None:
        out |= {"src_ip": ip6.get("ipv6.src"), "dst_ip": ip6.get("ipv6.dst"),
                "ip_protocol": _int(ip6.get("ipv6.nxt"))}
        tc = ip6.get("ipv6.tclass_tree")
        out["dscp"], out["ecn"] = _int(tc.get("ipv6.tclass.dscp")), _int(tc.get("ipv6.tclass.ecn"))
    transport = tree.get("udp") or tree.get("tcp")
    if transport is not None:
        kind = "udp" if tree.get("udp") is not None else "tcp"
        out["src_port"] = _int(transport.get(f"{kind}.srcport"))
        out["dst_port"] = _int(transport.get(f"{kind}.dstport"))
        if kind == "udp" and ROCE_PORT in (out["src_port"], out["dst_port"]):
            out |= _bth(next(roce), transport.get("udp.payload", ""))
    return out


def _bth(layer: _Pairs, udp_payload: str) -> dict[str, Any]:
    bth = layer.get("infiniband.bth", "")
    if not bth or not udp_payload.startswith(bth):
        raise AssertionError(f"InfiniBand layer {bth!r} is not the sample's {udp_payload[:35]!r}")
    tree = layer.get("infiniband.bth_tree")
    return {"opcode": _int(tree.get("infiniband.bth.opcode")),
            "dest_qp": _int(tree.get("infiniband.bth.destqp")),
            "psn": _int(tree.get("infiniband.bth.psn"))}


_IF_FIELDS = {
    "ifindex": "ifindex", "if_type": "iftype", "speed": "ifspeed", "direction": "ifdirection",
    "in_octets": "ifinoct", "in_ucast": "ifinpkt", "in_mcast": "ifinmcast",
    "in_bcast": "ifinbcast", "in_discards": "ifindisc", "in_errors": "ifinerr",
    "in_unknown": "ifinunk", "out_octets": "ifoutoct", "out_ucast": "ifoutpkt",
    "out_mcast": "ifoutmcast", "out_bcast": "ifoutbcast", "out_discards": "ifoutdisc",
    "out_errors": "ifouterr", "promiscuous": "ifpromisc",
}
"""IfCounters field -> tshark ``sflow_245.<key>``; ``status`` is split in two keys."""

ETHERNET_KEYS = (
    "AlignmentErrors", "FCSErrors", "SingleCollisionFrames", "MultipleCollisionFrames",
    "SQETestErrors", "DeferredTransmissions", "LateCollisions", "ExcessiveCollisions",
    "InternalMacTransmitErrors", "CarrierSenseErrors", "FrameTooLongs",
    "InternalMacReceiveErrors", "SymbolErrors",
)
"""tshark ``sflow_245.dot3Stats<key>``, in record order."""


def _counters(sample: _Pairs, expanded: bool) -> dict[str, Any]:
    prefix = "sflow.counters_sample."
    out: dict[str, Any] = {
        "expanded": expanded, "seq": _int(sample.get(prefix + "sequence_number")),
        "source_type": _int(sample.get(prefix + "source_id_type")),
        "source_index": _int(sample.get(prefix + "source_id_index")),
        "if_counters": None, "ethernet": None, "records": [],
    }
    for _, rec in sample:
        if not isinstance(rec, _Pairs):
            continue
        fmt = _int(rec.get("sflow_245.counters_record_format"))
        out["records"].append((_int(rec.get("sflow.enterprise")), fmt))
        if fmt == 1:
            values = {name: _int(rec.get(f"sflow_245.{key}")) for name, key in _IF_FIELDS.items()}
            values["status"] = (_int(rec.get("sflow_245.ifadmin_status"))
                                | _int(rec.get("sflow_245.ifoper_status")) << 1)
            out["if_counters"] = values
        elif fmt == 2:
            out["ethernet"] = tuple(_int(rec.get(f"sflow_245.dot3Stats{k}"))
                                    for k in ETHERNET_KEYS)
    return out


def _int(text: str | None) -> int | None:
    return None if text is None else int(text, 0)
