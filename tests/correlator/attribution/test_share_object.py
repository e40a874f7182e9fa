"""The core's ``Share`` behaves as the named tuple it replaced: fields by name, by index,
sliced and unpacked, compared and hashed as that tuple, printed, pickled, replaced, as
plain data; bytes keep their kind (apportioned float, estimated int)."""

from __future__ import annotations

import pickle
from collections import namedtuple

import pytest

from correlator.attribution.estimate import Share
from correlator.data import to_data

FIELDS = ("name", "samples", "share", "share_low", "share_high", "bytes", "low", "high",
          "packets", "exact")
VALUES = ("tenant:a", 25, 0.25, 0.1651, 0.3511, 2500, 1520.0, 3480.0, 2**70, False)


_Tuple = namedtuple("_Tuple", FIELDS)  # the named tuple Share was


def test_fields_by_name_index_slice_and_unpacking() -> None:
    share = Share(*VALUES)
    assert Share._fields == FIELDS
    assert tuple(getattr(share, name) for name in FIELDS) == VALUES
    assert (len(share), share[0], share[-1], share[2:5]) == (10, "tenant:a", False,
                                                           (0.25, 0.1651, 0.3511))
    name, samples, *_, packets, exact = share
    assert (name, samples, packets, exact) == ("tenant:a", 25, 2**70, False)
    with pytest.raises(IndexError):
        share[10]


def test_compared_and_hashed_as_its_tuple() -> None:
    share, twin = Share(*VALUES), _Tuple(*VALUES)
    assert share == VALUES and VALUES == share and share == twin and twin == share  # noqa: SIM300
    assert share == Share(*VALUES) and hash(share) == hash(VALUES)
    assert share != Share(*VALUES[:5], 2500.0, *VALUES[6:9], True) and share != VALUES[:-1] \
        and share != "x"
    assert share < Share("tenant:b", *VALUES[1:]) and sorted([Share("z", *VALUES[1:]), share]
                                                             )[0] is share


def test_printed_pickled_replaced_and_plain() -> None:
    share = Share(*VALUES)
    assert repr(share) == repr(_Tuple(*VALUES)).replace("_Tuple", "Share")
    assert pickle.loads(pickle.dumps(share)) == share
    moved = share._replace(bytes=2500.5, exact=True)
    assert tuple(moved) == (*VALUES[:5], 2500.5, *VALUES[6:9], True)
    assert type(moved.bytes) is float and type(share.bytes) is int
    assert share._asdict() == dict(zip(FIELDS, VALUES, strict=True))
    assert to_data([share]) == [dict(zip(FIELDS, VALUES, strict=True))]
    assert Share(**share._asdict()) == share


def test_bad_fields_are_refused() -> None:
    with pytest.raises(ValueError, match="Got unexpected field names: \\['size'\\]"):
        Share(*VALUES)._replace(size=1)
    with pytest.raises(ValueError, match="a share's bytes are a float or an int, not str"):
        Share(*VALUES[:5], "2500", *VALUES[6:])
    with pytest.raises(ValueError, match="exact when its bytes are apportioned"):
        Share(*VALUES[:9], True)
    with pytest.raises(TypeError):
        Share(*VALUES[:9])
