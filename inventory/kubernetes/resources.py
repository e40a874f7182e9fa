"""The Kubernetes resources fabcorr reads, and the controller kinds that may own pods.

Live mode lists and watches every entry of :data:`WATCHED`; snapshot mode sorts the items
of ``kubectl get -o json`` dumps into the same names. Owners (:data:`OWNER_KINDS`) are
read one by one when a pod's owner chain is followed.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Resource:
    """One API resource: where it lives and what its objects are called."""

    name: str
    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool = True

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version


WATCHED: dict[str, Resource] = {r.name: r for r in (
    Resource("pods", "", "v1", "pods", "Pod"),
    Resource("nodes", "", "v1", "nodes", "Node", namespaced=False),
    Resource("namespaces", "", "v1", "namespaces", "Namespace", namespaced=False),
    Resource("spiderendpoints", "spiderpool.spidernet.io", "v2beta1", "spiderendpoints",
             "SpiderEndpoint"),
    Resource("spiderippools", "spiderpool.spidernet.io", "v2beta1", "spiderippools",
             "SpiderIPPool", namespaced=False),
    Resource("spidermultusconfigs", "spiderpool.spidernet.io", "v2beta1", "spidermultusconfigs",
             "SpiderMultusConfig"),
    Resource("networkattachmentdefinitions", "k8s.cni.cncf.io", "v1",
             "network-attachment-definitions", "NetworkAttachmentDefinition"),
    Resource("sriovnetworknodestates", "sriovnetwork.openshift.io", "v1",
             "sriovnetworknodestates", "SriovNetworkNodeState"),
    Resource("localqueues", "kueue.x-k8s.io", "v1beta1", "localqueues", "LocalQueue"),
    Resource("clusterqueues", "kueue.x-k8s.io", "v1beta1", "clusterqueues", "ClusterQueue",
             namespaced=False),
)}
"""Resources listed and watched, by name."""

OWNER_KINDS: dict[tuple[str, str], str] = {
    ("apps", "ReplicaSet"): "replicasets",
    ("apps", "Deployment"): "deployments",
    ("apps", "StatefulSet"): "statefulsets",
    ("apps", "DaemonSet"): "daemonsets",
    ("batch", "Job"): "jobs",
    ("batch", "CronJob"): "cronjobs",
    ("kubeflow.org", "PyTorchJob"): "pytorchjobs",
    ("kubeflow.org", "TFJob"): "tfjobs",
    ("kubeflow.org", "MPIJob"): "mpijobs",
    ("kubeflow.org", "XGBoostJob"): "xgboostjobs",
    ("kubeflow.org", "PaddleJob"): "paddlejobs",
    ("kubeflow.org", "JAXJob"): "jaxjobs",
    ("trainer.kubeflow.org", "TrainJob"): "trainjobs",
    ("jobset.x-k8s.io", "JobSet"): "jobsets",
    ("leaderworkerset.x-k8s.io", "LeaderWorkerSet"): "leaderworkersets",
    ("batch.volcano.sh", "Job"): "jobs",
    ("ray.io", "RayCluster"): "rayclusters",
    ("ray.io", "RayJob"): "rayjobs",
    ("kubevirt.io", "VirtualMachineInstance"): "virtualmachineinstances",
    ("kubevirt.io", "VirtualMachine"): "virtualmachines",
}
"""(API group, kind) of controllers that may own pods -> their resource plural."""


def group_of(api_version: str) -> str:
    """The API group of an ``apiVersion`` (``""`` for the core group).

    >>> group_of("batch/v1"), group_of("v1")
    ('batch', '')
    """
    return api_version.rpartition("/")[0]
