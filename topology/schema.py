"""The fabric graph's vocabulary: node and edge kinds, roles, attribute keys and node IDs.

Every node has a string ID (``switch:leaf01``, ``port:leaf01/Ethernet1``,
``podif:team-a/w-3/net1``...) and a ``kind``; every edge has a ``kind``. Attribute values
are scalars only (str, int, float, bool) and absent rather than ``None``, so GraphML, GEXF
and JSON exports carry them unchanged. Attribute keys are the constants below.
"""

from __future__ import annotations

from enum import StrEnum


class NodeKind(StrEnum):
    """The ``kind`` of a graph node."""

    TENANT = "tenant"
    JOB = "job"
    POD = "pod"
    POD_INTERFACE = "pod-interface"
    VF = "vf"
    PF = "pf"
    NODE = "node"
    SWITCH = "switch"
    PORT = "port"


class EdgeKind(StrEnum):
    """The ``kind`` of a graph edge (undirected; the name reads from the first kind listed)."""

    CABLED = "cabled"  # port-port, port-pf: a cable seen by LLDP
    HAS_PORT = "has-port"  # switch-port, node-pf
    VF_OF = "vf-of"  # vf-pf
    ATTACHED = "attached"  # pod-interface-vf
    HAS_INTERFACE = "has-interface"  # pod-pod-interface
    RUNS_ON = "runs-on"  # pod-node
    MEMBER_OF = "member-of"  # pod-job
    OWNED_BY = "owned-by"  # job-tenant, and pod-tenant for a pod without a job


class SwitchRole(StrEnum):
    """A switch's place in the Clos, inferred from its distance to the hosts."""

    LEAF = "leaf"
    SPINE = "spine"
    SUPER_SPINE = "super-spine"
    UNKNOWN = "unknown"


class PortRole(StrEnum):
    """What a switch port is cabled to."""

    HOST = "host"
    FABRIC = "fabric"
    UNUSED = "unused"


class LinkStatus(StrEnum):
    """How well LLDP supports a cable."""

    CONFIRMED = "confirmed"  # both ends report each other
    ONE_SIDED = "one-sided"  # only one end reports it: kept, flagged
    CONFLICT = "conflict"  # a port claimed by several neighbours: kept, not used for paths


# Attribute keys. Fact fields keep their fact names (``name``, ``ifindex``, ``mac``...).
KIND = "kind"
ROLE = "role"
TIER = "tier"
STATUS = "status"
REPORTS = "reports"
RAILS = "rails"
NIC_INDEX = "nic_index"
SPEED = "speed_bps"
OPER_STATUS = "oper_status"
ELSEWHERE = "elsewhere"  # True on a stand-in: a far end discovered by another process

USABLE_LINK = frozenset({LinkStatus.CONFIRMED, LinkStatus.ONE_SIDED})
DOWN_STATES = frozenset({"down", "lower-layer-down", "not-present"})


def switch_id(name: str) -> str:
    return f"switch:{name}"


def port_id(switch: str, port: str) -> str:
    return f"port:{switch}/{port}"


def node_id(name: str) -> str:
    return f"node:{name}"


def pf_id(node: str, name: str) -> str:
    return f"pf:{node}/{name}"


def vf_id(node: str, pci_address: str) -> str:
    return f"vf:{node}/{pci_address}"


def pod_id(namespace: str, name: str) -> str:
    return f"pod:{namespace}/{name}"


def podif_id(namespace: str, pod: str, interface: str) -> str:
    return f"podif:{namespace}/{pod}/{interface}"


def job_id(namespace: str, name: str) -> str:
    return f"job:{namespace}/{name}"


def tenant_id(name: str) -> str:
    return f"tenant:{name}"


def id_name(node: str) -> str:
    """The readable part of a node ID: ``port:leaf01/Ethernet1`` -> ``leaf01/Ethernet1``."""
    return node.partition(":")[2]


def is_up(port: dict) -> bool:
    """Whether a port's oper status lets traffic pass (unknown counts as up)."""
    return port.get(OPER_STATUS, "up") not in DOWN_STATES
