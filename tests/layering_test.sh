#!/usr/bin/env bash
# Fails when a layer includes something it may not (docs/ARCHITECTURE.md):
# protocol/ is pure C++17; actors/ may not reach net/ or app/; net/ not app/.
set -u
root=${1:-$(dirname "$0")/..}
cd "$root" || exit 2
bad=0
check() { # folder, forbidden-include regex, reason
  local hits
  hits=$(grep -rnE "^[[:space:]]*#[[:space:]]*include[[:space:]]*[<\"]($2)" "$1" --include='*.hpp' --include='*.cpp' || true)
  if [[ -n "$hits" ]]; then
    echo "layering violation in $1/ ($3):"; echo "$hits"; bad=1
  fi
}
check protocol 'caf/|boost/|spdlog/|actors/|net/|app/' 'protocol must be pure C++17'
check actors 'boost/|net/|app/' 'actors may use protocol and CAF only'
check net 'app/' 'net may not include app'
# A check that cannot fail is worthless: prove the grep sees real includes.
grep -rqE '#include "protocol/' actors || { echo "layering: sanity check found no includes"; exit 2; }
if ((bad)); then exit 1; fi
echo "layering: ok"
