"""``fabcorr demo``: the real service against an emulated fabric on loopback.

The scenario's switches become gNMI targets (or SNMP agents) whose counters follow its
traffic model; the cluster side is written as a fact file; ``fabcorr run`` starts as a
child process (or N shards behind ``fabcorr inlet``, with --shards N) and discovers the
switches, streams their counters and receives the sFlow the model's agents send in real
time. The demo follows the service through its API: one line per attributed interval,
each scripted event of the scenario as it happens, each new hotspot with its culprits,
victims and their confidence. When the scenario's traffic is
over it writes the topology exports and the ground truth and scores the service against
it, then keeps the service up until Ctrl-C or ``--duration``. SIGTERM, like Ctrl-C
(SIGINT, even when the demo was started with it ignored), stops the service first, then the
emulated fabric: a demo stopped leaves no ``fabcorr run`` behind.
"""

from __future__ import annotations

import argparse
import json
import signal
import time
from pathlib import Path
from typing import Any

from correlator.attribution.hotspots import Thresholds
from correlator.cli import demo_services
from correlator.cli.demo_services import Services
from correlator.cli.human import bit_rate, local_time, offset, plural
from correlator.cli.status import ExitStatus
from inventory.errors import ConfigError, SourceError
from inventory.facts import FactSet

SCENARIOS = Path(__file__).parents[2] / "simulator" / "scenarios"
"""The scenarios shipped in the package (``fabcorr demo --list``)."""
_LEADS_S = (8.0, 20.0, 45.0)
"""How far ahead of the traffic the demo sets up (the traffic played ahead, the service
ready): the first that a machine meets; a busy one gets the next."""
EXPORTS = {"graphml": "fabric.graphml", "gexf": "fabric.gexf", "json": "fabric.json",
           "dot": "fabric.dot", "cytoscape": "fabric.cytoscape.json"}


def register(commands: argparse._SubParsersAction) -> None:
    """Add ``fabcorr demo``."""
    parser = commands.add_parser(
        "demo", help="run the service against an emulated fabric (what `make demo` runs)",
        description=__doc__.split("\n\n")[1].replace("\n", " ") + " Exit 0 when the "
        "service met every accuracy target, 1 when not.")
    parser.add_argument("--scenario", default="demo", metavar="NAME|FILE",
                        help="a scenario shipped with fabcorr (see --list; default demo) or "
                        "a scenario file (YAML)")
    parser.add_argument("--list", action="store_true",
                        help="list the scenarios shipped with fabcorr, with their files, and "
                        "exit")
    parser.add_argument("--out", default="out/demo", metavar="DIR",
                        help="where the config, facts, snapshot, exports, attribution log "
                        "and ground truth go (default out/demo)")
    parser.add_argument("--listen", default="127.0.0.1:9460", metavar="HOST:PORT",
                        help="metrics and API of the service (default 127.0.0.1:9460); "
                        "with --shards N, shard I's on PORT+I and the inlet's metrics on "
                        "PORT+N")
    parser.add_argument("--shards", type=int, default=0, metavar="N",
                        help="run N shards (`fabcorr run --shard I/N`) behind one `fabcorr "
                        "inlet`, which the switches send their sFlow to, and follow and "
                        "score their merged view (default: one process)")
    parser.add_argument("--snmp", default=None, metavar="SWITCH,...",
                        help="switches emulated as SNMP agents instead of gNMI targets "
                        "(default none; the demo reads counters every second, which the "
                        "pysnmp-based agents and poller only just keep up with)")
    parser.add_argument("--duration", type=float, default=None, metavar="SECONDS",
                        help="stop this long after the start (default: when the scenario's "
                        "traffic is over; 0: keep serving until Ctrl-C)")
    parser.set_defaults(run=_demo)


def shipped() -> dict[str, Path]:
    """The scenarios shipped in the package: name -> file."""
    return {path.stem: path for path in sorted(SCENARIOS.glob("*.yaml"))}


def scenario_file(text: str) -> Path:
    """The file of ``--scenario``: a shipped scenario's name, else a path."""
    found = shipped().get(text)
    if found is not None:
        return found
    if not Path(text).is_file():
        raise ConfigError("--scenario", "", f"{text!r} is neither a scenario shipped with "
                          f"fabcorr ({', '.join(shipped())}) nor a file")
    return Path(text)


def _demo(args: argparse.Namespace) -> ExitStatus:
    if args.list:
        for name, path in shipped().items():
            print(f"{name}\t{path}")
        return ExitStatus.OK
    from simulator.emulator import EmulatedFabric
    from simulator.scenario import load_scenario
    from simulator.traffic import TrafficModel
    from simulator.truth import TruthRecorder

    if args.shards < 0:
        raise ConfigError("--shards", "", f"must be >= 0, not {args.shards}")
    began = time.monotonic()
    scenario = load_scenario(scenario_file(args.scenario))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    interval = scenario.interval_s
    snmp = [name for name in (args.snmp or "").split(",") if name]
    fabric: Any = None
    service: Services | None = None
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, signal.default_int_handler)  # KeyboardInterrupt: see finally
    try:
        for lead in _LEADS_S:
            # traffic starts on an interval boundary once the service is up: the fact file
            # written for it names the moment a fixed IP changes owner, so the start is
            # fixed now; a machine too busy to be ready by then sets up again with more lead
            start = (int((time.time() + lead) / interval) + 1) * interval
            model = TrafficModel(scenario, start=start)
            truth = TruthRecorder(model, keep_readings=False)
            try:
                fabric = EmulatedFabric(model, password="demo-only", snmp=snmp)
            except ValueError as exc:
                raise ConfigError("--snmp", "", str(exc)) from exc
            # the traffic ahead of time: see emulator
            fabric.prepare(lambda _, truth=truth: truth.observe())
            fabric.start()
            names = sorted(fabric.targets)
            _say(f"fabcorr demo: {args.scenario}: {scenario.seconds} s of traffic on "
                 f"{len(model.facts.nodes)} nodes, {len(names)} switches, "
                 f"{len(scenario.traffic)} jobs of {len({j.tenant for j in scenario.traffic})} "
                 f"tenants, sampling 1:{scenario.sampling_rate}, {interval:g} s intervals")
            _say("emulated switches (EOS profile): " + ", ".join(
                f"{n} {'SNMP' if n in snmp else 'gNMI'} {t.address}"
                for n, t in sorted(fabric.targets.items())))
            service = demo_services.start(fabric, out, args.listen, interval, args.shards)
            ready = service.wait_ready()
            summary = service.summary()
            _say(f"{_running(args.shards)} ready after {ready:.1f} s: "
                 f"{_counted(summary)}; {_where(service, out)}")
            if time.time() <= start:
                break
            _say(f"{_running(args.shards)} took {ready:.1f} s to get ready, past the "
                 f"traffic's start ({lead:g} s ahead): a busy machine; setting up again with "
                 "more lead")
            service.stop()
            fabric.stop()
            service = fabric = None
        else:
            raise SourceError(f"fabcorr run was not ready {_LEADS_S[-1]:g} s after setting "
                              "up, when the traffic was to start: too slow a machine")
        _say(f"traffic starts at {local_time(start)}; "
             "one line per attributed interval")
        _wait_until(start)
        fabric.run_in_background(service.sflow)
        _follow(service, fabric, start, start + scenario.seconds, began,
                events(scenario, model.facts))
        if fabric.error is not None:
            raise fabric.error
        passed = _finish(out, service, model, truth.records, began)
        _serve_on(args.duration, began, service)
    except KeyboardInterrupt:
        _say("interrupted")
        passed = True
    finally:  # the service first: it reads the fabric's switches to its last interval
        if service is not None:
            service.stop()
        if fabric is not None:
            fabric.stop()
    return ExitStatus.OK if passed else ExitStatus.DIFFERS


def _running(shards: int) -> str:
    return f"{shards} shards (fabcorr run --shard I/{shards}) and fabcorr inlet" \
        if shards else "fabcorr run"


def _where(service: Services, out: Path) -> str:
    if service.inlet is None:
        url = service.urls[0]
        return f"metrics {url}/metrics, API {url}/api/v1/, log {out / 'service.log'}"
    return (f"APIs and metrics {', '.join(service.urls)} (fabcorr top --server "
            f"{','.join(service.urls)}), inlet metrics {service.inlet}/metrics, logs "
            f"{out}/shard-*/service.log, {out}/inlet.log")


def events(scenario: Any, facts: FactSet) -> list[tuple[float, str]]:
    """The scenario's scripted events in time order: (seconds after the start, what
    happens, named as people know them)."""
    from simulator.scenario import IpReuse, LinkDown, Noisy

    tenants = {f"{j.tenant}/{j.name}": j.tenant for j in scenario.traffic}
    pods = {f"{p.namespace}/{p.name}": p for p in facts.pods}
    found = []
    for event in sorted(scenario.events, key=lambda e: e.at):
        if isinstance(event, Noisy):
            text = (f"noisy job: {event.job} (tenant {tenants.get(event.job, '?')}) starts "
                    f"sending {bit_rate(event.gbps * 1e9)} per NIC")
        elif isinstance(event, IpReuse):
            old = pods.get(event.old)
            before = _owner(old.tenant if old else "?", f"{old.namespace}/{old.job_name}"
                            if old and old.job_name else "")
            after = _owner(tenants.get(event.job, event.new.partition("/")[0]), event.job)
            ips = [ip for i in facts.pod_interfaces if f"{i.namespace}/{i.pod}" == event.old
                   for ip in (i.ipv4.partition("/")[0], i.ipv6.partition("/")[0]) if ip]
            text = (f"fixed-IP handover: {event.old} ({before}) ends; {event.new} ({after}) "
                    f"takes its VFs and IPs {', '.join(ips)}")
        elif isinstance(event, LinkDown):
            text = f"link down: the cable at {event.switch}:{event.port} carries nothing"
        else:
            text = (f"switch down: {event.switch} stops answering management and telemetry "
                    "(it still forwards)")
        found.append((float(event.at), text))
    return found


def _owner(tenant: str, job: str) -> str:
    return f"tenant {tenant}" + (f", job {job}" if job else "")


_CATCH_UP_S = 120.0


def _follow(service: Services, fabric: Any, start: float, end: float, began: float,
            scripted: list[tuple[float, str]]) -> None:
    """One line per attributed interval until the service has published the one ending
    at ``end`` (a busy machine publishes after the traffic is over: at most
    :data:`_CATCH_UP_S` more), one per scripted event once its moment has come; new
    hotspots in full."""
    seen_interval, seen_hot = None, set()
    first_hot: float | None = None
    scripted = list(scripted)
    reported_until, deadline = start, None
    while reported_until < end - 1e-3:
        if fabric.finished.wait(0.5):
            deadline = deadline or time.monotonic() + _CATCH_UP_S
            if fabric.error is not None or time.monotonic() > deadline:
                return
            time.sleep(0.5)
        while scripted and time.time() >= start + scripted[0][0]:
            at, text = scripted.pop(0)
            _say(f"  {offset(at):>6}  EVENT {text}")
        status = service.status()
        interval = status.get("interval")
        if not interval or interval["start"] == seen_interval:
            continue
        seen_interval = interval["start"]
        reported_until = interval["start"] + interval["seconds"]
        hotspots = [h for h in service.hotspots() if h["end"] is None]
        down = sorted(n for n, h in status["collectors"].items() if not h["up"])
        _say(f"  {offset(round(interval['start'] + interval['seconds'] - start)):>6}  "
             f"{interval['samples']:6,} samples on {interval['link_directions']} link "
             f"directions, {status['ports_with_rates']} ports with counter rates, "
             f"{plural(len(hotspots), 'hotspot')} active"
             + (f"; not answering: {', '.join(down)}" if down else ""))
        for hot in hotspots:
            key = (hot["port"], hot["direction"], hot["start"])
            if key not in seen_hot:
                seen_hot.add(key)
                first_hot = first_hot or time.monotonic() - began
                _say(_hotspot(hot, start, first_hot))


def _hotspot(hot: dict[str, Any], start: float, after: float) -> str:
    def shares(items: list[dict[str, Any]]) -> str:
        return ", ".join(f"{_plain(s['name'])} {s['share']:.0%} ({s['share_low']:.0%}-"
                         f"{s['share_high']:.0%}, {s['samples']} samples)"
                         for s in items) or "-"

    link = hot["port"].removeprefix("port:").replace("/", ":", 1)
    lines = [f"  HOTSPOT {link} {hot['direction']}: {', '.join(hot['kinds'])} "
             f"({hot['severity']}) since {offset(round(hot['start'] - start))} "
             f"[{after:.0f} s after the demo started]",
             f"    culprits:  {shares(hot['culprits'])}; jobs {shares(hot['culprit_jobs'])}",
             f"    victims:   {shares(hot['victims'])}; jobs {shares(hot['victim_jobs'])}"]
    if hot["throttled"]:
        lines.append(f"    throttled by CNPs: {shares(hot['throttled'])}")
    if hot["noisy_neighbour"]:
        lines.append(f"    noisy neighbour: {hot['noisy_neighbour']}")
    return "\n".join(lines)


def _finish(out: Path, service: Services, model: Any, records: list, began: float) -> bool:
    """Exports, ground truth and the service's hotspots once the traffic is over; then
    the service scored against the truth: whether it met every target."""
    from correlator.cli.simulate import score_limits
    from simulator.reported import read_log, union
    from simulator.score import score
    from simulator.truth import write_truth
    from topology.export import export_graph
    from topology.snapshot import save_snapshot

    _wait_for_interval(service, model.start + model.scenario.seconds)
    fabric = service.fabric()
    if service.inlet is not None:  # the shards' facts built into one
        save_snapshot(fabric, service.topology)
    for fmt, file in EXPORTS.items():
        export_graph(fabric, fmt, out / file)
    write_truth(out / "truth.jsonl", records)
    hotspots = service.hotspots()
    (out / "hotspots.json").write_text(json.dumps(hotspots, indent=1) + "\n")
    logs = [str(log.relative_to(out)) for log in service.logs]
    _say(f"traffic over after {time.monotonic() - began:.0f} s; wrote {out}/: topology.json, "
         f"{', '.join(EXPORTS.values())}, {', '.join(logs)}, hotspots.json, truth.jsonl")
    attributions = union([read_log(log)[0] for log in service.logs])
    report = score(records, attributions, hotspots, score_limits(Thresholds()))
    onset = report.onset_to_report_s
    _say(f"accuracy against the ground truth (fabcorr simulate score --truth {out}/truth.jsonl "
         f"{' '.join(f'--log {out}/{log}' for log in logs)} --hotspots {out}/hotspots.json):\n"
         f"  tenant shares inside the 95 % bound: {report.within_fraction or 0:.1%} of "
         f"{report.link_intervals} link-intervals with >= {report.min_samples} samples; "
         f"tenant bytes inside theirs: {report.bytes_within_fraction or 0:.1%} of "
         f"{report.tenant_intervals}\n"
         f"  hotspots: {len(report.true_hotspots)} true, {len(report.reported_hotspots)} "
         f"reported, precision {report.precision:.0%}, recall {report.recall:.0%}, culprit "
         f"right {report.culprit_accuracy:.0%}"
         + (f", reported {max(onset):.0f} s after onset at most" if onset else "") + "\n"
         f"  verdict: {'pass' if report.passed else 'FAIL: ' + '; '.join(report.failures)}")
    return report.passed


def _wait_for_interval(service: Services, end: float, timeout_s: float = 120.0) -> None:
    """Until the service has published the interval that ends at ``end`` (it waits for
    the counter readings past it first) and judged hotspots up to it (once it is
    corrected, if it was provisional); a slow machine only takes longer."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        status = service.status()
        interval = status.get("interval")
        if interval and interval["start"] + interval["seconds"] >= end - 1e-3 \
                and status["hotspots"]["judged_until"] >= end - 1e-3:
            return
        time.sleep(0.2)
    raise SourceError(f"fabcorr run did not publish the interval ending at {end:.0f} within "
                      f"{timeout_s:g} s")


def _serve_on(duration: float | None, began: float, service: Services) -> None:
    if duration is None:
        return
    serving = ", ".join(f"{url}/metrics and {url}/api/v1/" for url in service.urls)
    if duration == 0:
        _say(f"serving {serving} until Ctrl-C")
        while True:
            time.sleep(3600)
    left = duration - (time.monotonic() - began)
    if left > 0:
        _say(f"serving {serving} for {left:.0f} s more")
        time.sleep(left)


def _counted(summary: dict[str, Any]) -> str:
    nodes, links = summary.get("nodes", {}), summary.get("links", {})
    cables = ", ".join(f"{sum(states.values())} {tier}" for tier, states in links.items())
    return (f"{nodes.get('switch', 0)} switches discovered, {nodes.get('pod', 0)} pods "
            f"joined, cables: {cables}")


def _plain(name: str) -> str:
    return name.partition(":")[2] if ":" in name else name


def _wait_until(moment: float) -> None:
    time.sleep(max(0.0, moment - time.time()))


def _say(text: str) -> None:
    print(text, flush=True)

