"""How live mode's cache holds an object: pickled and compressed, read anew when used.

An inventory build reads each object once or twice; between builds the cache only holds
them. As dicts, an x-large cluster's objects (cut to their shapes,
:mod:`inventory.kubernetes.shapes`) take 235 MiB; packed, 36 MiB, and a build unpacks
them one at a time (about 2 s of CPU at x-large).
"""

from __future__ import annotations

import pickle
import zlib
from collections.abc import Iterator, Sequence
from typing import overload

from inventory.kubernetes.objects import Object


class Packed:
    """One object, packed, with the namespace/name and uid its store compares.

    >>> packed = Packed({"metadata": {"name": "w-0", "namespace": "a", "uid": "u1"}})
    >>> packed.key, packed.uid, packed.unpacked()["metadata"]["name"]
    (('a', 'w-0'), 'u1', 'w-0')
    """

    __slots__ = ("_blob", "key", "uid")

    def __init__(self, obj: Object) -> None:
        meta = obj.get("metadata") or {}
        self.key: tuple[str, str] = (meta.get("namespace", ""), meta.get("name", ""))
        self.uid: str | None = meta.get("uid")
        self._blob = zlib.compress(pickle.dumps(obj, pickle.HIGHEST_PROTOCOL), 1)

    def unpacked(self) -> Object:
        """The object, as new dicts (the caller's to change)."""
        return pickle.loads(zlib.decompress(self._blob))  # our own pickles


class Unpacked(Sequence[Object]):
    """Packed objects as a sequence: each unpacked as it is reached, none kept.

    >>> objects = Unpacked([Packed({"metadata": {"name": n}}) for n in "ab"])
    >>> len(objects), [o["metadata"]["name"] for o in objects], objects[-1]["metadata"]
    (2, ['a', 'b'], {'name': 'b'})
    """

    def __init__(self, packed: Sequence[Packed]) -> None:
        self._packed = packed

    def __len__(self) -> int:
        return len(self._packed)

    @overload
    def __getitem__(self, at: int) -> Object: ...

    @overload
    def __getitem__(self, at: slice) -> list[Object]: ...

    def __getitem__(self, at: int | slice) -> Object | list[Object]:
        if isinstance(at, slice):
            return [p.unpacked() for p in self._packed[at]]
        return self._packed[at].unpacked()

    def __iter__(self) -> Iterator[Object]:
        return (p.unpacked() for p in self._packed)
