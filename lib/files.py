"""All-or-nothing file writes: a full disk or a crash never leaves a half-written file, and an
existing file is replaced only by a complete new one."""

from __future__ import annotations

import os
from contextlib import contextmanager
from pathlib import Path

from .errors import NavMeshError


@contextmanager
def replacing(path):
    """Yield a temporary path beside `path` to write to; when the block ends without error the
    temporary file (synced to disk) replaces `path` in one rename, otherwise it is removed and
    `path` is left as it was. An OSError becomes a NavMeshError naming `path`."""
    path = Path(path)
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


def move_into_place(temp, path) -> None:
    """A complete file written at temp (synced to disk) replaces path in one rename (same folder)."""
    with open(temp, "rb+") as fh:
        os.fsync(fh.fileno())
    os.replace(temp, path)


def write_text(path, text: str) -> None:
    """Write UTF-8 text to path, all or nothing."""
    with replacing(path) as temp:
        temp.write_text(text, encoding="utf-8")
