"""Which gNMI paths each vendor profile reads, for discovery and for counters (REFERENCE §3).

Paths never carry a module prefix on their first element: pygnmi would turn it into the
origin, which EOS and SONiC reject.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

__all__ = ["DISCOVERY_PATHS", "LOCAL_LLDP_PATH", "PROFILES", "Profile", "counter_paths",
           "profile_for"]

DISCOVERY_PATHS = (
    "/lldp/interfaces/interface[name=*]/neighbors",
    "/interfaces/interface[name=*]/state",
    "/interfaces/interface[name=*]/ethernet/state",
)
"""Get for discovery: LLDP neighbours, interface state (ifindex, oper-status), ethernet."""

LOCAL_LLDP_PATH = "/lldp/state"
"""The switch's own chassis id; optional (a target may not serve it)."""

_STATE = "/interfaces/interface[name=*]/state"
_SPEED = "/interfaces/interface[name=*]/ethernet/state/port-speed"
_QUEUES = "/qos/interfaces/interface[interface-id=*]/output/queues"


@dataclass(frozen=True)
class Profile:
    """A vendor's counter paths; ``counter_target`` is the gNMI prefix target they need."""

    name: str
    counter_paths: tuple[str, ...]
    counter_target: str = ""
    subscribe_only: bool = False


PROFILES = {
    "openconfig": Profile("openconfig", (_STATE, _SPEED, _QUEUES)),
    "eos": Profile("eos", (_STATE, _SPEED, _QUEUES,
                           "/interfaces/interface[name=*]/ethernet/pfc/priorities")),
    "cumulus": Profile("cumulus", (_STATE, _SPEED, _QUEUES,
                                   "/qos/interfaces/interface[interface-id=*]/switch-priority"),
                       subscribe_only=True),
    "sonic": Profile("sonic", ("/COUNTERS/Ethernet*", "/COUNTERS/Ethernet*/Queues"),
                     counter_target="COUNTERS_DB"),
}


_WILDCARDS = ("[name=*]", "[interface-id=*]", "/Ethernet*")
"""How a counter path names every interface, replaced by one name to read only it."""


def counter_paths(profile: Profile, ports: Collection[str] | None = None) -> tuple[str, ...]:
    """The profile's counter paths, for every interface or only for ``ports`` (each path
    once per port, in the ports' order).

    >>> counter_paths(PROFILES["sonic"], ["Ethernet8"])
    ('/COUNTERS/Ethernet8', '/COUNTERS/Ethernet8/Queues')
    >>> counter_paths(PROFILES["openconfig"], ["Ethernet1"])[2]
    '/qos/interfaces/interface[interface-id=Ethernet1]/output/queues'
    """
    if ports is None:
        return profile.counter_paths
    found = []
    for port in ports:
        for path in profile.counter_paths:
            wildcard = next(w for w in _WILDCARDS if w in path)
            named = f"{wildcard.partition('=')[0]}={port}]" if "=" in wildcard else f"/{port}"
            found.append(path.replace(wildcard, named, 1))
    return tuple(found)


def profile_for(vendor: str) -> Profile:
    """The profile of a vendor name of the device inventory.

    >>> profile_for("cumulus").subscribe_only, profile_for("sonic").counter_target
    (True, 'COUNTERS_DB')
    """
    try:
        return PROFILES[vendor]
    except KeyError:
        raise ValueError(f"no gNMI profile for vendor {vendor!r} "
                         f"(profiles: {', '.join(PROFILES)})") from None
