#!/usr/bin/env bash
# Makes throwaway certificates for trying Stoker with mutual TLS (and for its tests):
#
#   scripts/dev-certs.sh DIR [--tenants=a,b]
#                                     a new CA and every certificate
#   scripts/dev-certs.sh DIR ROLE     re-issues ROLE's certificate and key from the CA already in
#                                     DIR (rotation: the new files replace the old by rename)
#
# DIR/ca.pem, ca.key                 the CA every Stoker process trusts (--tls-ca)
# DIR/{coordinator,worker,trainer,operator,scaler}.pem/.key
#                                    one certificate per role, signed by the CA. The role is the
#                                    SAN URI spiffe://stoker/role/<role> (docs/security.md);
#                                    every certificate also names localhost and 127.0.0.1, and
#                                    the DNS names in $STOKER_CERT_DNS (space separated), so a
#                                    server certificate also passes a hostname check.
# DIR/trainer-<t>.pem/.key, trainer-<t>.token
#                                    with --tenants: a trainer of each tenant <t> (SAN URI
#                                    spiffe://stoker/tenant/<t>/role/trainer), and its token
#                                    ("trainer@<t>:..."), also listed in `tokens`. The role-only
#                                    certificates above are the default tenant's. A tenant name
#                                    is a DNS label ([a-z0-9-], at most 63), not "default".
# DIR/other-ca.pem, other-ca.key, other-trainer.pem/.key
#                                    a second, untrusted CA and a trainer certificate it signed:
#                                    for negative tests.
# DIR/tokens, DIR/{coordinator,worker,trainer,operator,scaler}.token
#                                    bearer tokens (docs/security.md): `tokens` lists one
#                                    random token per role (a server's --accept-bearer-tokens-file),
#                                    <role>.token holds that role's line alone (a client's
#                                    --bearer-token-file).
#
# Keys are EC P-256, valid for 30 days. Not for production: the CA key lies next to the rest.
# Quiet on success. Existing files in DIR are overwritten.
set -euo pipefail
usage() {
  echo "usage: $0 DIR [--tenants=a,b] | $0 DIR coordinator|worker|trainer|operator|scaler" >&2
  exit 2
}
[ $# -ge 1 ] && [ $# -le 2 ] || usage
command -v openssl >/dev/null || { echo "$0: openssl is not installed" >&2; exit 1; }
dir=$1
renew=
tenants=()
case ${2:-} in
  --tenants=*)
    IFS=, read -r -a tenants <<<"${2#--tenants=}"
    for tenant in "${tenants[@]}"; do
      if ! [[ $tenant =~ ^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$ ]] || [ "$tenant" = default ]; then
        echo "$0: --tenants: '$tenant' is not a tenant name ([a-z0-9-], 1 to 63, not 'default')" >&2
        exit 2
      fi
    done ;;
  -*) usage ;;
  *) renew=${2:-} ;;
esac
mkdir -p "$dir"
cd "$dir"
umask 077

make_ca() {  # NAME SUBJECT
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 30 \
    -keyout "$1.key" -out "$1.pem" -subj "$2" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
    2>/dev/null
}

make_leaf() {  # NAME ROLE CA [TENANT]
  local name=$1 role=$2 ca=$3 uri="spiffe://stoker/role/$2"
  [ -z "${4:-}" ] || uri="spiffe://stoker/tenant/$4/role/$2"
  local san="URI:$uri,DNS:localhost,IP:127.0.0.1"
  for dns in ${STOKER_CERT_DNS:-}; do san="$san,DNS:$dns"; done
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$name.key" \
    -out "$name.csr" -subj "/O=stoker/OU=$role/CN=stoker-$role" 2>/dev/null
  printf '%s\n' "subjectAltName=$san" "basicConstraints=critical,CA:FALSE" \
    "keyUsage=critical,digitalSignature,keyEncipherment" \
    "extendedKeyUsage=serverAuth,clientAuth" >"$name.ext"
  openssl x509 -req -in "$name.csr" -CA "$ca.pem" -CAkey "$ca.key" -CAcreateserial -days 30 \
    -extfile "$name.ext" -out "$name.pem" 2>/dev/null
  rm -f "$name.csr" "$name.ext"
}

if [ -n "$renew" ]; then
  case $renew in coordinator | worker | trainer | operator | scaler) ;; *)
    echo "$0: unknown role $renew" >&2; exit 2 ;;
  esac
  [ -f ca.key ] || { echo "$0: no CA in $dir (run $0 $dir first)" >&2; exit 1; }
  make_leaf "new-$renew" "$renew" ca
  chmod 644 "new-$renew.pem"
  mv -f "new-$renew.key" "$renew.key"
  mv -f "new-$renew.pem" "$renew.pem"
  rm -f ./*.srl
  exit 0
fi

make_ca ca "/O=stoker/CN=stoker dev CA"
for role in coordinator worker trainer operator scaler; do make_leaf "$role" "$role" ca; done
for tenant in "${tenants[@]}"; do make_leaf "trainer-$tenant" trainer ca "$tenant"; done
make_ca other-ca "/O=elsewhere/CN=another CA"
make_leaf other-trainer trainer other-ca
rm -f ./*.srl
: >tokens
for role in coordinator worker trainer operator scaler; do
  echo "$role:$(openssl rand -hex 24)" >"$role.token"
  cat "$role.token" >>tokens
done
for tenant in "${tenants[@]}"; do
  echo "trainer@$tenant:$(openssl rand -hex 24)" >"trainer-$tenant.token"
  cat "trainer-$tenant.token" >>tokens
done
chmod 644 ./*.pem
