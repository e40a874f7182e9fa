"""deploy/base/rbac.yaml grants exactly what the inventory reads: no more, no less.

The expectation is written out here from what fabcorr reads (REFERENCE section 1), not
taken from the inventory's own tables: list/watch (and get) on the objects the join chain
and the tenant rules read, get on every controller an owner chain may pass through.
"""

from pathlib import Path

import yaml

from inventory.kubernetes.resources import OWNER_KINDS, WATCHED

RBAC = Path(__file__).parents[3] / "deploy" / "base" / "rbac.yaml"
READ = ("get", "list", "watch")

WATCHED_BY_HAND = {
    "": ("pods", "nodes", "namespaces"),  # network-status annotations, nodes, tenant labels
    "spiderpool.spidernet.io": ("spiderendpoints", "spiderippools", "spidermultusconfigs"),
    "k8s.cni.cncf.io": ("network-attachment-definitions",),
    "sriovnetwork.openshift.io": ("sriovnetworknodestates",),
    "kueue.x-k8s.io": ("localqueues", "clusterqueues"),  # tenant: queue -> cohort
}
OWNERS_BY_HAND = {  # the job-identity table, plus the built-in controllers
    "apps": ("replicasets", "deployments", "statefulsets", "daemonsets"),  # built in
    "batch": ("jobs", "cronjobs"),
    # PyTorchJob/TFJob/MPIJob in the table; XGBoost, Paddle and JAX jobs are the training
    # operator v1's other kinds
    "kubeflow.org": ("pytorchjobs", "tfjobs", "mpijobs", "xgboostjobs", "paddlejobs",
                     "jaxjobs"),
    "trainer.kubeflow.org": ("trainjobs",),
    "jobset.x-k8s.io": ("jobsets",),
    "leaderworkerset.x-k8s.io": ("leaderworkersets",),
    "batch.volcano.sh": ("jobs",),
    "ray.io": ("rayclusters", "rayjobs"),
    "kubevirt.io": ("virtualmachineinstances", "virtualmachines"),  # fixed-IP VMIs
}


def grants() -> set[tuple[str, str, str]]:
    [role] = [d for d in yaml.safe_load_all(RBAC.read_text()) if d["kind"] == "ClusterRole"]
    return {(group, resource, verb) for rule in role["rules"] for group in rule["apiGroups"]
            for resource in rule["resources"] for verb in rule["verbs"]}


def by_hand() -> set[tuple[str, str, str]]:
    watched = {(group, resource, verb) for group, resources in WATCHED_BY_HAND.items()
               for resource in resources for verb in READ}
    owners = {(group, resource, "get") for group, resources in OWNERS_BY_HAND.items()
              for resource in resources}
    return watched | owners


def test_cluster_role_is_read_only_and_exactly_what_fabcorr_reads():
    assert grants() == by_hand()
    assert len(by_hand()) == 10 * 3 + 20  # 10 resources read and watched, 20 owner kinds


def test_the_inventory_reads_what_the_role_grants():
    """The inventory's tables against the same list: a resource read without a grant
    fails on a cluster as Forbidden."""
    watched = {(r.group, r.plural) for r in WATCHED.values()}
    assert watched == {(g, r) for g, rs in WATCHED_BY_HAND.items() for r in rs}
    owners = {(group, plural) for (group, _), plural in OWNER_KINDS.items()}
    assert owners == {(g, r) for g, rs in OWNERS_BY_HAND.items() for r in rs}
