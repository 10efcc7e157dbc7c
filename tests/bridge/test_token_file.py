"""Token files are used only when nobody but their owner, the user running yarn-drf, can read or change them."""
from __future__ import annotations

import os

import pytest

from yarn_bridge.token_file import TokenFileError, read_token


def secret(path, text="  the-token\n", mode=0o600):
    path.touch(mode=0o600)
    path.write_text(text)
    path.chmod(mode)
    return path


def test_a_private_file_gives_its_token_stripped(tmp_path):
    assert read_token(secret(tmp_path / "t"), "--token-file") == "the-token"
    assert read_token(secret(tmp_path / "r", mode=0o400), "--token-file") == "the-token"


@pytest.mark.parametrize("mode", [0o604, 0o660, 0o640, 0o606, 0o700, 0o777])
def test_a_file_other_users_can_read_or_write_is_refused_with_the_fix(tmp_path, mode):
    path = secret(tmp_path / "t", mode=mode)
    expected = f"--token-file {path} is readable or writable by other users (mode {mode:04o})"
    if not mode & 0o077:  # 0700: private, but executable; still only the owner
        assert read_token(path, "--token-file") == "the-token"
        return
    with pytest.raises(TokenFileError, match="chmod 600") as err:
        read_token(path, "--token-file")
    assert str(err.value).startswith(expected)


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user needs root")
def test_a_file_owned_by_another_user_is_refused(tmp_path):
    path = secret(tmp_path / "t")
    os.chown(path, 65534, 65534)
    with pytest.raises(TokenFileError, match=r"belongs to \S+, not to root who runs this.*chown root "):
        read_token(path, "--token-file")


def test_empty_missing_and_odd_files_are_refused(tmp_path):
    with pytest.raises(TokenFileError, match="is empty"):
        read_token(secret(tmp_path / "e", text="\n"), "--token-file")
    with pytest.raises(TokenFileError, match="cannot read --token-file .*No such file"):
        read_token(tmp_path / "missing", "--token-file")
    (tmp_path / "d").mkdir(mode=0o700)
    with pytest.raises(TokenFileError, match="is not a regular file"):
        read_token(tmp_path / "d", "--token-file")
