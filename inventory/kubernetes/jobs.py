"""Which AI job a pod belongs to: its owner chain to the top controller, else its labels.

The chain is followed through ``ownerReferences`` (controller first) as far as owners can
be read. An owner that cannot be read (RBAC forbids it, or it is already deleted) ends
the walk, but its reference still names it; the well-known job labels (REFERENCE §1)
then name a higher job when they can, so a pod never loses its job because one GET
failed. Job kinds keep the API's kind, except Volcano's ``Job``, called ``VolcanoJob``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from inventory.kubernetes.resources import group_of

Object = dict[str, Any]
OwnerKey = tuple[str, str, str, str]

_KUBEFLOW_OPERATORS = {
    "pytorchjob-controller": "PyTorchJob", "tfjob-controller": "TFJob",
    "mpijob-controller": "MPIJob", "xgboostjob-controller": "XGBoostJob",
    "paddlejob-controller": "PaddleJob", "jaxjob-controller": "JAXJob",
}


@dataclass(frozen=True, slots=True)
class JobIdentity:
    """The job a pod belongs to, its role and index within it, and how that was learned."""

    kind: str
    name: str
    role: str = ""
    index: str = ""
    source: str = "owner"


def kind_name(api_version: str, kind: str) -> str:
    """A job kind unambiguous across API groups.

    >>> kind_name("batch/v1", "Job"), kind_name("batch.volcano.sh/v1alpha1", "Job")
    ('Job', 'VolcanoJob')
    """
    return "VolcanoJob" if (group_of(api_version), kind) == ("batch.volcano.sh", "Job") else kind


def controller_ref(obj: Object) -> dict[str, Any] | None:
    """The owner reference marked ``controller``, else the first one, else None."""
    refs = obj.get("metadata", {}).get("ownerReferences") or []
    return next((r for r in refs if r.get("controller")), refs[0] if refs else None)


def resolve_job(pod: Object, owners: Mapping[OwnerKey, Object]) -> JobIdentity | None:
    """The job of ``pod``, reading owners from ``owners`` ((group, kind, namespace, name)).

    >>> pod = {"metadata": {"namespace": "a", "name": "w-0", "labels": {
    ...     "training.kubeflow.org/job-name": "llm", "training.kubeflow.org/replica-type":
    ...     "Worker", "training.kubeflow.org/replica-index": "0"}, "ownerReferences": [
    ...     {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "name": "llm",
    ...      "controller": True}]}}
    >>> resolve_job(pod, {})
    JobIdentity(kind='PyTorchJob', name='llm', role='worker', index='0', source='owner-reference')
    """
    meta = pod.get("metadata", {})
    namespace = meta.get("namespace", "")
    labels = meta.get("labels") or {}
    role, index = _role(labels)
    top: tuple[str, str] | None = None
    readable = True
    ref = controller_ref(pod)
    seen: set[OwnerKey] = set()
    while ref is not None:
        kind = kind_name(ref.get("apiVersion", ""), ref.get("kind", ""))
        top = (kind, ref.get("name", ""))
        key = (group_of(ref.get("apiVersion", "")), ref.get("kind", ""), namespace,
               ref.get("name", ""))
        owner = owners.get(key)
        if owner is None or key in seen:
            readable = owner is not None
            break
        seen.add(key)
        ref = controller_ref(owner)
    by_labels = _from_labels(labels)
    if by_labels is not None and (top is None or (not readable and by_labels != top
                                                  and _ranks_above(by_labels[0], top[0]))):
        return JobIdentity(by_labels[0], by_labels[1], role, index, "labels")
    if top is None:
        return None
    return JobIdentity(top[0], top[1], role, index, "owner" if readable else "owner-reference")


# Kinds a pod's nearest owner can be, and the job kinds known to sit above them.
_ABOVE = {
    "Job": {"CronJob", "JobSet", "TrainJob"},
    "JobSet": {"TrainJob"},
    "StatefulSet": {"LeaderWorkerSet"},
    "ReplicaSet": {"Deployment"},
    "RayCluster": {"RayJob"},
    "VirtualMachineInstance": {"VirtualMachine"},
}


def _ranks_above(candidate: str, known: str) -> bool:
    return candidate in _ABOVE.get(known, ())


def _from_labels(labels: Mapping[str, str]) -> tuple[str, str] | None:
    """(kind, name) of the job the well-known labels name, the highest level first."""
    if labels.get("trainer.kubeflow.org/trainjob-ancestor-step") and \
            labels.get("jobset.sigs.k8s.io/jobset-name"):
        return "TrainJob", labels["jobset.sigs.k8s.io/jobset-name"]
    for label, kind in (
        ("jobset.sigs.k8s.io/jobset-name", "JobSet"),
        ("leaderworkerset.sigs.k8s.io/name", "LeaderWorkerSet"),
        ("volcano.sh/job-name", "VolcanoJob"),
        ("ray.io/cluster", "RayCluster"),
    ):
        if labels.get(label):
            return kind, labels[label]
    if labels.get("training.kubeflow.org/job-name"):
        operator = labels.get("training.kubeflow.org/operator-name", "")
        return _KUBEFLOW_OPERATORS.get(operator, "KubeflowJob"), \
            labels["training.kubeflow.org/job-name"]
    name = labels.get("batch.kubernetes.io/job-name") or labels.get("job-name")
    return ("Job", name) if name else None


def _role(labels: Mapping[str, str]) -> tuple[str, str]:
    """Role (replica type, lower case) and index of a pod within its job, when labelled."""
    for role_label, index_label in (
        ("training.kubeflow.org/replica-type", "training.kubeflow.org/replica-index"),
        ("jobset.sigs.k8s.io/replicatedjob-name", "jobset.sigs.k8s.io/job-index"),
        ("volcano.sh/task-spec", "volcano.sh/task-index"),
        ("ray.io/node-type", ""),
        ("", "leaderworkerset.sigs.k8s.io/worker-index"),
        ("", "batch.kubernetes.io/job-completion-index"),
        ("", "apps.kubernetes.io/pod-index"),
    ):
        role = labels.get(role_label, "") if role_label else ""
        index = labels.get(index_label, "") if index_label else ""
        if role or index:
            return role.lower(), index
    return "", ""
