"""The namespace lab's sampling replayed offline (tests/lab/test_run_e2e.py): the share
intervals hold for its tenants' RoCE mixes, the case that issue 12 found short.

Each host sends its pods' streams in the order the lab's seeded sender does
(:mod:`simulator.roce_traffic`: every opcode of :data:`~simulator.roce_traffic.MIX`
``weight * ROUNDS`` times per stream, shuffled with seed 0 on host1, 1 on host2), at the
lab's packet rates. A skip sampler like pmacct's (uniform 1..2N-1) picks 1 in
:data:`SAMPLING` with a seed per run, and the samples are binned by when their packet was
sent into 1-second intervals with a random phase: nothing but sampling differs from the
truth. As in the lab, every (interval, port, tenant) with traffic or samples is one check
(host1's traffic crosses two sampled ports, leaf1 and spine1), a tenant without samples is
inside up to :func:`~simulator.score.absent_bound`, and the true share is of the frames as
the kernel counts them, the samples' lengths with the 4-byte FCS.

Before the missed-class bound: 94.0 % inside over 100 sampler seeds, 94.1 % over these
20 (90.6 % of the tenants with 1-9 samples: tenant C, 10 % of the bytes, short above);
with it 95.3 % (96.1 %). The lab's own target is 94 % (tests/lab/test_run_e2e.py).
"""

import math
import random

from simulator.roce import payload
from simulator.roce_traffic import FRAME_OVERHEAD, MIX
from simulator.score import absent_bound
from tests.correlator.attribution.conftest import shares
from tests.lab.test_run_e2e import INTERVAL_S, PODS, PORTS, PPS, ROUNDS, SAMPLING

RUNS = 20
FCS = 4
HOSTS = ("host1", "host2")


def _order(host: str, seed: int) -> list[tuple[str, int]]:
    """(tenant, frame length) of every packet ``host`` sends, in the sender's order."""
    slots = [(tenant, weight, len(payload(opcode, 0, psn, length)) + FRAME_OVERHEAD)
             for h, _, tenant, weight in PODS if h == host
             for psn, (opcode, length) in enumerate(MIX)]
    order = [slot for slot, (_, weight, _) in enumerate(slots) for _ in range(weight * ROUNDS)]
    random.Random(seed).shuffle(order)
    return [(slots[k][0], slots[k][2]) for k in order]


def _times(count: int) -> list[float]:
    """When each of ``count`` packets is sent: a third of them at each of :data:`PPS`."""
    part, at, out = math.ceil(count / len(PPS)), 0.0, []
    for k in range(count):
        out.append(at)
        at += 1 / PPS[k // part]
    return out


def _skips(count: int, rng: random.Random) -> list[int]:
    picked, k = [], rng.randrange(1, 2 * SAMPLING)
    while k <= count:
        picked.append(k - 1)
        k += rng.randrange(1, 2 * SAMPLING)
    return picked


def _checks(packets, when, picked, phase) -> list[tuple[int, int]]:
    """(samples, -1 below / 0 inside / 1 above) per (interval, tenant) of one port."""
    def slot(at):
        return math.floor((at - phase) / INTERVAL_S)
    truth: dict[int, dict[str, int]] = {}
    for (tenant, length), at in zip(packets, when, strict=True):
        bytes_ = truth.setdefault(slot(at), {})
        bytes_[tenant] = bytes_.get(tenant, 0) + length
    sampled: dict[int, dict[str, list]] = {}
    for k in picked:
        tenant, length = packets[k]
        sums = sampled.setdefault(slot(when[k]), {}).setdefault(tenant, [0, 0.0, 0.0, 0.0])
        frame = (length + FCS) * SAMPLING
        sums[0] += 1
        sums[1] += frame
        sums[2] += SAMPLING
        sums[3] += frame * frame
    out = []
    for interval, bytes_ in truth.items():
        port, groups = sum(bytes_.values()), sampled.get(interval, {})
        n = sum(sums[0] for sums in groups.values())
        found = {s.name: s for s in shares({t: tuple(v) for t, v in groups.items()})}
        for tenant in sorted(set(bytes_) | set(groups)):
            true = bytes_.get(tenant, 0) / port
            low, high = ((found[tenant].share_low, found[tenant].share_high)
                         if tenant in found else (0.0, absent_bound(n)))
            side = -1 if true < low - 1e-12 else 1 if true > high + 1e-12 else 0
            out.append((found[tenant].samples if tenant in found else 0, side))
    return out


def replay(runs: int, seed: int) -> list[list[tuple[int, int]]]:
    """The checks of each of ``runs`` replays."""
    packets = {host: _order(host, n) for n, host in enumerate(HOSTS)}
    when = {host: _times(len(packets[host])) for host in HOSTS}
    ports = {host: sum(h == host for h in PORTS.values()) for host in HOSTS}
    rng = random.Random(seed)
    out = []
    for _ in range(runs):
        phase = rng.random() * INTERVAL_S
        run = []
        for host in HOSTS:
            picked = _skips(len(packets[host]), rng)
            run += _checks(packets[host], when[host], picked, phase) * ports[host]
        out.append(run)
    return out


def test_the_lab_mix_replayed_is_inside_its_share_intervals_95_percent_of_the_time():
    runs = replay(RUNS, 5)
    each = [sum(side == 0 for _, side in run) / len(run) for run in runs]
    checks = [check for run in runs for check in run]
    few = [side for c, side in checks if 0 < c < 10]
    assert len(checks) > 9000
    assert sum(each) / RUNS >= 0.945, each
    assert sum(side == 0 for side in few) / len(few) >= 0.93  # tenant C, mostly
