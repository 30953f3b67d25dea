"""Backup rotation of a SQLite workflow database on replay or recovery (PM-652/689).

Rotation replaces the non-SQLite purge: the old file moves aside to
``<db>.NNN`` (first free number) and a fresh database is started with the old
file's permissions.  Only the newest backup keeps its content; the one before it
is truncated to 0 bytes so that repeated replays do not fill the disk (GH-2134).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import structlog

log = structlog.get_logger(__name__)

_SIDECARS = ("-journal", "-wal", "-shm")


def backup_name(db_path: Path, number: int) -> Path:
    return db_path.with_name(f"{db_path.name}.{number:03d}")


def _same_owner(sidecar: Path, database: Path) -> None:
    """As root: a moved journal belongs to whoever owns its database (SQLite gives a journal
    its database's owner, except one made while the file was not there or not yet handed
    over, which a crashed daemon can leave behind: seen once in the root service's test)."""
    if os.geteuid() != 0:
        return
    try:
        db = database.stat()
        side = os.lstat(sidecar)
        if stat.S_ISREG(side.st_mode) and (side.st_uid, side.st_gid) != (db.st_uid, db.st_gid):
            os.lchown(sidecar, db.st_uid, db.st_gid)
    except OSError as exc:
        log.warning(
            "cannot give a moved journal its database's owner", path=str(sidecar), error=str(exc)
        )


def rotate_sqlite_file(db_path: str | os.PathLike[str]) -> Path | None:
    """Move an existing DB file to its first free ``.NNN`` name; return that name.

    Afterwards an empty file with the old permission bits is left at
    ``db_path`` (an empty file is a valid, empty SQLite database), so the new
    database keeps the old mode whatever the umask.  Nothing happens (and None
    is returned) when the file does not exist.
    """
    path = Path(db_path)
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        return None
    number = 0
    while backup_name(path, number).exists():
        number += 1
    target = backup_name(path, number)
    os.replace(path, target)
    for suffix in _SIDECARS:
        # a hot journal left beside the new empty file would be replayed into it
        sidecar = path.with_name(path.name + suffix)
        if sidecar.exists():
            moved = target.with_name(target.name + suffix)
            os.replace(sidecar, moved)
            _same_owner(moved, target)
    log.info("rotated database", path=str(path), backup=str(target))
    if number > 0:
        previous = backup_name(path, number - 1)
        try:
            with open(previous, "r+b") as fh:
                fh.truncate(0)
        except OSError as exc:
            log.warning("cannot truncate previous backup", path=str(previous), error=str(exc))
    fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, mode)
    os.close(fd)
    os.chmod(path, mode)
    return target
