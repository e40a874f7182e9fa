"""One fabric-wide answer from the answers of several shards (``fabcorr run --shard``) to
the same API question: pure functions over the JSON bodies, no I/O.

Each link direction is attributed by one shard and each hotspot judged by one, so:
hotspots are the union (active by port and direction, then ended ones most recent first,
as one process lists them); the fabric-wide ``top`` sums each sender's bytes/s per tier
over the shards (each asked for every sender, then ranked and cut here); a link's two
directions (``who``, ``top --link``) come from whichever shard sampled them, the port's
own end first, as :func:`~correlator.attribution.hotspots.traffic_of` picks; the topology
is built here from every shard's switches' facts (each discovers its own) and one
shard's inventory (each holds it whole), as one process builds it. A status (``fabcorr
demo --shards``) sums the shards' intervals of one start. A cross-shard hotspot's
``throttled`` stays empty: the single process takes it from the reverse direction in the
hotspot's best-sampled interval, which the other shard's API does not keep (its last
interval's is another one).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from inventory.factfile import facts_from_document
from inventory.facts import merge_all
from topology.build import build_graph
from topology.graph import FabricGraph


def hotspots(answers: Sequence[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """Active hotspots by port and direction, then ended ones, most recently ended first."""
    found = [h for answer in answers for h in answer]
    active = sorted((h for h in found if h["end"] is None),
                    key=lambda h: (h["port"], h["direction"]))
    ended = sorted((h for h in found if h["end"] is not None),
                   key=lambda h: (h["end"], h["port"], h["direction"]), reverse=True)
    return active + ended


def fabric(workloads: dict[str, Any], shards: Sequence[tuple[dict[str, Any], dict[str, Any]]]
           ) -> FabricGraph:
    """The whole fabric from one shard's ``topology/facts?part=workloads`` and every
    shard's ``?part=switches`` and ``?part=hosts``."""
    documents = [(workloads, "the workloads"), *(
        (answer, f"shard {i}'s {part}") for i, answers in enumerate(shards)
        for part, answer in zip(("switches", "hosts"), answers, strict=True))]
    return build_graph(merge_all(facts_from_document(answer, origin)
                                 for answer, origin in documents))


def top(answers: Sequence[dict[str, Any]], limit: int) -> dict[str, Any]:
    """The fabric-wide top list: each (tier, name)'s bytes/s summed over the shards (each
    answer listing every sender), the ``limit`` biggest per tier."""
    rates: dict[tuple[str, str], float] = {}
    for answer in answers:
        for row in answer["rows"]:
            key = (row["tier"], row["name"])
            rates[key] = rates.get(key, 0.0) + row["bytes_per_second"]
    rows: list[dict[str, Any]] = []
    for tier in sorted({tier for tier, _ in rates}):
        ranked = sorted((-rate, name) for (t, name), rate in rates.items() if t == tier)
        rows += [{"tier": tier, "name": name, "bytes_per_second": -rate}
                 for rate, name in ranked[:limit]]
    return {"link": None, **_when(answers), "rows": rows}


def who(answers: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """A link's ``in`` and ``out`` from the shards that sampled them."""
    merged = dict(answers[0])
    for key in ("in", "out"):
        merged[key] = _direction(key, [answer[key] for answer in answers])
    return merged


def top_link(tops: Sequence[dict[str, Any]], whos: Sequence[dict[str, Any]]
             ) -> dict[str, Any]:
    """A link's top list: each direction's rows from the shard whose traffic :func:`who`
    picks (``tops[i]`` and ``whos[i]`` are shard i's)."""
    picked = who(whos)
    rows: list[dict[str, Any]] = []
    for key in ("in", "out"):
        index = next((i for i, answer in enumerate(whos)
                      if picked[key] is not None and answer[key] == picked[key]), None)
        if index is not None:
            rows += [row for row in tops[index]["rows"] if row["direction"] == key]
    return {**tops[0], **_when(whos), "rows": rows}


def status(answers: Sequence[dict[str, Any]],
           intervals: Sequence[dict[str, Any]] | None) -> dict[str, Any]:
    """The shards' ``/api/v1/status`` as one: ready when all are; ``intervals`` (each
    shard's of the same start, None: none all closed) summed (samples, link directions);
    ports with rates summed; every shard's collectors; hotspots counted, judged up to
    where all are."""
    interval = None if intervals is None else {
        "start": intervals[0]["start"], "seconds": intervals[0]["seconds"],
        **{key: sum(i[key] for i in intervals) for key in ("samples", "link_directions")}}
    return {"ready": all(answer["ready"] for answer in answers), "interval": interval,
            "ports_with_rates": sum(answer["ports_with_rates"] for answer in answers),
            "hotspots": {key: sum(answer["hotspots"][key] for answer in answers)
                         for key in ("active", "ended")} | {"judged_until": min(
                             answer["hotspots"]["judged_until"] for answer in answers)},
            "collectors": {name: health for answer in answers
                           for name, health in answer["collectors"].items()}}


def _direction(key: str, found: Sequence[dict[str, Any] | None]) -> dict[str, Any] | None:
    """The port's own sampled traffic, else the far end's, else an unsampled one."""
    seen = [traffic for traffic in found if traffic is not None]
    for wanted in (lambda t: t["samples"] and t["direction"] == key,
                   lambda t: t["samples"], lambda t: True):
        match = next((traffic for traffic in seen if wanted(traffic)), None)
        if match is not None:
            return match
    return None


def _when(answers: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The interval the shards answered about: the latest one they all closed."""
    last = min(answers, key=lambda answer: answer["start"])
    return {"start": last["start"], "seconds": last["seconds"]}
