"""Shutdown in the middle of an interval's attribution: that interval is still published and
logged, before the interval in progress."""

import asyncio
import itertools
import json
import threading

import pytest

from correlator import engine as engine_module
from correlator.service.config import service_config_from
from correlator.service.service import Service
from tests.correlator.service.running import EXAMPLE, free_port


def test_a_stop_while_an_interval_is_attributed_still_publishes_and_logs_it(tmp_path,
                                                                           monkeypatch):
    log = tmp_path / "attribution.jsonl"
    config = service_config_from({
        "topology": {"snapshot": str(EXAMPLE / "topology.json"), "discover_every_s": 0},
        "service": {"listen": "127.0.0.1:0"},
        "sflow": {"listen": f"127.0.0.1:{free_port()}"},
        "attribution": {"interval_s": 0.2, "log": str(log)}}, "test", {})
    attribute, close_interval = engine_module.attribute, Service._close_interval
    shutting_down = threading.Event()

    async def run() -> Service:
        stop, loop = asyncio.Event(), asyncio.get_running_loop()
        calls = []

        def attribute_held(*args, **kwargs):
            calls.append(1)
            if len(calls) == 1:  # the first interval: stop the service while attributing it
                loop.call_soon_threadsafe(stop.set)
                assert shutting_down.wait(60), "the service never closed its last interval"
            return attribute(*args, **kwargs)

        async def close_interval_noted(self):
            shutting_down.set()
            await close_interval(self)

        monkeypatch.setattr(engine_module, "attribute", attribute_held)
        monkeypatch.setattr(Service, "_close_interval", close_interval_noted)
        service = Service(config)
        await service.run(stop)
        return service

    service = asyncio.run(run())
    lines = [json.loads(line)["attribution"] for line in log.read_text().splitlines()]
    # the interval stopped in comes first, the one in progress last; a busy machine may close
    # more on the way out (0.2 s intervals), each starting where the one before ended
    assert service._published == len(lines) >= 2
    for before, after in itertools.pairwise(lines):
        assert after["start"] == pytest.approx(before["start"] + before["seconds"], abs=1e-6)
