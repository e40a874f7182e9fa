"""The 95 % share interval holds for mixed frame sizes (REFERENCE §8a): a seeded simulation
of links whose tenants send different mixes of frames, sampled packet by packet, checked
against the byte shares the simulation knows.

Each trial draws 1-20 groups, each with 1-3 frame sizes between 64 B and 9 KB (log-uniform)
and its own packet weights, and 30-10,000 samples (log-uniform) taken in proportion to the
packets; the group's true byte share is its weight times its sizes over the link's. Every
group that got a sample is one check: its true share inside fabcorr's interval. Coverage
over all checks must be 93.5-96.5 %: narrower intervals (a count interval that ignores
frame sizes covered 0.875 here) or needlessly wide ones fail.
"""

import math
import random

from correlator.attribution.estimate import shares

TRIALS = 2000


def _trial(rng: random.Random) -> list[tuple[int, bool]]:
    groups = rng.randint(1, 20)
    n = int(math.exp(rng.uniform(math.log(30), math.log(10_000))))
    frames: list[tuple[int, int, float]] = []  # group, size, packet weight
    for g in range(groups):
        weight = rng.expovariate(1)
        for _ in range(rng.randint(1, 3)):
            frames.append((g, int(math.exp(rng.uniform(math.log(64), math.log(9000)))),
                           weight * rng.random()))
    total = sum(size * w for _, size, w in frames)
    true = [0.0] * groups
    for g, size, w in frames:
        true[g] += size * w / total
    rate = 1000  # every sample stands for ``rate`` packets
    sums = {f"g{g}": [0, 0.0, 0.0, 0.0] for g in range(groups)}
    for g, size, _ in rng.choices(frames, weights=[w for _, _, w in frames], k=n):
        found = sums[f"g{g}"]
        found[0] += 1
        found[1] += size * rate
        found[2] += rate
        found[3] += (size * rate) ** 2
    seen = {k: (int(v[0]), v[1], v[2], v[3]) for k, v in sums.items() if v[0]}
    return [(s.samples, s.share_low - 1e-12 <= true[int(s.name[1:])] <= s.share_high + 1e-12)
            for s in shares(seen)]


def test_share_intervals_cover_the_true_byte_share_95_percent_of_the_time():
    rng = random.Random(20261201)
    checks = [check for _ in range(TRIALS) for check in _trial(rng)]
    covered = sum(inside for _, inside in checks) / len(checks)
    assert len(checks) > 15_000
    assert 0.935 <= covered <= 0.965, covered
    # where the normal approximation has most samples to work with it is on target too
    rich = [inside for samples, inside in checks if samples >= 30]
    assert 0.94 <= sum(rich) / len(rich) <= 0.97
