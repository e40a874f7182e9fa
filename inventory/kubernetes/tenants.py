"""Tenants: ordered rules that name the tenant of a pod's namespace or queue.

Rules, tried in order until one names a tenant:

- ``label:<key>``: the namespace's label ``<key>`` (``tenant``, or Capsule's
  ``capsule.clastix.io/tenant``);
- ``kueue``: the pod's (or its job's) ``kueue.x-k8s.io/queue-name`` -> LocalQueue ->
  ClusterQueue, whose cohort (or, without one, its own name) is the tenant;
- ``namespace``: the namespace name (always answers: keep it last).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from inventory.errors import ConfigError

Object = dict[str, Any]
DEFAULT_RULES = ("label:tenant", "label:capsule.clastix.io/tenant", "kueue", "namespace")
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"


@dataclass(frozen=True)
class TenantRules:
    """The ordered tenant rules and the namespaces and queues they read."""

    rules: Sequence[str] = DEFAULT_RULES
    namespace_labels: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    local_queues: Mapping[tuple[str, str], str] = field(default_factory=dict)
    cluster_queues: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for rule in self.rules:
            if rule not in ("kueue", "namespace") and not (
                    rule.startswith("label:") and len(rule) > len("label:")):
                raise ConfigError("tenant rules", rule,
                                  "a rule is label:<key>, kueue or namespace")

    def tenant_of(self, namespace: str, labels: Mapping[str, str]) -> tuple[str, str]:
        """(tenant, rule that named it) for a pod in ``namespace`` labelled ``labels``.

        >>> rules = TenantRules(namespace_labels={"ml": {"tenant": "acme"}})
        >>> rules.tenant_of("ml", {}), rules.tenant_of("web", {})
        (('acme', 'label:tenant'), ('web', 'namespace'))
        """
        for rule in self.rules:
            if rule == "namespace":
                return namespace, rule
            if rule == "kueue":
                queue = labels.get(QUEUE_LABEL)
                cluster_queue = self.local_queues.get((namespace, queue)) if queue else None
                if cluster_queue:
                    return self.cluster_queues.get(cluster_queue) or cluster_queue, rule
            else:
                value = self.namespace_labels.get(namespace, {}).get(rule[len("label:"):])
                if value:
                    return value, rule
        return "", ""


def tenant_rules(rules: Sequence[str], namespaces: Sequence[Object],
                 local_queues: Sequence[Object], cluster_queues: Sequence[Object]
                 ) -> TenantRules:
    """TenantRules over Namespace, LocalQueue and ClusterQueue objects."""
    return TenantRules(
        rules=tuple(rules),
        namespace_labels={_meta(ns).get("name", ""): _meta(ns).get("labels") or {}
                          for ns in namespaces},
        local_queues={(_meta(q).get("namespace", ""), _meta(q).get("name", "")):
                      (q.get("spec") or {}).get("clusterQueue", "") for q in local_queues},
        cluster_queues={_meta(q).get("name", ""): (q.get("spec") or {}).get("cohort", "")
                        for q in cluster_queues},
    )


def _meta(obj: Object) -> dict[str, Any]:
    return obj.get("metadata") or {}
