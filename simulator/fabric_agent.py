"""An sFlow agent for the emulated fabric: the same datagrams as :class:`SflowAgent`,
encoded faster.

A flow's frame is offered every tick, so the records of its compact flow samples (the
sampled header: protocol, frame length, header bytes) are encoded once per frame and
kept; each sample then packs only its own fields (sequence, source, pool, interfaces).
"""

from __future__ import annotations

import struct

from simulator.sflow_agent import SflowAgent
from simulator.sflow_wire import FLOW, FlowSample

_U32 = 0xFFFFFFFF
_HEAD = struct.Struct("!II7I")  # format, length; seq, source, rate, pool, drops, in, out


class FabricAgent(SflowAgent):
    """An SflowAgent that caches each frame's encoded sample records. Frames must stay
    alive and unchanged while the agent is used (the emulator's frames do)."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self._records: dict[int, tuple[object, bytes]] = {}

    def _flow_sample(self, source_index: int, input: int, output: int, frame: bytes,
                     pool: int) -> None:
        if self.expanded:
            super()._flow_sample(source_index, input, output, frame, pool)
            return
        cached = self._records.get(id(frame))
        if cached is None:
            sample = FlowSample(0, 0, 0, 0, 0, 0, 0, frame[:self.header_bytes], len(frame) + 4)
            cached = self._records[id(frame)] = (frame, sample.encode()[_HEAD.size:])
        records = cached[1]
        seq = self._flow_seq[source_index] = (self._flow_seq.get(source_index, 0) + 1) & _U32
        self._add(_HEAD.pack(FLOW, 28 + len(records), seq, source_index, self.sampling_rate,
                             pool & _U32, 0, input, output) + records)
