"""Per-priority PFC and ECN counters of three vendor MIBs, polled from snmpsim agents.

snmpsim (a real SNMP agent serving recorded data) stands in for Arista, NVIDIA/Mellanox
and SONiC switches, which cannot run here; its ``numeric`` variation makes counters grow
at a known rate per second, and an ``-rebooted`` community serves the same device after a
reboot (low sysUpTime, counters restarted).
"""

import asyncio
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from inventory.devices import Secret, SnmpOptions, SwitchConfig
from inventory.errors import SourceError
from inventory.snmp import poll_counters

IF_NAME, IF_HC_IN = "1.3.6.1.2.1.31.1.1.1.1", "1.3.6.1.2.1.31.1.1.1.6"
PFC = {  # vendor -> (rx subtree, tx subtree), indexed .<ifIndex>.<priority>
    "eos": ("1.3.6.1.4.1.30065.3.11.1.1.1.4", "1.3.6.1.4.1.30065.3.11.1.1.1.3"),
    "cumulus": ("1.3.6.1.4.1.33049.15.1.2.1.3", "1.3.6.1.4.1.33049.15.1.2.1.5"),
    "sonic": ("1.3.6.1.4.1.9.9.813.1.2.1.2", "1.3.6.1.4.1.9.9.813.1.2.1.3"),
}
ECN_EOS = "1.3.6.1.4.1.30065.3.13.1.9.1.4"
RX_RATE, TX_RATE, ECN_RATE, OCTET_RATE = 700, 300, 40, 5_000_000


def _key(line: str) -> tuple[int, ...]:
    return tuple(int(part) for part in line.split("|")[0].split("."))


def snmprec(vendor: str, uptime: int, initial: int) -> str:
    """Two ports (ifIndex 1001, 1002); priority 3 pauses grow on port 1001."""
    rx, tx = PFC[vendor]
    lines = [f"1.3.6.1.2.1.1.3.0|67|{uptime}"]
    for index, name in ((1001, "Ethernet1"), (1002, "Ethernet2")):
        lines += [f"{IF_NAME}.{index}|4|{name}",
                  f"{IF_HC_IN}.{index}|70:numeric|rate={OCTET_RATE},initial={initial}"]
        for priority in range(8):
            rising = index == 1001 and priority == 3
            lines += [f"{rx}.{index}.{priority}|70:numeric|rate={RX_RATE if rising else 0},"
                      f"initial={initial}",
                      f"{tx}.{index}.{priority}|70:numeric|rate={TX_RATE if rising else 0},"
                      f"initial={initial}"]
    if vendor == "eos":
        lines += [f"{ECN_EOS}.1001.3|70:numeric|rate={ECN_RATE},initial={initial}"]
    return "\n".join(sorted(lines, key=_key)) + "\n"


@pytest.fixture(scope="module")
def agent(tmp_path_factory):
    responder = Path(sys.executable).parent / "snmpsim-command-responder"
    if not responder.exists() and shutil.which("snmpsim-command-responder") is None:
        pytest.fail("snmpsim is a dev dependency: `make test` installs it")
    data = tmp_path_factory.mktemp("snmpsim")
    for vendor in PFC:
        (data / f"{vendor}.snmprec").write_text(snmprec(vendor, 987_654_321, 10**12))
        (data / f"{vendor}-rebooted.snmprec").write_text(snmprec(vendor, 1_500, 0))
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    log = (data.parent / "snmpsim.log").open("w")
    process = subprocess.Popen(
        [str(responder), f"--data-dir={data}", f"--agent-udpv4-endpoint=127.0.0.1:{port}",
         f"--cache-dir={data.parent / 'snmpsim-cache'}"],
        stdout=log, stderr=subprocess.STDOUT, env={**os.environ, "SNMPSIM_ALLOW_ROOT": "true"})
    try:
        yield port
    finally:
        process.terminate()
        process.wait(timeout=10)


def switch(vendor: str, port: int, community: str | None = None) -> SwitchConfig:
    return SwitchConfig(f"{vendor}-1", "127.0.0.1", vendor=vendor, snmp=SnmpOptions(
        port=port, community=Secret(community or vendor), timeout_s=10.0, retries=3))


def poll(config: SwitchConfig) -> tuple[dict, float, float]:
    """The readings by port, and wall-clock times before and after the poll that gave them."""
    for _ in range(20):  # the agent indexes its data on first start
        before = time.time()
        try:
            readings = {c.port: c for c in asyncio.run(poll_counters(config))}
        except SourceError:  # not answering yet
            time.sleep(0.5)
            continue
        return readings, before, time.time()
    raise AssertionError("snmpsim did not answer")


@pytest.mark.parametrize("vendor", list(PFC))
def test_per_priority_pfc_counters_grow_at_the_agent_rate(agent, vendor):
    first, start1, end1 = poll(switch(vendor, agent))
    time.sleep(4)
    second, start2, end2 = poll(switch(vendor, agent))
    one, two = first["Ethernet1"], second["Ethernet1"]
    # snmpsim computes each value when it serves it, as initial + rate * (its clock - its
    # start), truncated: at some moment of each poll. So between the two polls a counter
    # grew by rate times at least start2 - end1 and at most end2 - start1 seconds, give or
    # take 1 for the truncation, however long a busy machine made the polls take.
    rates = {"pfc_rx_pause/3": RX_RATE, "pfc_tx_pause/3": TX_RATE}
    if vendor == "eos":
        rates["queue_ecn_marked/3"] = ECN_RATE
    for name, rate in rates.items():
        grown = two.values[name] - one.values[name]
        assert rate * (start2 - end1) - 1 <= grown <= rate * (end2 - start1) + 1, name
    assert two.values["pfc_rx_pause/2"] == one.values["pfc_rx_pause/2"] == 10**12
    assert sorted(k for k in two.values if k.startswith("pfc_")) == sorted(
        f"pfc_{d}_pause/{p}" for d in ("rx", "tx") for p in range(8))
    assert (two.uptime_s, second["Ethernet2"].values["pfc_tx_pause/3"]) == (9876543.21, 10**12)


def test_a_rebooted_agent_reports_lower_uptime_and_counters(agent):
    before = poll(switch("eos", agent))[0]["Ethernet1"]
    after = poll(switch("eos", agent, "eos-rebooted"))[0]["Ethernet1"]
    assert after.uptime_s == 15.0 < before.uptime_s
    assert after.values["pfc_rx_pause/3"] < before.values["pfc_rx_pause/3"]
