"""Switch ownership by rendezvous hashing, against an independent computation."""

from __future__ import annotations

import hashlib
from collections import Counter

import pytest

from correlator.shards import ALONE, Shard, owner, parse_shard

NAMES = [f"leaf{i:04d}" for i in range(3000)]


def _expected_owner(name: str, count: int) -> int:
    """The highest BLAKE2b-64 of ``name#i``, written out again."""
    weights = [int(hashlib.blake2b(f"{name}#{i}".encode(), digest_size=8).hexdigest(), 16)
               for i in range(count)]
    return weights.index(max(weights))


def test_owner_is_the_highest_weight():
    assert [owner(n, 5) for n in NAMES[:200]] == [_expected_owner(n, 5) for n in NAMES[:200]]


def test_the_demo_fabric_over_three_shards():
    names = ["leaf01", "leaf02", "leaf03", "leaf04", "spine01", "spine02"]
    assert [owner(n, 3) for n in names] == [1, 0, 0, 1, 0, 2]


def test_one_shard_owns_everything():
    assert {owner(n, 1) for n in NAMES} == {0}
    assert all(ALONE.owns(n) for n in NAMES[:10])


def test_switches_spread_evenly():
    counts = Counter(owner(n, 3) for n in NAMES)
    assert sorted(counts) == [0, 1, 2]
    assert all(900 <= c <= 1100 for c in counts.values()), counts


def test_a_new_shard_takes_switches_only_for_itself():
    before = [owner(n, 3) for n in NAMES]
    after = [owner(n, 4) for n in NAMES]
    moved = [(a, b) for a, b in zip(before, after, strict=True) if a != b]
    assert {b for _, b in moved} == {3}
    assert 0.2 <= len(moved) / len(NAMES) <= 0.3


def test_owns():
    assert [Shard(i, 3).owns("leaf01") for i in range(3)] == [False, True, False]


@pytest.mark.parametrize(("text", "pod", "count", "expected"), [
    ("0/1", None, None, Shard(0, 1)),
    ("2/3", None, None, Shard(2, 3)),
    ("auto", "fabcorr-shard-0", 3, Shard(0, 3)),
    ("auto", "fabcorr-12", 16, Shard(12, 16)),
])
def test_parse_shard(text, pod, count, expected):
    assert parse_shard(text, pod_name=pod, count=count) == expected


@pytest.mark.parametrize(("text", "pod", "count", "message"), [
    ("3/3", None, None, "shard 3/3: the index must be below the count (from 0)"),
    ("0/0", None, None, "shard 0/0: the count must be at least 1"),
    ("1", None, None, "shard '1': expected I/N (e.g. 0/3) or auto"),
    ("-1/3", None, None, "shard '-1/3': expected I/N (e.g. 0/3) or auto"),
    ("auto", "fabcorr-1", None, "--shard auto needs the shard count (shards.count in the config)"),
    ("auto", "fabcorr-5", 3, "shard 5/3: the index must be below the count (from 0)"),
    ("auto", None, 3, "--shard auto: pod name None does not end in a StatefulSet ordinal (-N)"),
])
def test_parse_shard_rejects(text, pod, count, message):
    with pytest.raises(ValueError) as caught:
        parse_shard(text, pod_name=pod, count=count)
    assert str(caught.value) == message


def test_owner_needs_a_shard():
    with pytest.raises(ValueError, match="at least one shard, not 0"):
        owner("leaf01", 0)
