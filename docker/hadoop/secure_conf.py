"""The secure variant of a container's configuration (docker/DOCKER.md, "The Kerberos-secured
cluster"), added by render_conf.py when KRB5_REALM is set:

- Kerberos: `hadoop.security.authentication=kerberos`, the ResourceManager and NodeManagers log in
  from their keytabs (mounted at KEYTAB_DIR) as rm/localhost and nm/localhost, and
  /etc/krb5.conf (a link to the configuration directory's krb5.conf in the image) names the realm's
  KDC on 127.0.0.1:KDC_PORT. Principals name the host "localhost", not _HOST: every daemon binds
  127.0.0.1, whose canonical name, which a client's RPC expects in the server principal, is
  "localhost".
- Service authorization (`hadoop.security.authorization=true`): hadoop-policy.xml lets only the
  NodeManagers' principal (short name nm) use the resource tracker; every other protocol stays
  open to any authenticated user, as Hadoop's default policy has it.
- The yarn-drf status server's token (YARN_DRF_STATUS_TOKEN_FILE): `yarn-drf serve` gets
  `--status-token-file`, so the one request that changes state (POST /v1/reload) needs it; the file
  is created, private to the RM's user, with a random token when missing.
"""
from __future__ import annotations

import os
import secrets
from pathlib import Path

KEYTAB_DIR = "/etc/security/keytabs"


def secure_files(env: dict[str, str]) -> dict[str, dict[str, str]]:
    """The properties the secure variant adds, by file name; {} when KRB5_REALM is not set."""
    realm = env.get("KRB5_REALM", "").strip()
    if not realm:
        return {}
    keytabs = env.get("KEYTAB_DIR", KEYTAB_DIR)
    return {
        "core-site.xml": {
            "hadoop.security.authentication": "kerberos",
            "hadoop.security.authorization": "true",
        },
        "yarn-site.xml": {
            "yarn.resourcemanager.principal": f"rm/localhost@{realm}",
            "yarn.resourcemanager.keytab": f"{keytabs}/rm.keytab",
            "yarn.nodemanager.principal": f"nm/localhost@{realm}",
            "yarn.nodemanager.keytab": f"{keytabs}/nm.keytab",
        },
        "hadoop-policy.xml": {
            "security.resourcetracker.protocol.acl": "nm",
        },
    }


def krb5_conf(env: dict[str, str]) -> str | None:
    """/etc/krb5.conf for the realm's KDC on loopback, or None when KRB5_REALM is not set.

    TCP only (udp_preference_limit 1) and no DNS: the KDC is named by address, and host names in
    service principals are taken as written."""
    realm = env.get("KRB5_REALM", "").strip()
    if not realm:
        return None
    port = env.get("KDC_PORT", "88").strip()
    return (
        "[libdefaults]\n"
        f"  default_realm = {realm}\n"
        "  dns_lookup_kdc = false\n"
        "  dns_lookup_realm = false\n"
        "  dns_canonicalize_hostname = false\n"
        "  rdns = false\n"
        "  udp_preference_limit = 1\n"
        "  forwardable = true\n"
        "  ticket_lifetime = 24h\n"
        "  renew_lifetime = 7d\n"
        "[realms]\n"
        f"  {realm} = {{\n"
        f"    kdc = 127.0.0.1:{port}\n"
        "  }\n"
    )


def status_token_option(env: dict[str, str]) -> str:
    """The `yarn-drf serve` option for the status server's token ("" without one), creating the
    token file, readable by its owner alone, when it does not exist yet."""
    path = env.get("YARN_DRF_STATUS_TOKEN_FILE", "").strip()
    if not path:
        return ""
    token = Path(path)
    if not token.exists():
        token.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(token, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as out:
            out.write(secrets.token_urlsafe(32) + "\n")
    return f" --status-token-file {path}"
