"""YARN access control lists: "user1,user2 group1,group2", "*" for everyone, " " for nobody."""
from __future__ import annotations

from collections.abc import Iterable


class AclSyntaxError(ValueError):
    pass


class Acl:
    """One queue-level ACL, parsed as YARN's AccessControlList does."""

    __slots__ = ("text", "all", "users", "groups")

    def __init__(self, text: str) -> None:
        self.text = text
        self.all = text.strip() == "*"
        self.users: frozenset[str] = frozenset()
        self.groups: frozenset[str] = frozenset()
        if self.all:
            return
        parts = text.strip().split(" ") if text.strip() else []
        if len(parts) > 2:
            raise AclSyntaxError(
                f"must be 'user1,user2 group1,group2' (one space between users and groups), got {text!r}"
            )
        if parts:
            self.users = frozenset(u for u in parts[0].split(",") if u)
        if len(parts) == 2:
            self.groups = frozenset(g for g in parts[1].split(",") if g)

    def allows(self, user: str, groups: Iterable[str]) -> bool:
        if self.all or user in self.users:
            return True
        return any(g in self.groups for g in groups)

    def is_empty(self) -> bool:
        return not (self.all or self.users or self.groups)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Acl) and (self.all, self.users, self.groups) == (other.all, other.users, other.groups)

    def __hash__(self) -> int:
        return hash((self.all, self.users, self.groups))

    def __repr__(self) -> str:
        return f"Acl({self.text!r})"


NOBODY = Acl("")
EVERYONE = Acl("*")
