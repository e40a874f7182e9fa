"""Ground truth of an emulated run, kept beside it and written to disk.

:class:`TruthRecorder` watches a :class:`~simulator.traffic.TrafficModel` (call
:meth:`~TruthRecorder.observe` after every step; it only reads the model) and keeps, per
interval, a :class:`TruthRecord`: the bytes every sender put on every port direction,
and the true congestion signals of every port direction, computed here from the model's
cumulative counters over the interval's seconds (:func:`port_signals`), and the port's
peer (the switch port at the cable's far end, as a port ID).
It also keeps the counter readings a telemetry collector polling every port at each
interval boundary would get (none from switches that are down), for replays.

On disk: JSON lines, one per interval::

    {"start": S, "end": E, "down_switches": ["spine02"],
     "bytes": [{"switch": .., "port": .., "direction": "in", "tenant": "tenant:team-a",
                "job": "job:team-a/llm", "pod": "pod:team-a/llm-worker-0", "bytes": N}],
     "signals": [{"switch": .., "port": .., "direction": "out", "peer": "port:S/P",
                  "bytes_per_s": X, "utilization": U, "pfc": P, "ecn": E, "discards": D}]}

Tenants, jobs, pods and ports are named with fabcorr's documented ids, written out here
(``tenant:T``, ``job:NS/NAME``, ``no-job`` for a pod without a job, ``pod:NS/NAME``,
``port:SWITCH/PORT``);
a port direction with no traffic and no signal is left out of ``signals``; ``peer`` is
empty for a port cabled to a host.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from inventory.counters import PortCounters
from inventory.errors import ConfigError
from simulator.traffic import TrafficModel, TruthKey

NO_JOB = "no-job"

Direction = tuple[str, str, str]
"""A port direction: switch, port, ``in`` or ``out``."""


@dataclass(frozen=True, slots=True)
class TruthRecord:
    """One interval [start, end): bytes per (port direction, sender) with fabcorr's names,
    signals per port direction (``bytes_per_s`` and the hotspot kinds), the switch-port
    peers of the ports in ``signals`` (port ID -> port ID), the switches down."""

    start: float
    end: float
    bytes: dict[TruthKey, int]
    signals: dict[Direction, dict[str, float]]
    peers: dict[str, str]
    down_switches: tuple[str, ...] = ()


class TruthRecorder:
    """Follows ``model`` from where it is now (an interval boundary); with
    ``keep_readings``, keeps the counter readings too (:attr:`readings`)."""

    def __init__(self, model: TrafficModel, keep_readings: bool = True) -> None:
        self.model = model
        self.records: list[TruthRecord] = []
        self.readings: list[PortCounters] = []
        self._keep = keep_readings
        self._ports = model.port_list()
        self._peers = {port_id(*near): port_id(*far) for near, far in model.cabling.peer.items()}
        self._seen = len(model.truth)
        self._last = self._read()

    def observe(self) -> list[TruthRecord]:
        """Record the interval the last step closed, if any; returns the new records."""
        model = self.model
        if len(model.truth) == self._seen:
            return []
        if len(model.truth) > self._seen + 1:
            raise RuntimeError("TruthRecorder.observe() must be called after every step")
        interval = model.truth[self._seen]
        self._seen += 1
        now = self._read()
        seconds = interval.end - interval.start
        found: dict[Direction, dict[str, float]] = {}
        for ((switch, port), _, speed), before, after in zip(self._ports, self._last, now,
                                                             strict=True):
            delta = {k: v - before.get(k, 0) for k, v in after.items()}
            for direction in ("in", "out"):
                values = port_signals(delta, direction, seconds, speed)
                if any(values.values()):
                    found[(switch, port, direction)] = values
        self._last = now
        ports = {port_id(switch, port) for switch, port, _ in found}
        record = TruthRecord(interval.start, interval.end,
                             {_named(key): octets for key, octets in interval.bytes.items()},
                             found, {p: f for p, f in self._peers.items() if p in ports},
                             tuple(sorted(model.down_switches)))
        self.records.append(record)
        return [record]

    def _read(self) -> list[dict[str, int]]:
        model = self.model
        at = model.start + model.now
        values = [model.counters(switch, port) for (switch, port), _, _ in self._ports]
        if not self._keep:
            return values
        # the model's counters at this very moment, as a device stamping its samples says
        self.readings += [PortCounters(switch, port, at, counters, speed_bps=speed or None,
                                       oper_status="down" if (switch, port) in model.down_ports
                                       else "up", stamped=True)
                          for ((switch, port), _, speed), counters in zip(self._ports, values,
                                                                         strict=True)
                          if switch not in model.down_switches]
        return values


def port_signals(delta: dict[str, int], direction: str, seconds: float, speed_bps: int
                 ) -> dict[str, float]:
    """A port direction's signals from its counters' increase over ``seconds``: bytes
    and utilization (bytes x 8 / (speed x seconds); none without a speed), PFC pause
    frames (``in``: those the port sent, holding its sender back; ``out``: those it
    received), ECN marks of its egress queues (``out`` only) and discards (``in``:
    in_discards; ``out``: out_discards plus the egress queues' drops), per second.

    >>> port_signals({"in_octets": 5_000_000_000, "pfc_tx_pause/3": 2000, "in_discards": 0},
    ...              "in", 10.0, 400_000_000_000)
    {'bytes_per_s': 500000000.0, 'utilization': 0.01, 'pfc': 200.0, 'discards': 0.0}
    >>> port_signals({"out_octets": 0, "queue_ecn_marked/3": 50, "queue_dropped/3": 3,
    ...               "out_discards": 1}, "out", 2.0, 0)
    {'bytes_per_s': 0.0, 'pfc': 0.0, 'ecn': 25.0, 'discards': 2.0}
    """
    def total(*names: str) -> float:
        return sum(v for k, v in delta.items() if k.partition("/")[0] in names) / seconds

    octets = delta.get(f"{direction}_octets", 0) / seconds
    found = {"bytes_per_s": octets}
    if speed_bps:
        found["utilization"] = octets * 8 / speed_bps
    if direction == "in":
        return found | {"pfc": total("pfc_tx_pause"), "discards": total("in_discards")}
    return found | {"pfc": total("pfc_rx_pause"), "ecn": total("queue_ecn_marked"),
                    "discards": total("out_discards", "queue_dropped")}


def port_id(switch: str, port: str) -> str:
    """fabcorr's documented id of a switch port."""
    return f"port:{switch}/{port}"


def _named(key: TruthKey) -> TruthKey:
    """A model key with fabcorr's names: tenant:T, job:NS/NAME (or no-job), pod:NS/NAME."""
    return key._replace(tenant=f"tenant:{key.tenant}", job=f"job:{key.job}" if key.job
                        else NO_JOB, pod=f"pod:{key.pod}")


def write_truth(path: str | Path, records: Iterable[TruthRecord], append: bool = False) -> None:
    """Write (or append) records as JSON lines."""
    with Path(path).open("a" if append else "w", encoding="utf-8") as out:
        for r in records:
            line = {"start": r.start, "end": r.end, "down_switches": list(r.down_switches),
                    "bytes": [{**key._asdict(), "bytes": octets}
                              for key, octets in sorted(r.bytes.items())],
                    "signals": [{"switch": s, "port": p, "direction": d,
                                 "peer": r.peers.get(port_id(s, p), ""), **values}
                                for (s, p, d), values in sorted(r.signals.items())]}
            out.write(json.dumps(line, separators=(",", ":")) + "\n")


def read_truth(path: str | Path) -> list[TruthRecord]:
    """Records from a JSON-lines file; a bad line is a ConfigError naming it."""
    records = []
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise ConfigError(str(path), "", f"cannot read: {exc.strerror}") from exc
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
            found, peers = {}, {}
            for e in data["signals"]:
                switch, port, direction = e.pop("switch"), e.pop("port"), e.pop("direction")
                peer = e.pop("peer", "")
                found[(switch, port, direction)] = {k: float(v) for k, v in e.items()}
                if peer:
                    peers[port_id(switch, port)] = peer
            records.append(TruthRecord(
                float(data["start"]), float(data["end"]),
                {TruthKey(e["switch"], e["port"], e["direction"], e["tenant"], e["job"],
                          e["pod"]): int(e["bytes"]) for e in data["bytes"]},
                found, peers, tuple(data.get("down_switches", ()))))
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            raise ConfigError(str(path), f"line {number}", f"not a truth record: {exc!r}"
                              ) from exc
    return records
