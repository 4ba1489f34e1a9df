"""All-or-nothing file writes: a full disk or a crash never leaves a half-written file, an
existing file is replaced only by a complete new one, keeping its permissions, and a read-only one
(a file under version control not checked out) is refused."""

from __future__ import annotations

import os
import stat
from contextlib import contextmanager
from pathlib import Path

from .errors import NavMeshError


@contextmanager
def replacing(path):
    """Yield a temporary path beside `path` to write to; when the block ends without error the
    temporary file (synced to disk) replaces `path` in one rename, otherwise it is removed and
    `path` is left as it was. An OSError becomes a NavMeshError naming `path`."""
    path = Path(path)
    check_writable(path)
    # Same folder (so the rename is atomic) and same suffix (writers that add one find it there).
    temp = path.with_name(f".{path.stem}.{os.getpid()}.partial{path.suffix}")
    try:
        yield temp
        move_into_place(temp, path)
    except OSError as exc:
        raise NavMeshError(f"cannot write {str(path)!r}: {exc.strerror or exc}") from None
    finally:
        try:
            temp.unlink(missing_ok=True)
        except OSError:
            pass  # a read-only folder, where nothing was written either


def check_writable(path) -> None:
    """NavMeshError when `path` is an existing file that is read-only: not writable by this user, or
    with no write permission for anyone (which the renaming writers here would otherwise ignore)."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return  # no file there yet: the write itself says what is wrong with the folder
    if stat.S_ISREG(mode) and (not os.access(path, os.W_OK) or not mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH)):
        raise NavMeshError(f"cannot write {str(path)!r}: the file is read-only (make it writable first)")


def move_into_place(temp, path) -> None:
    """A complete file written at temp (synced to disk) replaces path in one rename (same folder),
    with the permissions path had."""
    with open(temp, "rb+") as fh:
        os.fsync(fh.fileno())
    try:
        os.chmod(temp, stat.S_IMODE(os.stat(path).st_mode))
    except FileNotFoundError:
        pass  # a new file: the permissions it was created with
    os.replace(temp, path)


def write_text(path, text: str) -> None:
    """Write UTF-8 text to path, all or nothing."""
    with replacing(path) as temp:
        temp.write_text(text, encoding="utf-8")
