"""Table cells of attributed traffic, from its data (link directions, shares and hotspots as
``to_data`` gives them, or as the API sends them): names, shares with their 95 % interval."""

from __future__ import annotations

from typing import Any

from correlator.cli.human import count, local_time, short_name

TRAFFIC_COLUMNS = ["samples", "bytes", "util", "tenants (share, 95%)"]
WIDE_COLUMNS = ["jobs", "top pods", "throttled by CNPs"]
HOTSPOT_COLUMNS = ["link", "dir", "kinds", "severity", "start", "end", "culprits", "victims",
                   "throttled by CNPs", "noisy neighbour"]
HOTSPOT_WIDE = ["culprit jobs", "victim jobs", "peer", "signals"]


def pct(share: dict[str, Any]) -> str:
    """``85.6% (85.0%-86.3%)``: a share and its 95 % interval."""
    return f"{share['share']:.1%} ({share['share_low']:.1%}-{share['share_high']:.1%})"


def names(shares: list[dict[str, Any]], first: int = 3) -> str:
    """The first shares as ``name share (interval)``, comma-separated."""
    return ", ".join(f"{short_name(s['name'])} {pct(s)}" for s in shares[:first])


def link_name(port: str) -> str:
    """``leaf01:Ethernet1`` for the port ID ``port:leaf01/Ethernet1``."""
    return short_name(port).replace("/", ":", 1)


def traffic_cells(link: dict[str, Any], wide: bool) -> list[Any]:
    """Samples, bytes (``~``: a sampled estimate), utilization and tenants of a link
    direction; ``wide`` adds jobs, top pods and the jobs CNPs throttle."""
    exact = link["counter_bytes"]
    utilization = link["utilization"]
    cells: list[Any] = [
        count(link["samples"]),
        count(exact if exact is not None else link["estimated_bytes"])
        + ("" if exact is not None else "~"),
        "" if utilization is None else f"{utilization:.0%}",
        names(link["tenants"]) or ("ok" if link["samples"] else "no samples")]
    if wide:
        cells += [names(link["jobs"]), names(link["pods"]), names(link["throttled"])]
    return cells


def hotspot_row(hot: dict[str, Any], wide: bool = False) -> list[Any]:
    """The :data:`HOTSPOT_COLUMNS` of one hotspot; ``wide`` adds :data:`HOTSPOT_WIDE`."""
    return [link_name(hot["port"]), hot["direction"], ",".join(hot["kinds"]), hot["severity"],
            local_time(hot["start"]), "active" if hot["end"] is None else local_time(hot["end"]),
            names(hot["culprits"]), names(hot["victims"]), names(hot["throttled"]),
            hot["noisy_neighbour"],
            *([names(hot["culprit_jobs"]), names(hot["victim_jobs"]), link_name(hot["peer"])
               if hot["peer"] else "", signal_text(hot["signals"])] if wide else [])]


def signal_text(signals: dict[str, float]) -> str:
    """Congestion signals: utilization in percent, the others per second.

    >>> signal_text({"utilization": 0.912, "pfc": 250.0, "ecn": 1234.5})
    'utilization 91%, pfc 250/s, ecn 1,234/s'
    """
    return ", ".join(f"{k} {v:.0%}" if k == "utilization" else f"{k} {v:,.0f}/s"
                     for k, v in signals.items())
