"""deploy/rbac.yaml grants exactly what the inventory reads: no more, no less."""

from pathlib import Path

import yaml

from inventory.kubernetes.resources import OWNER_KINDS, WATCHED

RBAC = Path(__file__).parents[3] / "deploy" / "rbac.yaml"


def grants() -> set[tuple[str, str, str]]:
    [role] = [d for d in yaml.safe_load_all(RBAC.read_text()) if d["kind"] == "ClusterRole"]
    return {(group, resource, verb) for rule in role["rules"] for group in rule["apiGroups"]
            for resource in rule["resources"] for verb in rule["verbs"]}


def test_cluster_role_is_read_only_and_exact():
    watched = {(r.group, r.plural, verb) for r in WATCHED.values()
               for verb in ("get", "list", "watch")}
    owners = {(group, plural, "get") for (group, _), plural in OWNER_KINDS.items()}
    assert grants() == watched | owners
