"""Problems: things found wrong or incomplete while reading sources or building the graph.

A problem is reported, counted and kept beside the result; it never stops the pipeline.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Problem:
    """One finding: a short machine-readable ``kind``, the ``subject`` it is about, details."""

    kind: str
    subject: str
    detail: str = ""


PROBLEM_KINDS = frozenset({
    "bad-role-hint", "device-info-missing", "ip-conflict", "ip-duplicate", "ippool-malformed",
    "link-conflict", "link-one-sided", "lldp-loop", "lldp-unknown-local", "lldp-unresolved",
    "mac-conflict", "network-status-malformed", "podif-unattached", "port-unlisted",
    "resource-unreadable", "spiderendpoint-missing", "spiderendpoint-stale",
    "sriov-state-malformed", "unknown-api-version", "unknown-job", "unknown-node",
    "unknown-pod", "unknown-switch", "unknown-tenant", "vf-unknown", "vf-unknown-pf",
})
"""Every ``kind`` a Problem may have (a test keeps it in step with the code)."""
