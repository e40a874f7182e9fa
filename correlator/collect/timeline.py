"""One counter of one port in time: what it counted over any span, from readings that are
late, stale and taken out of step with the intervals asked about.

A reading says what the counter was when the *agent* last refreshed it, which is not
always when it was read: net-snmp refreshes ifHCInOctets about every 3 s, so 1 s polls
return the same value two or three times, then a jump. A :class:`CounterTimeline` keeps
the moments the counter is known to have had a value:

- a new value is dated at its reading when the old one was read once (nothing says the
  agent is behind: a fresh counter read now and then), and halfway between the last
  reading of the old one and its own when the old one was read again and again (a stale
  agent refreshed somewhere in between); readings the device dated itself (``fresh``: a
  gNMI notification's timestamp) are taken at their word, the old value holding until its
  last reading;
- an old value read again and again was still the agent's value one refresh period
  before its last reading (the period is learnt from the spacing of the changes; until
  it is, nothing is assumed), and a value never seen to move (a port quiet since it was
  first read) was still the counter's at its last reading (nothing says the agent is
  behind), so a counter that stood still and then moves is not spread back over its
  quiet time, and a quiet counter is known up to its last reading.

Between two known moments the counter is interpolated, so the increase over ``[t0, t1)`` is
the difference of its values at ``t1`` and ``t0``. A value asked for inside the known
moments is kept (*pinned*) and given again whenever that instant is asked for, even after
later readings would interpolate it otherwise (a new moment changes the kink of the gap
before it): spans that tile a run add up to the whole increase, and no byte falls between
two intervals, whenever each was asked for. Traffic changes its rate at some moment,
not steadily, so where the rates before and after a gap between moments are known and what
was counted in the gap lies between them, the gap is taken as the earlier rate up to one
kink and the later rate after it (a counter that sat still until its traffic started is
still at zero just before: nothing leaks into the interval before); otherwise at a steady
rate. Values are unwrapped as they come: a fall is judged as
:func:`~correlator.collect.rates.judge_step` judges it, from the most the counter can count
a second (line rate): a narrow counter's wrap adds ``2**bits``; a fall faster than line
rate as a wrap, a fall of a 64-bit counter, or any value after
:meth:`CounterTimeline.restart`, is a reset (the new value counts from zero); a narrow
counter's fall with no known line rate could be either, so its step is unknown: no increase
over a span that holds it.

The timeline is the Rust core's (``wire/src/timeline.rs``, the method of the Python one in
``tests/collect_oracle/timeline.py`` operation for operation). An agent that refreshes
every 3 s, read every second (value by reading time):

>>> t = CounterTimeline()
>>> for at, value in ((0.5, 0), (1.5, 0), (2.5, 300), (3.5, 300), (4.5, 300),
...                   (5.5, 600), (6.5, 600), (7.5, 600), (8.5, 900)):
...     t.add(at, value)
>>> t.moments()  # 0 never seen to move before: it holds until its last reading
[(0.5, 0), (1.5, 0), (2.0, 300), (5.0, 600), (8.0, 900)]
>>> t.increase(2.0, 5.0), t.increase(0.0, 3.0), t.increase(3.0, 8.0)
(300.0, None, 500.0)
>>> t.increase_bounds(3.0, 8.0)  # 0 to 300 a second, changes dated within +-0.5 s
(250.0, 600.0)
>>> t.covered_until
8.0
"""

from correlator._wire import CounterTimeline

__all__ = ["CounterTimeline"]
