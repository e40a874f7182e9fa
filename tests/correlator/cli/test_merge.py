"""Merging the shards' answers (:mod:`correlator.cli.merge`), and the servers a
``--server`` list or headless Service name stands for (:mod:`correlator.cli.servers`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from correlator.cli import merge, servers
from inventory.errors import SourceUnreachable


def _hot(port: str, direction: str, end: float | None, throttled=()) -> dict:
    return {"port": port, "direction": direction, "end": end, "peer": "port:x/E1",
            "throttled": list(throttled)}


def test_hotspots_active_by_port_then_ended_most_recent_first():
    shard0 = [_hot("port:b/E1", "out", None), _hot("port:a/E1", "in", 10.0)]
    shard1 = [_hot("port:a/E2", "out", None), _hot("port:c/E1", "in", 12.0),
              _hot("port:a/E1", "out", 10.0)]
    assert [(h["port"], h["direction"], h["end"]) for h in merge.hotspots([shard0, shard1])] \
        == [("port:a/E2", "out", None), ("port:b/E1", "out", None),
            ("port:c/E1", "in", 12.0), ("port:a/E1", "out", 10.0), ("port:a/E1", "in", 10.0)]


def _traffic(port: str, direction: str, samples: int, throttled=()) -> dict:
    return {"port": port, "direction": direction, "samples": samples,
            "throttled": list(throttled)}


def _who(into, out) -> dict:
    return {"link": "a:E1", "peer": "b:E1", "start": 0.0, "seconds": 2.0, "in": into,
            "out": out}


def test_a_direction_comes_from_its_own_end_first_then_the_far_end():
    own_in = _traffic("port:a/E1", "in", 5)
    far_in = _traffic("port:b/E1", "out", 7)  # the peer's egress: what a/E1 receives
    far_out = _traffic("port:b/E1", "in", 3)
    unsampled_out = _traffic("port:a/E1", "out", 0)
    merged = merge.who([_who(far_in, unsampled_out), _who(own_in, far_out)])
    assert (merged["in"], merged["out"]) == (own_in, far_out)
    assert merge.who([_who(None, unsampled_out), _who(None, None)])["out"] == unsampled_out
    assert merge.who([_who(None, None), _who(None, None)])["in"] is None


def _top(start: float, *rows: tuple[str, str, float]) -> dict:
    return {"link": None, "start": start, "seconds": 2.0,
            "rows": [{"tier": t, "name": n, "bytes_per_second": r} for t, n, r in rows]}


def test_fabric_wide_top_sums_per_tier_then_ranks_and_cuts():
    merged = merge.top([_top(4.0, ("host", "a", 1.5), ("host", "b", 2.0), ("leaf-spine", "a", 1.0)),
                        _top(2.0, ("host", "a", 1.0), ("host", "c", 0.5))], limit=2)
    assert merged == {"link": None, "start": 2.0, "seconds": 2.0, "rows": [
        {"tier": "host", "name": "a", "bytes_per_second": 2.5},
        {"tier": "host", "name": "b", "bytes_per_second": 2.0},
        {"tier": "leaf-spine", "name": "a", "bytes_per_second": 1.0}]}


def test_a_link_top_takes_each_direction_from_the_shard_that_sampled_it():
    into, out = _traffic("port:a/E1", "in", 5), _traffic("port:b/E1", "in", 3)
    rows0 = [{"direction": "in", "name": "a"}, {"direction": "out", "name": "stale"}]
    rows1 = [{"direction": "out", "name": "b"}]
    tops = [{"link": "a:E1", "start": 0.0, "seconds": 2.0, "rows": rows0},
            {"link": "a:E1", "start": 0.0, "seconds": 2.0, "rows": rows1}]
    merged = merge.top_link(tops, [_who(into, _traffic("port:a/E1", "out", 0)),
                                   _who(None, out)])
    assert merged["rows"] == [{"direction": "in", "name": "a"}, {"direction": "out", "name": "b"}]


def test_a_name_stands_for_each_of_its_addresses():
    asked = []

    def resolve(host: str, port: int) -> list[str]:
        asked.append((host, port))
        return {"shards": ["10.0.0.1", "10.0.0.2", "10.0.0.1"], "one": ["10.0.0.9"]}[host]

    assert servers.expand(["http://u:p@shards:8080/x", "https://one", "http://10.0.0.5:1"],
                          resolve) == ["http://u:p@10.0.0.1:8080/x",
                                       "http://u:p@10.0.0.2:8080/x", "https://one",
                                       "http://10.0.0.5:1"]
    assert asked == [("shards", 8080), ("one", 443)]


def test_a_name_that_does_not_resolve_is_unreachable():
    with pytest.raises(SourceUnreachable, match=r"cannot resolve no-such-host\.invalid"):
        servers.addresses("no-such-host.invalid", 80)


def _status(start: float | None, samples: int = 0, judged: float = 0.0,
            collectors: dict | None = None) -> dict:
    interval = None if start is None else {"start": start, "seconds": 5.0, "samples": samples,
                                           "link_directions": samples // 10}
    return {"ready": True, "interval": interval, "ports_with_rates": 4,
            "hotspots": {"active": 1, "ended": 2, "judged_until": judged},
            "collectors": collectors or {}}


def test_a_status_sums_the_shards_intervals_of_one_start():
    answers = [_status(10.0, 100, 5.0, {"leaf01": {"up": True}}),
               _status(15.0, 30, 10.0, {"spine01": {"up": False}})]
    assert merge.status(answers, [answers[0]["interval"], _status(10.0, 50)["interval"]]) == {
        "ready": True, "ports_with_rates": 8,
        "interval": {"start": 10.0, "seconds": 5.0, "samples": 150, "link_directions": 15},
        "hotspots": {"active": 2, "ended": 4, "judged_until": 5.0},
        "collectors": {"leaf01": {"up": True}, "spine01": {"up": False}}}
    assert merge.status(answers, None)["interval"] is None


def test_the_demo_follows_the_latest_interval_every_shard_was_seen_to_close(monkeypatch):
    """The shards close an interval at moments of their own: asked while shard 0 is one
    behind, the merged status is of the last interval both were seen at."""
    from correlator.cli import demo_services

    asked = iter([[_status(None), _status(10.0, 20)],  # shard 0 not ready yet
                  [_status(10.0, 100), _status(15.0, 30)],
                  [_status(15.0, 60), _status(20.0, 40)],
                  [_status(20.0, 70), _status(20.0, 40)]])
    pending: list[dict] = []
    monkeypatch.setattr(demo_services, "get", lambda url, _: pending.pop(0))
    services = demo_services.Services([], ["http://a", "http://b"], [], ("", 0),
                                      Path("topology.json"), None)
    found = []
    for answers in asked:
        pending[:] = answers
        interval = services.status()["interval"]
        found.append(interval and (interval["start"], interval["samples"]))
    assert found == [None, (10.0, 120), (15.0, 90), (20.0, 110)]
