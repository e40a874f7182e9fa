"""Host-side LLDP: ``lldpcli -f json show neighbors details`` -> neighbour facts. Pure.

lldpcli's ``json`` format reshapes with the data (REFERENCE §2): ``interface`` is an
object keyed by interface name for one interface and a list of one-key objects for
several; ``chassis`` is keyed by the system name (or holds ``id`` directly when there is
none); ``mgmt-ip`` may be a list. All shapes are accepted.
"""

from __future__ import annotations

import json
from typing import Any

from inventory.errors import DecodeError
from inventory.facts import IdSubtype, LldpNeighborFact, Reporter

_SUBTYPES = {s.value: s for s in IdSubtype}


def host_neighbors(node: str, output: str | dict[str, Any]) -> list[LldpNeighborFact]:
    """The neighbours a host's lldpd reports, as facts reported by ``node``.

    >>> out = ('{"lldp": {"interface": {"ens1f0np0": {"via": "LLDP", "chassis": {"leaf01": {'
    ...        '"id": {"type": "mac", "value": "0c:42:a1:b2:c3:d4"}, "mgmt-ip": "10.0.0.11"}},'
    ...        ' "port": {"id": {"type": "ifname", "value": "swp1"}, "descr": "to-gpu01"}}}}}')
    >>> fact = host_neighbors("gpu01", out)[0]
    >>> fact.local_port, fact.system_name, fact.port_id, fact.port_id_subtype.value
    ('ens1f0np0', 'leaf01', 'swp1', 'ifname')
    """
    try:
        document = json.loads(output) if isinstance(output, str) else output
        interfaces = (document.get("lldp") or {}).get("interface") or {}
    except (ValueError, AttributeError) as exc:
        raise DecodeError(f"lldpcli output of {node}: not lldpcli JSON: {exc}") from exc
    entries = interfaces.items() if isinstance(interfaces, dict) else (
        item for one in interfaces for item in one.items())
    facts = []
    for name, entry in entries:
        try:
            facts.append(_neighbor(node, name, entry))
        except (AttributeError, KeyError, TypeError, StopIteration) as exc:
            raise DecodeError(f"lldpcli output of {node}: interface {name}: {exc!r}") from exc
    return facts


def _neighbor(node: str, interface: str, entry: dict[str, Any]) -> LldpNeighborFact:
    chassis = entry["chassis"]
    if "id" in chassis:  # no system name: chassis holds the fields directly
        system_name, fields = "", chassis
    else:
        system_name, fields = next(iter(chassis.items()))
    port = entry["port"]
    mgmt = fields.get("mgmt-ip", "")
    return LldpNeighborFact(
        Reporter.HOST, node, interface,
        str(fields["id"]["value"]), _subtype(fields["id"]["type"]),
        str(port["id"]["value"]), _subtype(port["id"]["type"]),
        system_name=system_name, port_description=str(port.get("descr", "")),
        mgmt_address=mgmt[0] if isinstance(mgmt, list) else str(mgmt), source="lldpd")


def _subtype(text: str) -> IdSubtype:
    return _SUBTYPES.get(text, IdSubtype.OTHER)
