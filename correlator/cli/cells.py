"""Table cells of attributed traffic, from its data (link directions, shares and hotspots as
``to_data`` gives them, or as the API sends them): names, shares with their 95 % interval."""

from __future__ import annotations

from typing import Any

from topology.schema import id_name

TRAFFIC_COLUMNS = ["samples", "gbytes", "util", "tenants (share, 95%)"]
WIDE_COLUMNS = ["jobs", "top pods", "throttled by CNPs"]
HOTSPOT_COLUMNS = ["link", "dir", "kinds", "severity", "start", "end", "culprits", "victims",
                   "throttled by CNPs", "noisy neighbour"]


def pct(share: dict[str, Any]) -> str:
    """``85.6% (85.0%-86.3%)``: a share and its 95 % interval."""
    return f"{share['share']:.1%} ({share['share_low']:.1%}-{share['share_high']:.1%})"


def names(shares: list[dict[str, Any]], count: int = 3) -> str:
    """The first ``count`` shares as ``name share (interval)``, comma-separated."""
    return ", ".join(f"{id_name(s['name'])} {pct(s)}" for s in shares[:count])


def link_name(port: str) -> str:
    """``leaf01:Ethernet1`` for the port ID ``port:leaf01/Ethernet1``."""
    return id_name(port).replace("/", ":", 1)


def traffic_cells(link: dict[str, Any], wide: bool) -> list[Any]:
    """Samples, gigabytes (``~``: a sampled estimate), utilization and tenants of a link
    direction; ``wide`` adds jobs, top pods and the jobs CNPs throttle."""
    exact = link["counter_bytes"]
    utilization = link["utilization"]
    cells: list[Any] = [
        link["samples"],
        f"{(exact if exact is not None else link['estimated_bytes']) / 1e9:.3f}"
        + ("" if exact is not None else "~"),
        "" if utilization is None else f"{utilization:.0%}",
        names(link["tenants"]) or ("ok" if link["samples"] else "no samples")]
    if wide:
        cells += [names(link["jobs"]), names(link["pods"]), names(link["throttled"])]
    return cells


def hotspot_row(hot: dict[str, Any]) -> list[Any]:
    """The :data:`HOTSPOT_COLUMNS` of one hotspot."""
    return [link_name(hot["port"]), hot["direction"], ",".join(hot["kinds"]), hot["severity"],
            f"{hot['start']:.0f}", "active" if hot["end"] is None else f"{hot['end']:.0f}",
            names(hot["culprits"]), names(hot["victims"]), names(hot["throttled"]),
            hot["noisy_neighbour"]]
