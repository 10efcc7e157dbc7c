"""Secret files (the bridge token, the status server's token): used only when nobody else can read
or change them, as ssh treats a private key. The Java shim applies the same rule (TokenFile.java)."""
from __future__ import annotations

import os
import pwd
import stat


class TokenFileError(Exception):
    """The file cannot be used as a token; the message says why and how to fix it."""


def read_token(path: str | os.PathLike, option: str) -> str:
    """The file's content, stripped. `option` names where the path came from, for the message."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # a FIFO must not block us: it is refused below
    except OSError as exc:
        raise TokenFileError(f"cannot read {option} {path}: {exc.strerror}") from None
    try:
        problem = _exposure(os.fstat(fd), path)  # the file opened, not whatever the path names a moment later
        if problem:
            raise TokenFileError(f"{option} {path} {problem}")
        token = os.read(fd, 1 << 16).decode("utf-8", "replace").strip()
    finally:
        os.close(fd)
    if not token:
        raise TokenFileError(f"{option} {path} is empty")
    return token


def _exposure(st: os.stat_result, path: str | os.PathLike) -> str | None:
    if not stat.S_ISREG(st.st_mode):
        return "is not a regular file"
    if st.st_mode & 0o077:
        return (f"is readable or writable by other users (mode {stat.S_IMODE(st.st_mode):04o}), so they could "
                f"learn or replace the token; fix it with `chmod 600 {path}`")
    uid = os.geteuid()
    if st.st_uid != uid:
        return (f"belongs to {_user(st.st_uid)}, not to {_user(uid)} who runs this, so its owner could change the "
                f"token; fix it with `chown {_user(uid)} {path}`")
    return None


def _user(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"
