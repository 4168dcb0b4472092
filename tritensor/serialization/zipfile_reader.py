"""The zip reader under ``tt.load``: PyTorch's PyTorchStreamReader (miniz), trusting nothing the
archive's directory says.

Python's ``zipfile`` believes a directory entry's sizes until it runs off the end of the file
(``EOFError()``), and ``mmap=True`` then maps bytes the file does not have (SIGBUS). Here, when the
archive is opened, every record is checked against the real file before anything is read:

* the end-of-central-directory record (zip64 too) is found and the central directory lies inside
  the file, before that record;
* each entry's local header is where the entry says, has the same name, and its data ends before
  the central directory; a stored record's two sizes agree; no two records overlap and no name is
  given twice.

Reading a record then checks its method (stored or deflate; no encryption), refuses to inflate
past the declared size or past ``MAX_INFLATE_RATIO`` times the compressed size, and checks its
CRC-32 (a directory CRC of 0 is what ``torch.serialization.set_crc32_options(False)`` writes and
is not checked; ``mmap`` does not read a storage's bytes, so it checks none).

Errors are torch's ``RuntimeError``s, naming the record ("PytorchStreamReader failed reading file
data/0: CRC-32 check failed ...").
"""
from __future__ import annotations

import struct
import zlib

# A record may inflate to at most this many times its compressed size (past a small floor).
# Deflate can reach ~1032x; torch and tritensor write stored records only, so a compressed
# checkpoint came from another tool, and past this ratio it is treated as a decompression bomb.
MAX_INFLATE_RATIO = 100
INFLATE_FLOOR = 1 << 20

_CORRUPTED = (". If you are seeing this error, there is a high likelihood that your checkpoint file is corrupted. "
              "This can happen if the checkpoint was not saved properly, was transferred incorrectly, or the "
              "file was modified after saving.")

_EOCD = struct.Struct("<4sHHHHIIH")                  # end of central directory, 22 bytes
_ZIP64_LOCATOR = struct.Struct("<4sIQI")             # 20 bytes
_ZIP64_EOCD = struct.Struct("<4sQHHIIQQQQ")          # 56 bytes
_CENTRAL = struct.Struct("<4sHHHHHHIIIHHHHHII")      # 46 bytes
_LOCAL = struct.Struct("<4sHHHHHIIIHH")              # 30 bytes
_U32 = 0xFFFFFFFF


def archive_error(reason):
    return RuntimeError(f"PytorchStreamReader failed reading zip archive: {reason}{_CORRUPTED}")


def corrupted(what):
    """miniz's MZ_ZIP_INVALID_HEADER_OR_CORRUPTED, torch's message, with what was found."""
    return archive_error(f"invalid header or archive is corrupted ({what})")


def record_error(name, reason):
    return RuntimeError(f"PytorchStreamReader failed reading file {name}: {reason}{_CORRUPTED}")


def missing_error(name):
    return RuntimeError(f"PytorchStreamReader failed locating file {name}: file not found{_CORRUPTED}")


class Record:
    __slots__ = ("name", "flags", "method", "crc", "csize", "usize", "header_offset", "data_offset")

    def __init__(self, name, flags, method, crc, csize, usize, header_offset):
        self.name, self.flags, self.method, self.crc = name, flags, method, crc
        self.csize, self.usize, self.header_offset = csize, usize, header_offset
        self.data_offset = None


class ZipReader:
    """The records of the zip archive in ``fh`` (a seekable binary file) from its current
    position to its end. Offsets are relative to that start."""

    def __init__(self, fh):
        self.fh = fh
        self.start = fh.tell()
        fh.seek(0, 2)
        self.size = fh.tell() - self.start
        cd_offset, cd_size, count, cd_end = self._find_central_directory()
        self.records = {}
        self.order = []
        for rec in self._parse_central_directory(cd_offset, cd_size, count):
            if rec.name in self.records:
                raise archive_error(f"duplicate record {rec.name}")
            self.records[rec.name] = rec
            self.order.append(rec.name)
        self._check_extents(cd_offset)

    # ------------------------------------------------------------------ the directory
    def _read_at(self, offset, n):
        self.fh.seek(self.start + offset)
        return self.fh.read(n)

    def _find_central_directory(self):
        tail_len = min(self.size, _EOCD.size + 0xFFFF)
        tail = self._read_at(self.size - tail_len, tail_len)
        pos = tail.rfind(b"PK\x05\x06")
        while pos >= 0 and pos + _EOCD.size > len(tail):
            pos = tail.rfind(b"PK\x05\x06", 0, pos)
        if pos < 0:
            raise archive_error("failed finding central directory")
        _, disk, cd_disk, n_disk, count, cd_size, cd_offset, _comment = _EOCD.unpack_from(tail, pos)
        eocd = self.size - tail_len + pos
        cd_end = eocd
        if eocd >= _ZIP64_LOCATOR.size:
            loc = self._read_at(eocd - _ZIP64_LOCATOR.size, _ZIP64_LOCATOR.size)
            sig, _, z64_offset, _ = _ZIP64_LOCATOR.unpack(loc)
            if sig == b"PK\x06\x07":
                if z64_offset + _ZIP64_EOCD.size > eocd - _ZIP64_LOCATOR.size:
                    raise corrupted("the zip64 end record lies past its locator")
                z64 = _ZIP64_EOCD.unpack(self._read_at(z64_offset, _ZIP64_EOCD.size))
                if z64[0] != b"PK\x06\x06":
                    raise corrupted("no zip64 end record where its locator says")
                disk, cd_disk, n_disk, count, cd_size, cd_offset = z64[4:10]
                cd_end = z64_offset
        if disk != 0 or cd_disk != 0 or n_disk != count:
            raise archive_error("unsupported multidisk archive")
        if cd_offset + cd_size > cd_end or count * _CENTRAL.size > cd_size:
            raise corrupted("the central directory lies outside the file")
        return cd_offset, cd_size, count, cd_end

    def _parse_central_directory(self, cd_offset, cd_size, count):
        cd = self._read_at(cd_offset, cd_size)
        if len(cd) != cd_size:
            raise archive_error("failed finding central directory")
        p = 0
        for _ in range(count):
            if p + _CENTRAL.size > cd_size:
                raise corrupted("a central directory entry runs past the directory")
            (sig, _made, _need, flags, method, _time, _date, crc, csize, usize, n_name, n_extra, n_comment,
             _disk, _iattr, _eattr, offset) = _CENTRAL.unpack_from(cd, p)
            p += _CENTRAL.size
            if sig != b"PK\x01\x02" or p + n_name + n_extra + n_comment > cd_size:
                raise corrupted("a central directory entry runs past the directory")
            raw_name = cd[p:p + n_name]
            extra = cd[p + n_name:p + n_name + n_extra]
            p += n_name + n_extra + n_comment
            try:
                name = raw_name.decode("utf-8" if flags & 0x800 else "cp437")
            except UnicodeDecodeError:
                raise corrupted("a record name is not UTF-8") from None
            usize, csize, offset = _zip64_sizes(extra, usize, csize, offset)
            yield Record(name, flags, method, crc, csize, usize, offset)

    def _check_extents(self, cd_offset):
        """Each record's local header and data lie inside the file, before the central directory,
        without overlapping another record (miniz checks less: a lying size ran past the file)."""
        extents = []
        for rec in self.records.values():
            if rec.method == 0 and rec.csize != rec.usize:
                raise corrupted("a stored record's sizes disagree")
            if rec.header_offset + _LOCAL.size > cd_offset:
                raise corrupted("a local header lies past the data")
            local = self._read_at(rec.header_offset, _LOCAL.size)
            sig, *_, n_name, n_extra = _LOCAL.unpack(local)
            name_start = rec.header_offset + _LOCAL.size
            rec.data_offset = name_start + n_name + n_extra
            end = rec.data_offset + rec.csize
            if sig != b"PK\x03\x04" or end > cd_offset:
                raise corrupted("a local header or its data is not where the directory says")
            if self._read_at(name_start, n_name) != rec.name.encode("utf-8" if rec.flags & 0x800 else "cp437"):
                raise archive_error(f"the local header of {rec.name} names another record")
            extents.append((rec.header_offset, end))
        extents.sort()
        for (_, end), (start, _) in zip(extents, extents[1:]):
            if start < end:
                raise corrupted("records overlap")

    # ------------------------------------------------------------------ records
    def names(self):
        return list(self.order)

    def has(self, name):
        return name in self.records

    def get(self, name, shown=None):
        rec = self.records.get(name)
        if rec is None:
            raise missing_error(shown or name)
        if rec.flags & 0x41:                  # bit 0: encrypted, bit 6: strong encryption
            raise RuntimeError(f"PytorchStreamReader failed retrieving file meta-data for {shown or name}: "
                               f"unsupported encryption{_CORRUPTED}")
        if rec.method not in (0, 8):
            raise RuntimeError(f"PytorchStreamReader failed retrieving file meta-data for {shown or name}: "
                               f"unsupported method{_CORRUPTED}")
        return rec

    def stored_offset(self, name, shown=None):
        """Where a stored record's bytes start in the file (for mmap); None if it is compressed."""
        rec = self.get(name, shown)
        return self.start + rec.data_offset if rec.method == 0 else None

    def read(self, name, shown=None):
        """The record's bytes: inflated within bounds and CRC-checked."""
        rec = self.get(name, shown)
        shown = shown or name
        raw = self._read_at(rec.data_offset, rec.csize)
        if len(raw) != rec.csize:                       # the file shrank since it was opened
            raise record_error(shown, "file truncated")
        if rec.method == 8:
            raw = _inflate(raw, rec, shown)
        if rec.crc and zlib.crc32(raw) != rec.crc:
            raise record_error(shown, "CRC-32 check failed")
        return raw

    def size_of(self, name, shown=None):
        return self.get(name, shown).usize


def _zip64_sizes(extra, usize, csize, offset):
    """The zip64 extended-information extra field (0x0001) holds, in this order, each of the
    uncompressed size, compressed size and header offset whose 32-bit field is 0xFFFFFFFF."""
    i = 0
    while i + 4 <= len(extra):
        tag, n = struct.unpack_from("<HH", extra, i)
        body = extra[i + 4:i + 4 + n]
        if len(body) != n:
            raise corrupted("a truncated extra field")
        if tag == 1:
            values = [usize, csize, offset]
            j = 0
            for k in range(3):
                if values[k] == _U32:
                    if j + 8 > n:
                        raise corrupted("a zip64 extra field without the sizes it must hold")
                    values[k] = struct.unpack_from("<Q", body, j)[0]
                    j += 8
            return tuple(values)
        i += 4 + n
    return usize, csize, offset


def _inflate(raw, rec, shown):
    if rec.usize > max(INFLATE_FLOOR, rec.csize * MAX_INFLATE_RATIO):
        raise record_error(shown, f"a compressed record of {rec.csize} bytes claims to inflate to {rec.usize} "
                                  f"bytes (over {MAX_INFLATE_RATIO}x): refused as a decompression bomb")
    inflater = zlib.decompressobj(-15)
    try:
        out = inflater.decompress(raw, rec.usize + 1)     # never more than one byte past the claim
    except zlib.error:
        raise record_error(shown, "decompression failed") from None
    if len(out) != rec.usize:
        raise record_error(shown, "unexpected decompressed size")
    if not inflater.eof:
        raise record_error(shown, "decompression failed")
    return out
