#!/usr/bin/env bash
# The shipped systemd unit: `systemd-analyze verify` accepts it (with the
# ExecStart binary pointed at this build), it keeps the settings operators
# rely on, and `systemd-analyze security` scores it no worse than 1.6.
#   unit_test.sh UNIT DAEMON
set -euo pipefail
unit=$1
daemon=$2
fail() { echo "unit_test: $*" >&2; exit 1; }
command -v systemd-analyze >/dev/null || fail "systemd-analyze not found (Debian: systemd)"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
copy=$work/swarmkeeper.service
sed "s#/usr/bin/swarmkeeper#$daemon#" "$unit" > "$copy"
grep -q "$daemon" "$copy" || fail "ExecStart does not name /usr/bin/swarmkeeper"
out=$(systemd-analyze verify --man=no "$copy" 2>&1) || { echo "$out"; fail "systemd-analyze verify failed"; }
# verify prints warnings without failing for some problems: none allowed.
if [[ -n $out ]]; then echo "$out"; fail "systemd-analyze verify printed warnings"; fi

for line in 'Type=notify' 'ExecReload=/bin/kill -HUP $MAINPID' 'StateDirectory=swarmkeeper' \
            'UMask=0077' 'ProtectProc=invisible' 'ProcSubset=pid' 'DynamicUser=yes' \
            'LoadCredential=admin-token:/etc/swarmkeeper/admin.token' \
            'LoadCredential=cluster-secret:/etc/swarmkeeper/cluster.secret'; do
  grep -qxF "$line" "$unit" || fail "missing: $line"
done
grep -q -- '--admin.token-file=%d/admin-token' "$unit" || fail "the token is not read from the credentials directory"
grep -q -- '--cluster.secret-file=%d/cluster-secret' "$unit" || fail "the secret is not read from the credentials directory"

score=$(systemd-analyze security --offline=true "$copy" 2>&1 | sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p')
[[ -n $score ]] || fail "no exposure score from systemd-analyze security"
echo "systemd-analyze security: exposure $score"
awk -v s="$score" 'BEGIN { exit !(s <= 1.6) }' || fail "exposure $score is worse than 1.6"
echo "unit_test: ok"
