"""YARN access control lists, read exactly as Hadoop's AccessControlList (3.4) reads them.

The text is split at its first space: users before it, groups after it ("user1,user2 group1,group2";
" analysts" is the group analysts and no users). Each side is a list separated by commas or
newlines, trimmed; empty entries are dropped. Either side being "*" (after trimming) lets everyone
in. Every string is a valid ACL: "a b c" is the user a and the group "b c", as in Hadoop.

The shim hands the same text to Hadoop's own class, so the core and the ResourceManager agree on
who may use a queue; tests check both against one table of cases (acl-vectors.json).
"""
from __future__ import annotations

import re
from collections.abc import Iterable

# java.lang.String.trim() removes every char up to U+0020, not Unicode whitespace.
_JAVA_TRIMMED = "".join(map(chr, range(0x21)))
# StringUtils.getTrimmedStrings splits on "\s*[,\n]\s*"; Java's \s is these six characters only.
_LIST_SEPARATOR = re.compile(r"[ \t\n\x0b\f\r]*[,\n][ \t\n\x0b\f\r]*")


class Acl:
    """One queue-level ACL; `allows(user, groups)` is AccessControlList.isUserInList."""

    __slots__ = ("text", "all", "users", "groups")

    def __init__(self, text: str) -> None:
        self.text = text
        parts = text.split(" ", 1)
        self.all = any(p.strip(_JAVA_TRIMMED) == "*" for p in parts)
        self.users: frozenset[str] = frozenset() if self.all else _names(parts[0])
        self.groups: frozenset[str] = frozenset() if self.all or len(parts) < 2 else _names(parts[1])

    def allows(self, user: str, groups: Iterable[str]) -> bool:
        if self.all or user in self.users:
            return True
        return bool(self.groups) and any(g in self.groups for g in groups)

    def is_empty(self) -> bool:
        return not (self.all or self.users or self.groups)

    def describe(self) -> str:
        """What the text means, as check-config shows it."""
        if self.all:
            return "everyone"
        if self.is_empty():
            return "nobody"
        parts = []
        if self.users:
            parts.append("users " + ", ".join(sorted(map(repr, self.users))))
        if self.groups:
            parts.append("groups " + ", ".join(sorted(map(repr, self.groups))))
        return "; ".join(parts)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Acl) and (self.all, self.users, self.groups) == (other.all, other.users, other.groups)

    def __hash__(self) -> int:
        return hash((self.all, self.users, self.groups))

    def __repr__(self) -> str:
        return f"Acl({self.text!r})"


def _names(text: str) -> frozenset[str]:
    """StringUtils.getTrimmedStringCollection: trimmed, split at commas and newlines, no empties."""
    trimmed = text.strip(_JAVA_TRIMMED)
    return frozenset(n for n in _LIST_SEPARATOR.split(trimmed) if n) if trimmed else frozenset()


NOBODY = Acl("")
EVERYONE = Acl("*")
