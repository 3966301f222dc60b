#!/bin/sh
# deploy/swarmkeeper.ini must be exactly what `swarmkeeper --print-sample-config`
# prints: the file is generated from the option schema, never edited by hand.
#   sample_config_test.sh SWARMKEEPER_BINARY SHIPPED_INI
set -eu
bin=$1
shipped=$2
generated=$(mktemp)
trap 'rm -f "$generated"' EXIT
"$bin" --print-sample-config >"$generated"
if ! cmp -s "$generated" "$shipped"; then
  echo "$shipped is not what the schema generates; regenerate it with" >&2
  echo "  $bin --print-sample-config > $shipped" >&2
  diff -u "$shipped" "$generated" >&2 || true
  exit 1
fi
