"""The Rust core's shares (``wire/src/share.rs``) against the method in Python
(tests/attribution_oracle/estimate.py): the same bits, and the same types, for every
group of tables drawn as the core's join sums them, with and without counters."""

import random

import pytest

from correlator.attribution.estimate import Counters, Ranked, apportion
from tests.attribution_oracle import estimate as oracle

TABLES = 20_000
LENGTHS = (64, 68, 130, 260, 1098, 1082, 4138, 9216)
RATES = (1, 1000, 4096, 400_000)


def _table(rng: random.Random) -> Ranked:
    """A link direction's groups, as the join sums sampled frames: each sample adds one,
    its length times the rate, the rate, its length squared times the rate squared."""
    rate = rng.choice(RATES)
    lengths = rng.sample(LENGTHS, rng.randint(1, 4))
    groups = {}
    for g in range(rng.choice((1, 1, 2, 3, 12, 40))):
        samples = rng.choice((1, 2, 3, 9, 10, 29, 30, 31, 500, rng.randint(1, 20_000)))
        cuts = sorted(rng.randint(0, samples) for _ in lengths[1:])
        counts = [b - a for a, b in zip([0, *cuts], [*cuts, samples], strict=True)]
        drawn = list(zip(counts, lengths, strict=True))
        groups[f"g{g}"] = (samples, sum(c * s for c, s in drawn) * rate, samples * rate,
                           sum(c * s * s for c, s in drawn) * rate * rate)
    return oracle.rank(groups, top=rng.choice((None, 10)))


def _counters(rng: random.Random, table: Ranked) -> Counters | None:
    roll = rng.random()
    if roll < 0.25:
        return None
    exact = table.total[1] * rng.uniform(0.5, 1.5)
    known = (exact * rng.uniform(0.8, 1.0), exact * rng.uniform(1.0, 1.3)) \
        if roll < 0.75 else None
    return Counters(exact, known, rng.random() < 0.2)


def _bits(shares):
    return [tuple((type(x), x) for x in share) for share in shares]


def test_every_share_is_the_pythons_bit_for_bit():
    rng = random.Random(14)
    groups = 0
    for _ in range(TABLES):
        table = _table(rng)
        counters = _counters(rng, table)
        assert _bits(apportion(table, counters)) == _bits(oracle.apportion(table, counters))
        groups += len(table.groups)
    assert groups > 5 * TABLES  # many-group tables were drawn, not only single ones


def test_a_group_without_samples_and_float_sums_are_refused():
    with pytest.raises(ValueError, match="without samples"):
        apportion(Ranked([("g", (0, 0, 0, 0))], (1, 10, 1, 100)))
    with pytest.raises(TypeError):
        apportion(Ranked([("g", (1, 10.0, 1, 100))], (1, 10, 1, 100)))
