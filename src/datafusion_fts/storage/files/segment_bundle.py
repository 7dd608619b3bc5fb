"""An index segment's files as one object (``index/<segment>/bundle``): on an object store a
segment is one request to write and one to read, not a dozen (issue 32; a one-row insert
is a commit there). The files inside are byte for byte a directory's (``<array>.arrow`` and
``checksums.ipc``), verified the same way; both stores read both layouts, so a database
copied between a directory and a store opens either way.

Layout: ``FTSBNDL1``, a little-endian u32 count, then per file its name's length (u16),
its name (UTF-8), its offset and length (u64 each) from the object's start; the files'
bytes follow, 8-byte aligned (Arrow IPC buffers are read in place, zero copy)."""

from __future__ import annotations

import struct
from collections.abc import Mapping

from ...errors import StorageError

BUNDLE = "bundle"
_MAGIC = b"FTSBNDL1"
_COUNT = struct.Struct("<I")
_NAME = struct.Struct("<H")
_SPAN = struct.Struct("<QQ")


def pack(files: Mapping[str, bytes | memoryview]) -> bytes:
    """The bundle of ``files`` (name -> bytes)."""
    names = [name.encode("utf-8") for name in files]
    head = len(_MAGIC) + _COUNT.size + sum(_NAME.size + len(n) + _SPAN.size for n in names)
    spans, at = [], _aligned(head)
    for data in files.values():
        spans.append((at, len(data)))
        at = _aligned(at + len(data))
    out = bytearray(at)
    parts = [_MAGIC, _COUNT.pack(len(names))]
    for name, (offset, length) in zip(names, spans):
        parts += [_NAME.pack(len(name)), name, _SPAN.pack(offset, length)]
    header = b"".join(parts)
    out[: len(header)] = header
    for data, (offset, length) in zip(files.values(), spans):
        out[offset : offset + length] = data
    return bytes(out)


def unpack(data: bytes | memoryview, where: str) -> dict[str, memoryview]:
    """The files of the bundle ``data`` (read from ``where``), as views of it."""
    view = memoryview(data)
    spans = file_spans(view, len(view), where)
    if spans is None:
        raise StorageError(f"damaged index segment bundle {where}: its header runs past its end")
    return {name: view[offset : offset + length] for name, (offset, length) in spans.items()}


def file_spans(head: bytes | memoryview, size: int, where: str) -> dict[str, tuple[int, int]] | None:
    """Each file's (offset, length) in a bundle of ``size`` bytes, from its first bytes
    ``head``; None if the header runs past ``head`` (read more of it)."""
    view = memoryview(head)
    try:
        if len(view) >= len(_MAGIC) and bytes(view[: len(_MAGIC)]) != _MAGIC:
            raise ValueError("not a segment bundle")
        at = len(_MAGIC)
        (count,) = _COUNT.unpack_from(view, at)
        at += _COUNT.size
        files = {}
        for _ in range(count):
            (length,) = _NAME.unpack_from(view, at)
            if at + _NAME.size + length > len(view):
                raise struct.error("the header runs past what was read")
            name = bytes(view[at + _NAME.size : at + _NAME.size + length]).decode("utf-8")
            at += _NAME.size + length
            offset, length = _SPAN.unpack_from(view, at)
            at += _SPAN.size
            if offset + length > size:
                raise ValueError(f"file {name!r} runs past its end")
            files[name] = (offset, length)
        return files
    except struct.error:
        if len(view) < size:
            return None
        raise StorageError(f"damaged index segment bundle {where}: its header runs past its end") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise StorageError(f"damaged index segment bundle {where}: {exc}") from None


def _aligned(at: int) -> int:
    return (at + 7) & ~7
