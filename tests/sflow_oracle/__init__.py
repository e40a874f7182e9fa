"""The pure-Python sFlow v5 decoder, loss accounting and agent clocks fabcorr once received
with: the oracle the Rust wire path (:mod:`correlator._wire`) is compared against,
datagram by datagram (tests/correlator/sflow/test_native.py, test_accounting.py,
test_clock.py)."""
