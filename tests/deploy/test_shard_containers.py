"""Issue 17's shard test with containers of the project's image on a private Docker
network: three ``fabcorr run --shard I/3``, a single ``fabcorr run`` beside them and a
``fabcorr inlet`` in front of the shards (which it finds by their container names), all
on the example's snapshot with 2 s intervals and no telemetry. The host plays the
switches: the snapshot's copy gives them the network's gateway (the host's address on
it) as their management address, and every burst goes to the single process and to the
inlet from there. In every clean interval (see
:func:`~tests.correlator.service.sharding.send_burst`) the union of the shards'
attributions is the single process's, exactly, and a real Prometheus scraping the four
sums the tenants' bytes over the shards as the single process has them. Then a shard's
container is killed (SIGKILL) and started again: while it is down its switches'
directions are missing and every other one is the single process's, the inlet counts
what it could not deliver to it and to no other shard, and once it is back its
directions are the single process's again.

Skips, saying why, only without a running Docker engine (see
:func:`~tests.deploy.containers.build_image`)."""

from __future__ import annotations

import json
import time
import uuid
from collections import Counter
from pathlib import Path

import yaml

from correlator.shards import owner
from tests.correlator.service import prometheus
from tests.correlator.service.example_view import SNAPSHOT
from tests.correlator.service.sharding import (
    INTERVAL_S,
    SHARDS,
    Bursts,
    InletCounts,
    Switches,
    burst,
    by_direction,
    logged,
    until_agreed,
)
from tests.deploy.containers import answers, docker, ip, logs, subnet, wait
from topology.schema import NodeKind
from topology.snapshot import load_snapshot

SFLOW, HTTP = 6343, 9460  # every container's own ports
KILLED = 1


def _snapshot(gateway: str, path: Path) -> None:
    """The example's snapshot with every switch managed from ``gateway``: where the host
    sends their sFlow from (their agent addresses stay what the datagrams carry)."""
    data = json.loads(SNAPSHOT.read_text())
    switches = data["facts"]["switches"]
    column = switches["fields"].index("mgmt_address")
    for row in switches["rows"]:
        row[column] = gateway
    nodes = next(t for t in data["graph"]["nodes"] if t["kind"] == "switch")
    column = nodes["fields"].index("mgmt_address") + 1  # after the node's ID
    for row in nodes["rows"]:  # the switches' nodes carry the same fields as their facts
        row[column] = gateway
    path.write_text(json.dumps(data))


class Fabric:
    """The containers, by role, on a network of their own."""

    def __init__(self, image: str, folder: Path) -> None:
        self.image, self.folder = image, folder
        self.tag = f"fabcorr-shards-{uuid.uuid4().hex[:8]}"
        self.network = f"{self.tag}-net"
        self.containers: list[str] = []
        docker("network", "create", self.network)
        self.subnet, self.gateway = subnet(self.network)
        _snapshot(self.gateway, folder / "topology.json")

    def shard(self, index: int | None) -> str:
        return f"{self.tag}-{'alone' if index is None else f'shard-{index}'}"

    def start(self, name: str, *args: str, log: Path | None = None) -> None:
        mounts = ["-v", f"{self.folder}:/etc/fabcorr:ro"]
        if log is not None:
            log.mkdir(mode=0o777)
            log.chmod(0o777)  # the container's user 65532 writes its log there
            mounts += ["-v", f"{log}:/var/log/fabcorr"]
        docker("run", "-d", "--name", name, "--network", self.network, "--read-only",
               "--tmpfs", "/tmp", *mounts, self.image, *args)
        self.containers.append(name)

    def url(self, name: str) -> str:
        return f"http://{ip(name, self.network)}:{HTTP}"

    def close(self) -> None:
        for name in self.containers:
            docker("rm", "-f", name, check=False)
        docker("network", "rm", self.network, check=False)


def _config(relays: list[str], log: bool = True) -> dict:
    """A shard's configuration (the inlet's: without the attribution log)."""
    return {"topology": {"snapshot": "/etc/fabcorr/topology.json", "discover_every_s": 0},
            "service": {"listen": f"0.0.0.0:{HTTP}"},
            "sflow": {"listen": f"0.0.0.0:{SFLOW}", "relays": relays},
            "attribution": {"interval_s": INTERVAL_S, **(
                {"log": "/var/log/fabcorr/attribution.jsonl"} if log else {})},
            "shards": {"count": SHARDS}}


def _resolved(inlet: str) -> bool:
    """Whether the inlet's last word on the shards' addresses has them all."""
    said = [line for line in logs(inlet).splitlines() if "shards at " in line]
    return bool(said) and "unresolved" not in said[-1]


def test_shard_containers_answer_as_one_process_and_survive_a_killed_shard(image, tmp_path):
    tmp_path.chmod(0o755)  # the containers' user 65532 reads the configuration
    fabric = Fabric(image, tmp_path)
    switches: Switches | None = None
    try:
        inlet = f"{fabric.tag}-inlet"
        (tmp_path / "inlet.yaml").write_text(yaml.safe_dump(_config([], log=False)))
        fabric.start(inlet, "inlet", "--config", "/etc/fabcorr/inlet.yaml",
                     "--resolve-every", "1",
                     *(f"--shard-address={fabric.shard(i)}:{SFLOW}" for i in range(SHARDS)))
        inlet_ip = ip(inlet, fabric.network)
        # the shards trust the inlet; the single process hears the switches themselves
        (tmp_path / "fabcorr.yaml").write_text(yaml.safe_dump(_config([inlet_ip])))
        for index in (None, *range(SHARDS)):
            name = fabric.shard(index)
            fabric.start(name, "run", "--config", "/etc/fabcorr/fabcorr.yaml",
                         *(["--shard", f"{index}/{SHARDS}"] if index is not None else []),
                         log=tmp_path / name)
        names = [fabric.shard(i) for i in (None, *range(SHARDS))]
        for name in [*names, inlet]:
            wait(lambda n=name: answers(fabric.url(n) + "/readyz"), 180, f"{name} ready",
                 lambda n=name: logs(n))
        wait(lambda: _resolved(inlet), 30, "the inlet resolving every shard",
             lambda: logs(inlet))
        counts = InletCounts(fabric.url(inlet))
        switches = Switches([(ip(fabric.shard(None), fabric.network), SFLOW),
                             (inlet_ip, SFLOW)], source=fabric.gateway)
        datagrams = burst()
        assert sorted(Counter(owner(switch, SHARDS) for _, switch, _ in datagrams)) == \
            [0, 1, 2]  # every shard has datagrams

        def log(index: int | None) -> dict[float, dict]:
            return logged(tmp_path / fabric.shard(index) / "attribution.jsonl")

        # the union of the shards is the single process, and so are Prometheus' sums
        targets = [f"{ip(name, fabric.network)}:{HTTP}" for name in names]
        with prometheus.running(targets) as server:
            clean, agreed = until_agreed(server, switches, datagrams, counts, 4)
            assert set(agreed) >= {"team-a", "team-b"}
            labels = {r["metric"].get("shard", "") for r in server.query("fabcorr_ready")}
            assert labels == {"", "0", "1", "2"}
        wait(lambda: all(max(log(i), default=0) >= clean[-1] for i in (None, *range(SHARDS))),
             60, "the last clean interval logged everywhere", lambda: logs(names[0]))
        for start in clean:
            found = [link for i in range(SHARDS) for link in log(i)[start]["links"]]
            assert max(Counter((link["port"], link["direction"]) for link in found).values()
                       ) == 1  # no direction attributed by two shards
            assert by_direction(found) == by_direction(log(None)[start]["links"])
            assert sum(link["samples"] for link in found) > 0

        # one shard's container killed and started again
        victim = fabric.shard(KILLED)
        snapshot = load_snapshot(SNAPSHOT)
        mine = {p for p in snapshot.nodes_of(NodeKind.PORT)
                if owner(snapshot.attrs(p)["switch"], SHARDS) == KILLED}
        dropped = counts.counts("fabcorr_inlet_dropped_datagrams_total")
        with Bursts(switches, counts) as bursts:
            docker("kill", victim)
            down = time.time()
            wait(lambda: bursts.after(down) >= 3, 60, "three clean bursts while it is down",
                 lambda: logs(inlet))
            launched = time.time()
            docker("start", victim)
            wait(lambda: answers(fabric.url(victim) + "/readyz"), 180, "the shard back",
                 lambda: logs(victim))
            wait(lambda: _resolved(inlet), 30, "the inlet resolving it again",
                 lambda: logs(inlet))
            up = time.time()
            wait(lambda: bursts.in_intervals_after(up) >= 2, 60,
                 "two clean bursts in intervals after it is back", lambda: logs(victim))
            sent = list(bursts.sent)
        lost: Counter = Counter()  # per shard, whatever the cause (refused, unresolved)
        causes = {}
        for key, value in counts.counts("fabcorr_inlet_dropped_datagrams_total").items():
            lost[key[0]] += value - dropped.get(key, 0.0)
            causes[key] = value - dropped.get(key, 0.0)
        print(f"\ninlet drops while shard {KILLED} was down, by (shard, cause): "
              f"{ {key: n for key, n in causes.items() if n} }")
        assert lost["1"] > 0 and lost["0"] == lost["2"] == 0, lost
        last = max(start for start, _, _ in sent)
        wait(lambda: all(max(log(i), default=0) >= last for i in (None, *range(SHARDS))),
             60, "the last interval logged everywhere", lambda: logs(victim))
        single, own, others = log(None), log(KILLED), [log(0), log(2)]
        seen: Counter = Counter()
        for start, began, ended in sent:
            expected = by_direction(single[start]["links"])
            theirs = by_direction([link for other in others for link in other[start]["links"]])
            assert theirs == {key: link for key, link in expected.items() if key[0] not in mine}
            whole = {key: link for key, link in expected.items()
                     if key[0] in mine and link["samples"]}
            found = {key: link for key, link in by_direction(
                own.get(start, {"links": []})["links"]).items() if link["samples"]}
            assert whole
            assert found in ({}, whole)  # never a part of an interval
            when = ("after" if start > up else "down" if down < began and ended < launched
                    else "other")
            if when != "other":
                assert found == ({} if when == "down" else whole), when
            seen[when] += 1
        assert seen["down"] >= 3 and seen["after"] >= 2, seen
        print(f"clean bursts: {len(clean)} before the kill, then {dict(seen)}")
    finally:
        if switches is not None:
            switches.close()
        fabric.close()

