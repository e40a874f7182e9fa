"""Shards' scopes: every link direction attributed by exactly one shard, every cable
direction judged by exactly one, which reads the counters of both its ends."""

from __future__ import annotations

from collections import Counter

import pytest

from correlator.attribution.hotspots import cable_direction
from correlator.scope import scope_of
from correlator.shards import Shard, owner
from simulator.generator import FabricSpec, generate_facts
from topology.build import build_graph
from topology.schema import NodeKind, port_id

# three tiers: host ports, leaf-spine and spine-super-spine cables
SPEC = FabricSpec(nodes=16, rails=4, leaves_per_rail=2, spines=4, uplinks_per_leaf=4,
                  leaves_per_pod=4, super_spines=2, uplinks_per_spine=2)


@pytest.fixture(scope="module")
def fabric():
    return build_graph(generate_facts(SPEC))


def _switch_peers(fabric):
    found = {}
    for port in fabric.nodes_of(NodeKind.PORT):
        far = fabric.peer(port)
        if far is not None and fabric.kind(far) == NodeKind.PORT:
            found[port] = far
    return found


@pytest.mark.parametrize("count", [1, 2, 3, 5])
def test_every_direction_has_one_owner_and_one_judge(fabric, count):
    scopes = [fabric.cached(scope_of(Shard(i, count))) for i in range(count)]
    ports = fabric.nodes_of(NodeKind.PORT)
    peers = _switch_peers(fabric)
    keys = {cable_direction(peers, port, d) for port in ports for d in ("in", "out")}
    # a cable between switches is one key per direction, under its sender's out
    assert len(keys) == 2 * len(ports) - len(peers)
    attributed = Counter(port for scope in scopes for port in scope.ports)
    assert attributed == Counter(ports)  # each port exactly once
    judged = Counter(key for scope in scopes for key in keys if scope.judges(*key))
    assert judged == Counter(keys)  # each cable direction exactly once
    for scope in scopes:
        for port, direction in keys:
            if scope.judges(port, direction):
                far = peers.get(port)
                assert port in scope.read and (far is None or far in scope.read)
        assert scope.peers <= set(peers)
        assert not scope.peers & scope.ports


def test_cross_shard_cables_are_judged_by_the_receiver(fabric):
    peers = _switch_peers(fabric)
    crossing = [(port, far) for port, far in peers.items()
                if owner(fabric.attrs(port)["switch"], 3) != owner(fabric.attrs(far)["switch"], 3)]
    assert len(crossing) > 20
    for port, far in crossing:
        receiver = owner(fabric.attrs(far)["switch"], 3)
        scope = fabric.cached(scope_of(Shard(receiver, 3)))
        assert scope.judges(port, "out") and port in scope.peers
        sender = fabric.cached(scope_of(Shard(owner(fabric.attrs(port)["switch"], 3), 3)))
        assert not sender.judges(port, "out") and sender.attributes(port)


def test_a_scope_holds_its_switches_agents(fabric):
    scope = fabric.cached(scope_of(Shard(1, 3)))
    switches = {s.name: s for s in fabric.facts.switches}
    assert scope.switches == {name for name in switches if owner(name, 3) == 1}
    assert len(scope.agents) == len(scope.switches)
    assert port_id(sorted(scope.switches)[0], "Ethernet1") in scope.ports
