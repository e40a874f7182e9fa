"""The example scenario as the service would know it at its end: the example fabric, the
synthetic sFlow capture of ``examples/fabric-small/flows.yaml`` (``fabcorr simulate
capture``: team-a floods spine01:Ethernet1 in, team-b shares it and gets CNPs back), and
the :class:`View` its replay gives (three 10 s intervals; the last one is the view's)."""

from __future__ import annotations

from pathlib import Path

from correlator.cli.main import main
from correlator.cli.sflow import read_capture
from correlator.replay import replay, replay_view
from correlator.view import View
from topology.snapshot import load_snapshot

EXAMPLE = Path(__file__).parents[3] / "examples" / "fabric-small"
SNAPSHOT = EXAMPLE / "topology.json"


def make_capture(folder: Path) -> Path:
    """Write the example capture into ``folder``; return its path."""
    pcap = folder / "example.pcap"
    assert main(["simulate", "capture", "--snapshot", str(SNAPSHOT), "--flows",
                 str(EXAMPLE / "flows.yaml"), "--out", str(pcap)]) == 0
    return pcap


def replayed(pcap: Path) -> View:
    """The view at the end of the capture's replay (defaults of ``fabcorr hotspots``)."""
    fabric = load_snapshot(SNAPSHOT)
    return replay_view(fabric, replay(fabric, read_capture(str(pcap))))
