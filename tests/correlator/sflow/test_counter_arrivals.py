"""An interval's counter samples kept in the core (:class:`correlator._wire.CounterArrivals`):
given back as given, joined, pickled across processes, bad ones refused."""

import pickle

import pytest

from correlator._wire import CounterArrivals

AGENT, AGENT6 = bytes([192, 0, 2, 1]), bytes(range(16))
RECORD = (7, 6, 10**11, 1, 1, 2**64 - 1, 1, 2, 3, 4, 5, 6, 9000, 2**32 - 1, 0, 0, 1, 2, 0)
ARRIVALS = [
    (AGENT, 0, 100.25, 5000, (1, 0, 7, RECORD, None)),
    (AGENT6, 3, 100.5, 2**32 - 1, (2**32 - 1, 0, 8, None, tuple(range(13)))),
    (AGENT, 1, 99.0, 0, (3, 0, 9, None, None)),
]


def test_arrivals_come_back_as_given_in_their_order():
    assert list(CounterArrivals(ARRIVALS)) == ARRIVALS
    assert len(CounterArrivals(ARRIVALS)) == 3 and len(CounterArrivals()) == 0


def test_joined_arrivals_follow_one_another():
    joined = CounterArrivals.joined([CounterArrivals(ARRIVALS[:1]), CounterArrivals(),
                                     CounterArrivals(ARRIVALS[1:])])
    assert joined == CounterArrivals(ARRIVALS)
    assert joined != CounterArrivals(ARRIVALS[::-1])


def test_arrivals_pickle_whole():
    again = pickle.loads(pickle.dumps(CounterArrivals(ARRIVALS)))
    assert again == CounterArrivals(ARRIVALS) and list(again) == ARRIVALS


@pytest.mark.parametrize(("sample", "error"), [
    ((1, 0, 7, RECORD[:18], None), "interface counters of 18 fields, not 19"),
    ((1, 0, 7, (*RECORD[:6], 2**32, *RECORD[7:]), None), "4294967296 is not a 32-bit"),
    ((1, 0, 7, None, (1, 2)), "ethernet counters of 2 words, not 13"),
])
def test_a_malformed_sample_is_refused(sample, error):
    with pytest.raises(ValueError, match=error):
        CounterArrivals([(AGENT, 0, 1.0, 1, sample)])
