"""A durable, append-only log of frames awaiting delivery (a sink's event batches).

Layout of one spool directory::

    lock                       flock()ed by the daemon that owns the spool
    id                         random spool identity (``Record.message_id``'s prefix)
    cursor                     "<segment> <offset>": everything before it was delivered
    00000000000000000007.seg   segments: frames appended in order
    00000000000000000008.seg

A frame is ``>II`` (payload length, CRC-32 of the payload) then the payload,
``>H`` key length, the key, the body.  The writer appends whole batches (one
``write``) and ``fsync``\\ s at flush; the reader takes frames after the cursor,
delivers them, and advances the cursor (written atomically: temporary file, fsync,
rename) only once the sink holds them.  Segments wholly before the cursor are deleted.  In the service
running as root, every directory and file of the spool is handed to the owner of
the workflow that opened it (:mod:`monitord.system.ownership`).

Crash safety: a torn last frame (power loss between write and fsync) is cut off
when the spool is opened; the cursor is only ever moved forward past confirmed
frames, so nothing is lost, and at worst a frame delivered just before a crash is
delivered again by the next daemon (at least once).
"""

from __future__ import annotations

import fcntl
import os
import struct
import threading
import uuid
import zlib
from collections.abc import Sequence
from dataclasses import dataclass

import structlog

from monitord.system.ownership import Owner, chown_new, current, makedirs_owned

log = structlog.get_logger(__name__)

FRAME = struct.Struct(">II")
KEY_LEN = struct.Struct(">H")
SUFFIX = ".seg"
SEGMENT_BYTES = 8 << 20
READ_BYTES = 1 << 20
MAX_FRAME = 1 << 30


class SpoolError(Exception):
    """The spool cannot be used (locked by another daemon, unreadable directory, ...)."""


@dataclass(frozen=True, order=True)
class Position:
    segment: int
    offset: int

    def __str__(self) -> str:
        return f"{self.segment}:{self.offset}"


@dataclass(frozen=True)
class Record:
    start: Position
    end: Position
    routing_key: str
    body: bytes

    spool_id: str = ""

    @property
    def message_id(self) -> str:
        """Globally unique (spool identity + where the frame starts), increasing per spool."""
        return f"{self.spool_id}:{self.start.segment}:{self.start.offset}"


def encode_frame(routing_key: str, body: bytes) -> bytes:
    key = routing_key.encode("utf-8")
    payload = KEY_LEN.pack(len(key)) + key + body
    return FRAME.pack(len(payload), zlib.crc32(payload)) + payload


def decode_frames(data: bytes, base: int) -> tuple[list[tuple[int, int, str, bytes]], int, bool]:
    """Complete frames in ``data`` (read at file offset ``base``).

    Returns ``(frames, consumed, corrupt)``: each frame as (start, end, key, body) in file
    offsets, the number of bytes the complete frames span, and whether a bad frame stopped
    the scan (as opposed to simply running out of bytes).
    """
    frames: list[tuple[int, int, str, bytes]] = []
    pos = 0
    size = len(data)
    while pos + FRAME.size <= size:
        length, crc = FRAME.unpack_from(data, pos)
        if length < KEY_LEN.size or length > MAX_FRAME:
            return frames, pos, True
        end = pos + FRAME.size + length
        if end > size:
            break
        payload = data[pos + FRAME.size : end]
        if zlib.crc32(payload) != crc:
            return frames, pos, True
        (key_len,) = KEY_LEN.unpack_from(payload, 0)
        if KEY_LEN.size + key_len > length:
            return frames, pos, True
        key = payload[KEY_LEN.size : KEY_LEN.size + key_len].decode("utf-8", errors="replace")
        frames.append((base + pos, base + end, key, payload[KEY_LEN.size + key_len :]))
        pos = end
    return frames, pos, False


def _segment_name(index: int) -> str:
    return f"{index:020d}{SUFFIX}"


def _fsync_dir(path: str) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class Spool:
    """One endpoint's spool.  ``append``/``sync`` from the writer thread; ``read_batch``,
    ``rewind`` and ``commit`` from the publisher thread; counters are shared under a lock."""

    def __init__(self, path: str, *, segment_bytes: int = SEGMENT_BYTES) -> None:
        self.path = path
        self.segment_bytes = segment_bytes
        self._lock = threading.Lock()
        self._lock_fd: int | None = None
        self._write_fd: int | None = None
        self._write_seg = 0
        self._end = Position(0, 0)  # where the next appended frame goes
        self._cursor = Position(0, 0)  # durable: everything before was confirmed
        self._read = Position(0, 0)  # publisher's read head (>= cursor)
        self._read_fd: tuple[int, int] | None = None  # (segment, fd)
        self._pending = 0  # frames between cursor and end
        self._dir_dirty = False
        self.appended = 0
        self.committed = 0
        self.spool_id = ""
        self.owner: Owner | None = None  # whose files these are (service as root)

    # ------------------------------------------------------------------ open / close
    def open(self) -> None:
        self.owner = current()
        try:
            makedirs_owned(self.path, self.owner)
            lock = os.path.join(self.path, "lock")
            self._lock_fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
            chown_new(lock, self.owner)
        except OSError as exc:
            raise SpoolError(f"cannot create the spool {self.path}: {exc.strerror}") from None
        try:
            fcntl.flock(self._lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(self._lock_fd)
            self._lock_fd = None
            raise SpoolError(f"the spool {self.path} is in use by another daemon") from None
        try:
            self.spool_id = self._identity()
            self._recover()
        except OSError as exc:
            self.close()
            raise SpoolError(f"cannot read the spool {self.path}: {exc.strerror}") from None

    def _segments(self) -> list[int]:
        out = []
        for name in os.listdir(self.path):
            if name.endswith(SUFFIX) and name[: -len(SUFFIX)].isdigit():
                out.append(int(name[: -len(SUFFIX)]))
        return sorted(out)

    def _seg_path(self, index: int) -> str:
        return os.path.join(self.path, _segment_name(index))

    def _identity(self) -> str:
        path = os.path.join(self.path, "id")
        try:
            with open(path, encoding="ascii") as fh:
                value = fh.read().strip()
            if value:
                return value
        except (FileNotFoundError, UnicodeDecodeError):
            pass
        value = uuid.uuid4().hex
        with open(path + ".tmp", "w", encoding="ascii") as fh:
            fh.write(value + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        chown_new(path + ".tmp", self.owner)
        os.replace(path + ".tmp", path)
        return value

    def _read_cursor(self) -> Position:
        try:
            with open(os.path.join(self.path, "cursor"), encoding="ascii") as fh:
                seg, off = fh.read().split()
            return Position(int(seg), int(off))
        except FileNotFoundError:
            return Position(0, 0)
        except (ValueError, UnicodeDecodeError):
            log.error("spool cursor unreadable: resending the whole spool", spool=self.path)
            return Position(0, 0)

    def _recover(self) -> None:
        cursor = self._read_cursor()
        segments = self._segments()
        if segments and cursor.segment < segments[0]:
            cursor = Position(segments[0], 0)
        pending = 0
        for index in segments:
            if index < cursor.segment:
                os.unlink(self._seg_path(index))  # delivered, its deletion was interrupted
                continue
            start = cursor.offset if index == cursor.segment else 0
            with open(self._seg_path(index), "rb") as fh:
                data = fh.read()
            frames, consumed, corrupt = decode_frames(data[start:], start)
            pending += len(frames)
            if start + consumed < len(data):
                if index == segments[-1]:
                    # A torn or damaged tail of the segment being written: cut it off.
                    log.warning(
                        "spool: discarding a torn record at the end",
                        spool=self.path,
                        segment=index,
                        bytes=len(data) - start - consumed,
                    )
                    os.truncate(self._seg_path(index), start + consumed)
                else:
                    log.error(
                        "spool: damaged record, the rest of the segment is skipped",
                        spool=self.path,
                        segment=index,
                        corrupt=corrupt,
                    )
        live = [i for i in segments if i >= cursor.segment]
        if live:
            self._write_seg = live[-1]
        else:
            self._write_seg = cursor.segment + (1 if cursor.offset else 0)
            if cursor.offset:
                cursor = Position(self._write_seg, 0)
        self._write_fd = self._open_segment(self._write_seg)
        size = os.fstat(self._write_fd).st_size
        if cursor.segment == self._write_seg and cursor.offset > size:
            cursor = Position(self._write_seg, size)  # a cursor past the data: nothing to resend
        self._end = Position(self._write_seg, size)
        self._cursor = self._read = cursor
        self._pending = pending
        self._dir_dirty = True
        if size >= self.segment_bytes or (size and not pending):
            self._rotate()  # full, or wholly delivered: the next commit deletes it

    def _open_segment(self, index: int) -> int:
        path = self._seg_path(index)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        chown_new(path, self.owner)
        return fd

    def close(self) -> None:
        for fd in (self._write_fd, self._read_fd[1] if self._read_fd else None, self._lock_fd):
            if fd is not None:
                try:
                    os.close(fd)
                except OSError:
                    pass
        self._write_fd = self._lock_fd = None
        self._read_fd = None

    # ------------------------------------------------------------------ counters
    @property
    def pending(self) -> int:
        """Frames not yet confirmed by the broker."""
        with self._lock:
            return self._pending

    @property
    def cursor(self) -> Position:
        with self._lock:
            return self._cursor

    def pending_bytes(self) -> int:
        """Bytes of the frames not yet confirmed (segment sizes after the cursor)."""
        with self._lock:
            cursor, end = self._cursor, self._end
        total = 0
        for index in range(cursor.segment, end.segment + 1):
            if index == end.segment:
                size = end.offset
            else:
                try:
                    size = os.stat(self._seg_path(index)).st_size
                except OSError:
                    continue
            total += max(0, size - (cursor.offset if index == cursor.segment else 0))
        return total

    def unread(self) -> bool:
        with self._lock:
            return self._read != self._end

    # ------------------------------------------------------------------ writer side
    def append(self, records: Sequence[tuple[str, bytes]]) -> None:
        """Append ``(routing key, body)`` records as one write; all or nothing."""
        if not records:
            return
        assert self._write_fd is not None, "spool not open"
        data = b"".join(encode_frame(key, body) for key, body in records)
        fd = self._write_fd
        start = self._end.offset
        try:
            view = memoryview(data)
            while view:
                written = os.write(fd, view)
                view = view[written:]
        except OSError:
            try:
                os.ftruncate(fd, start)  # no half batch left behind for the reader
            except OSError:
                pass
            raise
        with self._lock:
            self._end = Position(self._write_seg, start + len(data))
            self._pending += len(records)
        self.appended += len(records)
        if start + len(data) >= self.segment_bytes:
            self._rotate()

    def _rotate(self) -> None:
        assert self._write_fd is not None
        os.fsync(self._write_fd)
        os.close(self._write_fd)
        index = self._write_seg + 1
        self._write_fd = self._open_segment(index)
        with self._lock:
            self._write_seg = index
            self._end = Position(index, 0)
        self._dir_dirty = True

    def sync(self) -> None:
        """Make every appended record durable (the sink's flush)."""
        if self._write_fd is None:
            return
        os.fsync(self._write_fd)
        if self._dir_dirty:
            _fsync_dir(self.path)
            self._dir_dirty = False

    # ------------------------------------------------------------------ publisher side
    def _fd_for(self, segment: int) -> int | None:
        if self._read_fd is not None:
            if self._read_fd[0] == segment:
                return self._read_fd[1]
            os.close(self._read_fd[1])
            self._read_fd = None
        try:
            fd = os.open(self._seg_path(segment), os.O_RDONLY)
        except FileNotFoundError:
            return None
        self._read_fd = (segment, fd)
        return fd

    def read_batch(self, max_records: int = 500, max_bytes: int = READ_BYTES) -> list[Record]:
        """The next frames after the read head (which then moves past them)."""
        out: list[Record] = []
        while len(out) < max_records:
            with self._lock:
                end, pos = self._end, self._read
            if pos >= end:
                break
            fd = self._fd_for(pos.segment)
            if fd is None:
                size = 0
            else:
                size = end.offset if pos.segment == end.segment else os.fstat(fd).st_size
            if pos.offset >= size:
                if pos.segment < end.segment:
                    with self._lock:
                        self._read = Position(pos.segment + 1, 0)
                    continue
                break
            assert fd is not None
            want = min(size - pos.offset, max_bytes)
            data = os.pread(fd, want, pos.offset)
            frames, consumed, corrupt = decode_frames(data, pos.offset)
            if not frames:
                if corrupt or want == size - pos.offset:
                    # Cannot happen for frames we wrote; skip the rest rather than stall.
                    log.error("spool: damaged record skipped", spool=self.path, position=str(pos))
                    with self._lock:
                        self._read = Position(pos.segment, size)
                    continue
                # One frame larger than max_bytes: read exactly it.
                (length, _crc) = FRAME.unpack(data[: FRAME.size])
                data = os.pread(fd, FRAME.size + length, pos.offset)
                frames, consumed, corrupt = decode_frames(data, pos.offset)
                if not frames:
                    with self._lock:
                        self._read = Position(pos.segment, size)
                    continue
            for start, stop, key, body in frames[: max_records - len(out)]:
                out.append(
                    Record(
                        Position(pos.segment, start),
                        Position(pos.segment, stop),
                        key,
                        body,
                        self.spool_id,
                    )
                )
            with self._lock:
                self._read = out[-1].end
            if sum(len(r.body) for r in out) >= max_bytes:
                break
        return out

    def rewind(self) -> None:
        """Forget what was read but not confirmed (after a failed publish)."""
        with self._lock:
            self._read = self._cursor

    def commit(self, upto: Position, count: int) -> None:
        """The broker confirmed every frame before ``upto`` (``count`` of them since the cursor)."""
        tmp = os.path.join(self.path, "cursor.tmp")
        with open(tmp, "w", encoding="ascii") as fh:
            fh.write(f"{upto.segment} {upto.offset}\n")
            fh.flush()
            os.fsync(fh.fileno())
        chown_new(tmp, self.owner)
        os.replace(tmp, os.path.join(self.path, "cursor"))
        with self._lock:
            old = self._cursor
            self._cursor = upto
            self._pending -= count
            if self._read < upto:
                self._read = upto
        self.committed += count
        for index in range(old.segment, upto.segment):
            try:
                os.unlink(self._seg_path(index))
            except FileNotFoundError:
                pass
        if self._read_fd is not None and self._read_fd[0] < upto.segment:
            os.close(self._read_fd[1])
            self._read_fd = None
        _fsync_dir(self.path)  # the rename (and any unlink) survives a crash
