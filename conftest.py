"""Shared doctest namespace: ``example_fabric`` is the two-leaf fabric of the docstrings."""

import pytest

from simulator.generator import FabricSpec, JobSpec, generate_facts
from topology.build import build_graph

EXAMPLE_SPEC = FabricSpec(
    nodes=2, rails=1, leaves_per_rail=2, spines=2, vfs_per_pf=2,
    jobs=(JobSpec("a", "llm", pods=2),),
)
"""gpu01 on leaf01 and gpu02 on leaf02 (one rail), two spines, one pod of job a/llm on each."""


@pytest.fixture(autouse=True, scope="session")
def _example_fabric(doctest_namespace):
    doctest_namespace["example_fabric"] = build_graph(generate_facts(EXAMPLE_SPEC))
