"""The emulated fabric for the image test, run inside a container of the image itself
(its ``simulator`` package): ``serve`` starts the example fabric's switches as gNMI targets
on every address, ports FIRST_PORT + their index in the fact file, prints ``ready`` and
serves until SIGTERM; ``send HOST:PORT`` sends the example's sFlow capture to HOST:PORT
over a few seconds and prints how many datagrams it sent.

    python fabric_agents.py serve FACTS PASSWORD
    python fabric_agents.py send FACTS FLOWS HOST:PORT
"""

from __future__ import annotations

import signal
import socket
import sys
import threading
import time

from inventory.factfile import read_facts
from simulator.gnmi_target import GnmiTarget
from simulator.sflow_run import capture
from simulator.spec import load_capture_spec

FIRST_PORT = 57400
SEND_OVER_S = 5.0


def serve(facts_file: str, password: str) -> None:
    facts = read_facts([facts_file])
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    targets = [GnmiTarget.from_facts(facts, switch.name, host="0.0.0.0",
                                     port=FIRST_PORT + n, username="fabcorr",
                                     password=password, pack=True).start()
               for n, switch in enumerate(facts.switches)]
    print("ready", flush=True)
    stop.wait()
    for target in targets:
        target.stop()


def send(facts_file: str, flows_file: str, to: str) -> None:
    host, port = to.rsplit(":", 1)
    spec = load_capture_spec(flows_file)
    run = capture(read_facts([facts_file]), list(spec.flows), spec.seconds,
                  spec.sampling_rate, time.time(), spec.seed, spec.counter_every_s)
    datagrams = [data for _, data, _ in run.datagrams]
    start = time.monotonic()
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sender:
        for n, data in enumerate(datagrams):
            time.sleep(max(0.0, start + SEND_OVER_S * n / len(datagrams) - time.monotonic()))
            sender.sendto(data, (host, int(port)))
    print(len(datagrams), flush=True)


if __name__ == "__main__":
    {"serve": serve, "send": send}[sys.argv[1]](*sys.argv[2:])
