"""Turn what a user types (a pod, an IP, ``leaf01:Ethernet1``...) into graph node IDs.

A reference is tried against each allowed kind in order: a node ID as is, an IP address
(owner at a given time), ``SWITCH:PORT``, ``NAMESPACE/POD/IF``, ``NAMESPACE/NAME`` (pod,
job), ``NODE/PCI`` or a bare PCI address (VF), ``NODE/PF``, or a plain name (node, switch,
tenant). Nothing found raises NotFound with the closest names of the allowed kinds.
"""

from __future__ import annotations

import difflib
import ipaddress
import re
from collections.abc import Sequence

from inventory.errors import NotFound
from topology.graph import FabricGraph
from topology.schema import KIND, NodeKind, id_name

ID_PREFIX = {kind: "podif" if kind == NodeKind.POD_INTERFACE else kind.value for kind in NodeKind}

_LABEL = {
    NodeKind.POD_INTERFACE: "pod interface",
    NodeKind.VF: "VF",
    NodeKind.PF: "PF",
    NodeKind.POD: "pod",
}


def resolve(fabric: FabricGraph, ref: str, kinds: Sequence[NodeKind],
            at: float | None = None) -> str:
    """The node ID ``ref`` names among ``kinds``; an IP names its owner at time ``at``.

    >>> resolve(example_fabric, "leaf01:Ethernet1", [NodeKind.PORT])
    'port:leaf01/Ethernet1'
    >>> resolve(example_fabric, "10.101.0.2", [NodeKind.POD_INTERFACE])
    'podif:a/llm-worker-0/net1'
    >>> resolve(example_fabric, "a/lm", [NodeKind.JOB])
    Traceback (most recent call last):
    ...
    inventory.errors.NotFound: no job named 'a/lm'; did you mean 'a/llm'?
    """
    ref = ref.strip()
    graph = fabric.graph
    if ref in graph and graph.nodes[ref][KIND] in kinds:
        return ref
    if NodeKind.POD_INTERFACE in kinds and is_ip(ref):
        owner = fabric.indexes.ips.lookup(ref, at)
        if owner is None:
            when = "now" if at is None else f"at {at}"
            raise NotFound("pod interface with IP", f"{ref} ({when})")
        return owner
    for kind in kinds:
        name = ref.replace(":", "/", 1) if kind == NodeKind.PORT else ref
        candidate = f"{ID_PREFIX[kind]}:{name}"
        if candidate in graph and graph.nodes[candidate][KIND] == kind:
            return candidate
    if NodeKind.VF in kinds:
        if fabric.vfs.find_id(f"{ID_PREFIX[NodeKind.VF]}:{ref}") is not None:
            return f"{ID_PREFIX[NodeKind.VF]}:{ref}"
        found = fabric.vfs.with_pci(ref)
        if len(found) == 1:
            return fabric.vfs.node_id(found[0])
    names = [_typed(kind, id_name(n)) for kind in kinds for n in _ids(fabric, kind)]
    what = " or ".join(_LABEL.get(kind, kind.value) for kind in kinds)
    raise NotFound(what, ref, _close(ref, names))


def _ids(fabric: FabricGraph, kind: NodeKind) -> list[str]:
    """Node IDs of one kind; for VFs, every configured one (most are not graph nodes)."""
    if kind == NodeKind.VF:
        return [fabric.vfs.node_id(row) for row in range(len(fabric.vfs))]
    return fabric.nodes_of(kind)


def _close(ref: str, names: list[str]) -> tuple[str, ...]:
    """Up to three names: those extending ``ref`` first, then the most similar."""
    extending = sorted(n for n in names if n.startswith(ref))[:3]
    similar = difflib.get_close_matches(ref, names, n=3, cutoff=0.6)
    return tuple(dict.fromkeys(extending + similar))[:3]


def _typed(kind: NodeKind, name: str) -> str:
    """A name as the user types it: ports as ``SWITCH:PORT``."""
    return name.replace("/", ":", 1) if kind == NodeKind.PORT else name


_DOTTED = re.compile(r"\d+(?:\.\d+){3}(?:/\d+)?")


def check_reference(text: str) -> str:
    """``text`` stripped; ValueError when it is written as an IPv4 address but is none (an
    IP typed wrong is bad input, not a thing that does not exist).

    >>> check_reference(" 10.101.0.2 ")
    '10.101.0.2'
    >>> check_reference("10.101.0.300")
    Traceback (most recent call last):
    ...
    ValueError: '10.101.0.300' is not an IPv4 address
    """
    text = text.strip()
    if _DOTTED.fullmatch(text) and not is_ip(text):
        raise ValueError(f"{text!r} is not an IPv4 address")
    return text


def is_ip(text: str) -> bool:
    try:
        ipaddress.ip_interface(text)
    except ValueError:
        return False
    return True
