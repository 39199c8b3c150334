"""Rows read straight from the pages of a damaged SQLite file, for `doctor --repair`.

When SQLite itself cannot read a table (a truncated file, a broken interior
page, an unreadable schema), its rows usually still sit whole on their leaf
pages. This module walks every page of the file and decodes the cells of each
table leaf, following overflow chains, as the file format describes
(sqlite.org/fileformat2.html): a page's type byte, its cell pointers, a
cell's payload size and rowid varints, the record header's serial types.

Pages on the freelist are skipped: they hold rows the user deleted (a
`forget`, a `redact`), which must not come back. Nothing here writes; a page
or cell that does not parse is passed over. Decision 145 says why this, and
not the `sqlite3` shell's `.recover`.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator

HEADER = b"SQLite format 3\x00"
TABLE_LEAF = 0x0D
MAX_OVERFLOW_PAGES = 1 << 16  # a loop in a damaged chain must end


def _varint(data: bytes, at: int) -> tuple[int, int]:
    """(value, next offset) of the varint at `at` (1 to 9 bytes, big-endian)."""
    value = 0
    for i in range(8):
        byte = data[at + i]
        value = (value << 7) | (byte & 0x7F)
        if not byte & 0x80:
            return value, at + i + 1
    return (value << 8) | data[at + 8], at + 9


def _value(serial: int, data: bytes, at: int) -> tuple[object, int]:
    if serial == 0:
        return None, at
    if 1 <= serial <= 6:
        size = (1, 2, 3, 4, 6, 8)[serial - 1]
        return int.from_bytes(data[at : at + size], "big", signed=True), at + size
    if serial == 7:
        return struct.unpack(">d", data[at : at + 8])[0], at + 8
    if serial in (8, 9):
        return serial - 8, at
    if serial >= 12:
        size = (serial - 12) // 2
        raw = data[at : at + size]
        if len(raw) != size:
            raise ValueError("cut short")
        if serial % 2:
            return raw.decode("utf-8"), at + size
        return bytes(raw), at + size
    raise ValueError("reserved serial type")


def record(payload: bytes) -> list[object]:
    """The values of one record (raises ValueError or IndexError when it does not parse)."""
    size, at = _varint(payload, 0)
    serials = []
    while at < size:
        serial, at = _varint(payload, at)
        serials.append(serial)
    values = []
    at = size
    for serial in serials:
        value, at = _value(serial, payload, at)
        values.append(value)
    if at > len(payload):
        raise ValueError("cut short")
    return values


class PageFile:
    """The pages of one database file, read whole into memory (it is being recovered)."""

    def __init__(self, data: bytes) -> None:
        if not data.startswith(HEADER) or len(data) < 512:
            raise ValueError("not an SQLite file")
        size = int.from_bytes(data[16:18], "big")
        self.page_size = 65536 if size == 1 else size
        if self.page_size < 512 or self.page_size & (self.page_size - 1):
            raise ValueError("no valid page size")
        self.usable = self.page_size - data[20]
        self.data = data
        self.count = len(data) // self.page_size

    def page(self, number: int) -> bytes:
        start = (number - 1) * self.page_size
        return self.data[start : start + self.page_size]

    def freelist(self) -> set[int]:
        """The free pages, as far as the trunk chain can be followed."""
        free: set[int] = set()
        trunk = int.from_bytes(self.data[32:36], "big")
        while 1 < trunk <= self.count and trunk not in free:
            free.add(trunk)
            page = self.page(trunk)
            leaves = int.from_bytes(page[4:8], "big")
            for i in range(min(leaves, (self.usable - 8) // 4)):
                free.add(int.from_bytes(page[8 + 4 * i : 12 + 4 * i], "big"))
            trunk = int.from_bytes(page[0:4], "big")
        return free

    def _payload(self, page: bytes, at: int) -> tuple[int, bytes]:
        total, at = _varint(page, at)
        rowid, at = _varint(page, at)
        if rowid >= 1 << 63:
            rowid -= 1 << 64
        usable = self.usable
        most = usable - 35
        if total <= most:
            return rowid, page[at : at + total]
        least = (usable - 12) * 32 // 255 - 23
        local = least + (total - least) % (usable - 4)
        if local > most:
            local = least
        parts = [page[at : at + local]]
        have = local
        next_page = int.from_bytes(page[at + local : at + local + 4], "big")
        hops = 0
        while have < total and 1 <= next_page <= self.count and hops < MAX_OVERFLOW_PAGES:
            overflow = self.page(next_page)
            piece = overflow[4 : 4 + min(usable - 4, total - have)]
            parts.append(piece)
            have += len(piece)
            next_page = int.from_bytes(overflow[0:4], "big")
            hops += 1
        if have < total:
            raise ValueError("overflow chain cut short")
        return rowid, b"".join(parts)

    def rows(self) -> Iterator[tuple[int, list[object]]]:
        """(rowid, values) of every cell of every table leaf page not on the freelist."""
        free = self.freelist()
        for number in range(1, self.count + 1):
            if number in free:
                continue
            page = self.page(number)
            base = 100 if number == 1 else 0
            if page[base] != TABLE_LEAF:
                continue
            cells = int.from_bytes(page[base + 3 : base + 5], "big")
            for i in range(cells):
                pointer = base + 8 + 2 * i
                try:
                    at = int.from_bytes(page[pointer : pointer + 2], "big")
                    if not base + 8 <= at < self.usable:
                        continue
                    rowid, payload = self._payload(page, at)
                    yield rowid, record(payload)
                except (ValueError, IndexError, UnicodeDecodeError, struct.error):
                    continue
