"""`Indexed`: the one base of the package's sequences read by index from elsewhere (prepared
cases, spooled packed cases, spooled result rows). Here, in the bottom layer, because every layer
that holds such a sequence may import it; it imports nothing from the package."""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections.abc import Iterator, Mapping, Sequence
from typing import ClassVar, TypeVar, overload

_T = TypeVar("_T")


class Indexed(Sequence[_T]):
    """A sequence read by index (`_at`, given an index in range): slices and negative indices as
    a list has them; out of range, IndexError naming `noun`."""

    noun: ClassVar[str] = "case"

    def _at(self, index: int) -> _T:
        raise NotImplementedError

    @overload
    def __getitem__(self, index: int) -> _T: ...

    @overload
    def __getitem__(self, index: slice) -> list[_T]: ...

    def __getitem__(self, index: int | slice) -> _T | list[_T]:
        if isinstance(index, slice):
            return [self._at(i) for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(f"{self.noun} index out of range")
        return self._at(index)


class IdPositions(Mapping[str, int]):
    """Each id's index in `ids`, unique ids (a dataset's case ids), as `{id: i}` would map them,
    held in two arrays sorted by the ids' hashes: 16 bytes an id, where a dict of 100,000 ids takes
    about 80 (its table and an int object each). The strings are `ids`' own, not copied; a lookup
    is a binary search over the hashes."""

    def __init__(self, ids: Sequence[str]) -> None:
        self._ids = ids
        order = sorted(range(len(ids)), key=lambda i: hash(ids[i]))
        self._hashes = array("q", [hash(ids[i]) for i in order])
        self._index = array("q", order)

    def __getitem__(self, key: str) -> int:
        want = hash(key)
        hashes, index = self._hashes, self._index
        at = bisect_left(hashes, want)
        while at < len(hashes) and hashes[at] == want:
            if self._ids[index[at]] == key:
                return index[at]
            at += 1
        raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        return iter(self._ids)

    def __len__(self) -> int:
        return len(self._ids)
