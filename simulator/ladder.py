"""The benchmark ladder of fabric sizes (small, medium, large, x-large) as FabricSpecs.

Every size assumes 8 GPUs and 8 x 400G NICs per node, one VF per GPU, 8 VFs configured
per PF, 51.2T switches (64 ports down, 64 up), and a workload where a third of the pods
take a whole node and two thirds half a node, spread over jobs and tenants.
"""

from __future__ import annotations

from dataclasses import replace

from simulator.generator import FabricSpec, JobSpec

_JOB_KINDS = ("PyTorchJob", "MPIJob", "JobSet", "StatefulSet", "LeaderWorkerSet", "Job")

LADDER: dict[str, tuple[FabricSpec, int, int]] = {
    "small": (FabricSpec(nodes=128, leaves_per_rail=2, spines=8, uplinks_per_leaf=64), 24, 6),
    "medium": (FabricSpec(nodes=1024, leaves_per_rail=16, spines=64, uplinks_per_leaf=64),
               96, 24),
    "large": (FabricSpec(nodes=4096, leaves_per_rail=64, spines=64, uplinks_per_leaf=64,
                         leaves_per_pod=64, super_spines=256, uplinks_per_spine=64), 256, 64),
    "x-large": (FabricSpec(nodes=12288, leaves_per_rail=192, spines=64, uplinks_per_leaf=64,
                           leaves_per_pod=64, super_spines=768, uplinks_per_spine=64), 768, 192),
}
"""Size name -> (fabric shape without jobs, number of jobs, number of tenants)."""


def ladder_spec(size: str) -> FabricSpec:
    """The ladder fabric ``size`` with its workload of jobs and tenants.

    >>> spec = ladder_spec("small")
    >>> spec.gpus, len(spec.jobs), sum(j.pods for j in spec.jobs)
    (1024, 24, 192)
    """
    try:
        spec, jobs, tenants = LADDER[size]
    except KeyError:
        raise ValueError(f"unknown size {size!r} (sizes: {', '.join(LADDER)})") from None
    return replace(spec, jobs=synthetic_jobs(spec.nodes, spec.rails, jobs, tenants))


def synthetic_jobs(nodes: int, rails: int, jobs: int, tenants: int) -> tuple[JobSpec, ...]:
    """``jobs`` jobs of ``tenants`` tenants filling every NIC of ``nodes`` nodes: half the
    nodes run one whole-node pod, the other half two half-node pods. A third of the jobs
    use whole-node pods, the rest half-node pods.

    >>> [(j.tenant, j.pods, j.nics_per_pod) for j in synthetic_jobs(4, 8, 3, 2)]
    [('tenant-01', 2, 0), ('tenant-02', 2, 4), ('tenant-01', 2, 4)]
    """
    whole_jobs = max(1, jobs // 3)
    layout = [(nodes // 2, whole_jobs, 0),
              ((nodes - nodes // 2) * 2, jobs - whole_jobs, rails // 2)]
    sized: list[tuple[int, int]] = []
    for pods, count, width in layout:
        base, extra = divmod(pods, max(1, count))
        sized.extend((base + (1 if i < extra else 0), width) for i in range(count))
    # Interleave whole-node and half-node jobs so that every tenant gets both kinds.
    order = sorted(range(len(sized)), key=lambda i: (i if i < whole_jobs else i - whole_jobs,
                                                    i >= whole_jobs))
    return tuple(
        JobSpec(
            tenant=f"tenant-{n % tenants + 1:02d}",
            name=f"job-{n + 1:03d}",
            kind=_JOB_KINDS[n % len(_JOB_KINDS)],
            pods=sized[i][0],
            nics_per_pod=sized[i][1],
        )
        for n, i in enumerate(order)
        if sized[i][0] > 0
    )
