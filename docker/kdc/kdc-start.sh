#!/usr/bin/env bash
# Starts the secure cluster's KDC: MIT krb5kdc serving a realm of its own on 127.0.0.1:KDC_PORT (TCP
# and UDP), with
#   - a principal and a keytab per service in KDC_SERVICES ("rm/localhost:1000 nm/localhost:0"):
#     /keytabs/<first component>.keytab, owned by that uid and readable by it alone;
#   - a principal per user in KDC_USERS ("alice:PASSWORD:1001 bob:PASSWORD:1002"), who get tickets
#     with kinit and the password, or from their keytab /keytabs/<user>.keytab (same key, owned by
#     the uid given, readable by it alone) for scripts.
# A fresh database each start (the realm's master key is random and never leaves the container).
# "kdc: ready" on stdout means every principal and keytab exists and the KDC is about to serve.
#   environment: KRB5_REALM, KDC_PORT, KDC_SERVICES, KDC_USERS
set -euo pipefail
realm="${KRB5_REALM:?KRB5_REALM is not set}"
port="${KDC_PORT:?KDC_PORT is not set}"
mkdir -p /etc/krb5kdc /var/lib/krb5kdc /keytabs

cat > /etc/krb5.conf <<CONF
[libdefaults]
  default_realm = $realm
  dns_lookup_kdc = false
  dns_lookup_realm = false
[realms]
  $realm = {
    kdc = 127.0.0.1:$port
  }
CONF
cat > /etc/krb5kdc/kdc.conf <<CONF
[kdcdefaults]
  kdc_listen = 127.0.0.1:$port
  kdc_tcp_listen = 127.0.0.1:$port
[realms]
  $realm = {
    database_name = /var/lib/krb5kdc/principal
    key_stash_file = /var/lib/krb5kdc/stash
    acl_file = /etc/krb5kdc/kadm5.acl
    max_life = 1d
    max_renewable_life = 7d
    supported_enctypes = aes256-cts-hmac-sha1-96:normal aes128-cts-hmac-sha1-96:normal
  }
[logging]
  kdc = STDERR
CONF
: > /etc/krb5kdc/kadm5.acl

kadmin() { kadmin.local -r "$realm" -q "$1" >/dev/null; }
rm -f /var/lib/krb5kdc/principal*
kdb5_util create -s -r "$realm" -P "$(head -c 32 /dev/urandom | base64)" >/dev/null
for entry in ${KDC_SERVICES:-}; do
  principal="${entry%:*}" uid="${entry##*:}"
  keytab="/keytabs/${principal%%/*}.keytab"
  kadmin "addprinc -randkey $principal"
  rm -f "$keytab"
  kadmin "ktadd -k $keytab $principal"
  chown "$uid" "$keytab"
  chmod 400 "$keytab"
done
for entry in ${KDC_USERS:-}; do
  user="${entry%%:*}" rest="${entry#*:}"
  password="${rest%:*}" uid="${rest##*:}"
  kadmin "addprinc -pw $password $user"
  keytab="/keytabs/$user.keytab"
  rm -f "$keytab"
  kadmin "ktadd -norandkey -k $keytab $user"  # -norandkey: the password stays valid
  chown "$uid" "$keytab"
  chmod 400 "$keytab"
done
echo "kdc: ready: realm $realm on 127.0.0.1:$port"
exec krb5kdc -n -r "$realm"
