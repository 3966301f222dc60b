#!/usr/bin/env bash
# Fails when a layer includes something it may not (docs/ARCHITECTURE.md).
#
#   protocol/            pure C++17
#   tracker/             protocol/ only: no CAF, Boost or spdlog
#   runtime/             protocol/, tracker/, CAF, spdlog
#   cluster/             runtime/ and below
#   net/ (gateway)       runtime/ and below, Boost
#   net/http, net/udp    net/ and below
#   net/probe            runtime/ and below, Boost
#   admin/               everything but app/
#   a transport's internals (net/http/http_session.hpp, http_lane.hpp;
#   net/udp/udp_worker.hpp, udp_shared.hpp) are included only in its folder
set -u
self=$(readlink -f "$0")
root=${1:-$(dirname "$0")/..}
cd "$root" || exit 2
bad=0
check() { # folder, forbidden-include regex, reason [, find -maxdepth]
  local hits
  if [[ $# -ge 4 ]]; then
    hits=$(find "$1" -maxdepth "$4" \( -name '*.hpp' -o -name '*.cpp' \) -print0 |
      xargs -0 grep -nE "^[[:space:]]*#[[:space:]]*include[[:space:]]*[<\"]($2)" /dev/null || true)
  else
    hits=$(grep -rnE "^[[:space:]]*#[[:space:]]*include[[:space:]]*[<\"]($2)" "$1" --include='*.hpp' --include='*.cpp' || true)
  fi
  if [[ -n "$hits" ]]; then
    echo "layering violation in $1/ ($3):"; echo "$hits"; bad=1
  fi
}
upper='tracker/|runtime/|cluster/|net/|admin/|app/'
check protocol "caf/|boost/|spdlog/|asio|$upper" 'protocol must be pure C++17'
check tracker 'caf/|boost/|spdlog/|fmt/|asio|runtime/|cluster/|net/|admin/|app/' 'tracker may use protocol only: no CAF, Boost or spdlog'
check runtime 'boost/|cluster/|net/|admin/|app/' 'runtime may use tracker, protocol, CAF and spdlog'
check cluster 'net/|admin/|app/' 'cluster may use runtime and below'
check net 'cluster/|admin/|app/|net/http/|net/udp/|net/probe/' 'the gateway may use runtime and below' 1
check net/http 'cluster/|admin/|app/|net/udp/|net/probe/' 'the HTTP transport may use net/ and below'
check net/udp 'cluster/|admin/|app/|net/http/|net/probe/' 'the UDP transport may use net/ and below'
check net/probe 'cluster/|admin/|app/|net/http/|net/udp/|net/gateway' 'the prober may use runtime and below'
check admin 'app/' 'admin may not include app'
internals='net/http/http_(session|lane)\.hpp|net/udp/udp_(worker|shared)\.hpp'
for dir in protocol tracker runtime cluster net/probe admin app; do
  check "$dir" "$internals" "a transport's internals stay in its folder"
done
check net "$internals" "a transport's internals stay in its folder" 1
# A check that cannot fail is worthless: prove the greps see real includes.
grep -rqE '#include "protocol/' tracker || { echo "layering: sanity check found no includes"; exit 2; }
grep -rqE '#include "tracker/' runtime || { echo "layering: sanity check found no includes"; exit 2; }
if ((bad)); then exit 1; fi
# Self-test: the same checks on a copy of the tree with one forbidden
# include planted in it must fail (SK_LAYERING_SELF_TEST marks the inner run).
if [[ -z "${SK_LAYERING_SELF_TEST:-}" ]]; then
  tmp=$(mktemp -d) || exit 2
  trap 'rm -rf "$tmp"' EXIT
  for probe in 'tracker/layering_probe.hpp|#include <caf/all.hpp>' \
               'runtime/layering_probe.hpp|#include "cluster/view.hpp"' \
               'admin/layering_probe.hpp|#include "net/udp/udp_worker.hpp"'; do
    rm -rf "$tmp/tree" && mkdir "$tmp/tree" || exit 2
    cp -r protocol tracker runtime cluster net admin app "$tmp/tree/" || exit 2
    printf '#pragma once\n%s\n' "${probe#*|}" > "$tmp/tree/${probe%%|*}"
    SK_LAYERING_SELF_TEST=1 bash "$self" "$tmp/tree" > "$tmp/out" 2>&1
    rc=$?
    if [[ $rc -ne 1 ]] || ! grep -q "layering_probe.hpp" "$tmp/out"; then
      echo "layering: self-test failed: '${probe#*|}' in ${probe%%|*} was not reported (exit $rc)"
      cat "$tmp/out"
      exit 2
    fi
  done
fi
echo "layering: ok"
