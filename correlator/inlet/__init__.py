"""``fabcorr inlet``: the switches' one sFlow collector address in front of the shards.

Each datagram goes on unchanged to the shard owning its switch (:func:`correlator.shards.owner`
of the switch whose agent address the header names), once the header shows a known switch
sending from its own address. Python computes the table (:mod:`~correlator.inlet.routes`)
and finds the shards (:mod:`~correlator.inlet.targets`); the Rust crate forwards
(``correlator._wire.Inlet``); :mod:`~correlator.inlet.metrics` exposes its counts.
"""
