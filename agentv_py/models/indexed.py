"""`Indexed`: the one base of the package's sequences read by index from elsewhere (prepared
cases, spooled packed cases, spooled result rows). Here, in the bottom layer, because every layer
that holds such a sequence may import it; it imports nothing from the package."""

from __future__ import annotations

from collections.abc import Sequence
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
