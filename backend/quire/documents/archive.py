"""ZIP archives in a batch: their documents read safely with the standard library, never unpacked to disk.

What is refused, and why (each refusal names the entry and says so in plain words):
- the whole archive: more files than a batch takes, or more bytes unpacked than a batch may hold
  (from the central directory, before anything is decompressed);
- one entry: a path that is absolute or climbs out with `..` (nothing is ever written under its
  name, but such a name means the archive was made to attack an unzipper), encryption, a
  compression method the standard library cannot read, a size over the upload limit, a
  compression ratio over the limit (a ZIP bomb), an archive inside the archive, damage (a CRC
  or size that does not match what was read).

`zipfile` itself stops reading an entry at the size its header declares, so the declared sizes
checked here bound what is decompressed. Folders and the litter of desktop unzippers
(`__MACOSX/`, `.DS_Store`, `Thumbs.db`) are skipped without comment.
"""

from __future__ import annotations

import posixpath
import shutil
import tempfile
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO

# Office and OpenDocument files are ZIPs too; these entries say a ZIP is a document, not an archive.
_DOCUMENT_MARKERS = ("[Content_Types].xml", "mimetype")
_READABLE_METHODS = {zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA}
_LITTER = {".ds_store", "thumbs.db", "desktop.ini"}
SPOOL_BYTES = 1024 * 1024


@dataclass(frozen=True)
class ArchiveLimits:
    max_files: int
    max_total_bytes: int
    max_file_bytes: int
    max_ratio: float


class ArchiveRefused(Exception):
    """The archive as a whole cannot be read; the message says why, in plain words."""


@dataclass(frozen=True)
class Member:
    """A document inside the archive, to be read with `open_member`."""

    name: str
    info: zipfile.ZipInfo


@dataclass(frozen=True)
class Refusal:
    """An entry that is not read, and why."""

    name: str
    reason: str


def is_archive(stream: BinaryIO) -> bool:
    """Whether the stream is a ZIP archive of documents (not a DOCX, XLSX or ODF file, which are ZIPs too)."""
    start = stream.tell()
    try:
        if stream.read(4) != b"PK\x03\x04":
            return False
        stream.seek(start)
        try:
            with zipfile.ZipFile(stream) as archive:
                names = set(archive.namelist())
        except (zipfile.BadZipFile, OSError, ValueError):
            return False
        return not any(marker in names for marker in _DOCUMENT_MARKERS)
    finally:
        stream.seek(start)


def _mb(size: int) -> str:
    return f"{size / 1_048_576:,.0f} MB"


def _litter(name: str) -> bool:
    parts = name.split("/")
    return parts[0] == "__MACOSX" or parts[-1].lower() in _LITTER or parts[-1].startswith("._")


def _unsafe(name: str) -> bool:
    normal = name.replace("\\", "/")
    return normal.startswith("/") or (len(normal) > 1 and normal[1] == ":") or ".." in normal.split("/")


def members(archive: zipfile.ZipFile, limits: ArchiveLimits) -> Iterator[Member | Refusal]:
    """The archive's documents in order, and a refusal for each entry that is not read.

    Raises ArchiveRefused before yielding anything when the archive as a whole is over a limit.
    """
    entries = [info for info in archive.infolist() if not info.is_dir() and not _litter(info.filename)]
    if len(entries) > limits.max_files:
        raise ArchiveRefused(
            f"The archive holds {len(entries):,} files; a batch takes at most {limits.max_files:,}. "
            "Split it into smaller archives."
        )
    unpacked = sum(info.file_size for info in entries)
    if unpacked > limits.max_total_bytes:
        raise ArchiveRefused(
            f"The archive unpacks to {_mb(unpacked)}; a batch may hold at most {_mb(limits.max_total_bytes)}."
        )
    for info in entries:
        name = info.filename
        ratio = info.file_size / max(info.compress_size, 1)
        if _unsafe(name):
            yield Refusal(name, "Its path is absolute or leaves the archive ('..'), so it was not read.")
        elif info.flag_bits & 0x1:
            yield Refusal(name, "It is encrypted. Add it without a password.")
        elif info.compress_type not in _READABLE_METHODS:
            yield Refusal(name, "It is compressed with a method Quire cannot read. Use ordinary ZIP compression.")
        elif info.file_size > limits.max_file_bytes:
            yield Refusal(name, f"It is larger than {_mb(limits.max_file_bytes)}, the most a document may be.")
        elif info.file_size > SPOOL_BYTES and ratio > limits.max_ratio:
            yield Refusal(
                name, f"It is compressed {ratio:,.0f} to 1, far more than any document: it looks like a ZIP bomb."
            )
        else:
            yield Member(name, info)


def open_member(archive: zipfile.ZipFile, member: Member) -> BinaryIO:
    """The entry's bytes in a spooled temporary file (memory up to 1 MB, then disk), at its start.

    Raises zipfile.BadZipFile when the entry is damaged (its CRC or size does not match).
    """
    spool = tempfile.SpooledTemporaryFile(max_size=SPOOL_BYTES)  # noqa: SIM115 - handed to the caller
    try:
        with archive.open(member.info) as source:
            shutil.copyfileobj(source, spool)
    except BaseException:
        spool.close()
        raise
    spool.seek(0)
    return spool  # type: ignore[return-value]


def display_name(archive_name: str, member_name: str) -> str:
    """How an entry is named in answers: the archive's name, then the entry's path inside it."""
    return posixpath.join(archive_name or "archive.zip", member_name.replace("\\", "/").lstrip("/"))
