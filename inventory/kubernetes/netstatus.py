"""The Multus ``network-status`` pod annotation: which interface got which IPs, MAC and VF.

The annotation is a JSON string (``k8s.v1.cni.cncf.io/network-status``, or the legacy
``networks-status``) listing one entry per attachment; SR-IOV entries carry the VF's PCI
address and RDMA device in ``device-info`` (device-info spec v1.1.0). IPs are bare.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from inventory.problems import Problem

ANNOTATIONS = ("k8s.v1.cni.cncf.io/network-status", "k8s.v1.cni.cncf.io/networks-status")


@dataclass(frozen=True, slots=True)
class NetworkAttachment:
    """One entry of network-status."""

    network: str
    interface: str
    ips: tuple[str, ...]
    mac: str = ""
    default: bool = False
    device_type: str = ""
    pci_address: str = ""
    rdma_device: str = ""


def network_status(pod: dict[str, Any]) -> tuple[list[NetworkAttachment], list[Problem]]:
    """The attachments a pod's network-status annotation lists, and what was wrong with it.

    >>> pod = {"metadata": {"namespace": "a", "name": "w-0", "annotations": {
    ...     "k8s.v1.cni.cncf.io/network-status": '[{"name": "sriov", "interface": "net1",'
    ...     ' "ips": ["10.1.0.5"], "mac": "02:00:00:00:00:01", "device-info": {"type": "pci",'
    ...     ' "version": "1.1.0", "pci": {"pci-address": "0000:1a:00.2"}}}]'}}}
    >>> attachments, problems = network_status(pod)
    >>> attachments[0].interface, attachments[0].pci_address, attachments[0].rdma_device
    ('net1', '0000:1a:00.2', '')
    """
    meta = pod.get("metadata", {})
    subject = f"pod:{meta.get('namespace', '')}/{meta.get('name', '')}"
    annotations = meta.get("annotations") or {}
    text = next((annotations[k] for k in ANNOTATIONS if k in annotations), None)
    if text is None:
        return [], []
    try:
        entries = json.loads(text)
    except (TypeError, ValueError) as exc:
        return [], [Problem("network-status-malformed", subject, f"not JSON: {exc}")]
    if not isinstance(entries, list):
        return [], [Problem("network-status-malformed", subject, "not a list of attachments")]
    attachments, problems = [], []
    for position, entry in enumerate(entries):
        try:
            attachments.append(_attachment(entry))
        except (TypeError, ValueError, AttributeError) as exc:
            problems.append(Problem("network-status-malformed", subject,
                                    f"entry {position}: {exc}"))
    return attachments, problems


def _attachment(entry: Any) -> NetworkAttachment:
    if not isinstance(entry, dict):
        raise TypeError("entry is not an object")
    interface = entry.get("interface")
    if not isinstance(interface, str) or not interface:
        raise ValueError("no interface name")
    ips = entry.get("ips") or []
    if not isinstance(ips, list) or not all(isinstance(ip, str) for ip in ips):
        raise ValueError("ips is not a list of strings")
    device = entry.get("device-info") or {}
    pci = device.get("pci") or {}
    return NetworkAttachment(
        network=str(entry.get("name", "")),
        interface=interface,
        ips=tuple(ip.split("/")[0] for ip in ips),
        mac=str(entry.get("mac", "")),
        default=bool(entry.get("default", False)),
        device_type=str(device.get("type", "")),
        pci_address=str(pci.get("pci-address", "")),
        rdma_device=str(pci.get("rdma-device", "")),
    )
