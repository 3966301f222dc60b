#!/usr/bin/env bash
# A three-node swarmkeeper cluster in network namespaces, so the nodes talk
# across real interfaces (veth pairs into one bridge), one address each.
#
#   deploy/cluster-netns.sh up            create the namespaces and links
#   deploy/cluster-netns.sh down          remove them
#   deploy/cluster-netns.sh test DAEMON   up, run tests/cluster/cluster_test.py
#                                         across the namespaces, down
#
# Layout (NAME defaults to "skc"; set SK_NETNS_NAME to run several at once):
#
#   netns NAME-hub:  bridge NAME-br  10.77.0.254/24   (the test driver runs here)
#        ├── veth ── netns NAME-1  10.77.0.1   node a
#        ├── veth ── netns NAME-2  10.77.0.2   node b
#        ├── veth ── netns NAME-3  10.77.0.3   node c
#        └── veth ── netns NAME-4  10.77.0.4   a process with the WRONG secret
#
# Nothing touches the root namespace's interfaces. Needs root (ip netns).
# Exit 77 (CTest: skipped) when not run as root.
set -euo pipefail

name=${SK_NETNS_NAME:-skc}
hub="$name-hub"
br="$name-br"
nodes=4
root=$(cd "$(dirname "$0")/.." && pwd)

need_root() {
  if [[ $(id -u) -ne 0 ]]; then
    echo "cluster-netns: needs root (network namespaces); skipped" >&2
    exit 77
  fi
}

down() {
  for i in $(seq 1 $nodes); do ip netns del "$name-$i" 2>/dev/null || true; done
  ip netns del "$hub" 2>/dev/null || true
}

up() {
  down
  ip netns add "$hub"
  ip -n "$hub" link set lo up
  ip -n "$hub" link add "$br" type bridge
  ip -n "$hub" addr add 10.77.0.254/24 dev "$br"
  ip -n "$hub" link set "$br" up
  for i in $(seq 1 $nodes); do
    local ns="$name-$i"
    ip netns add "$ns"
    ip -n "$ns" link set lo up
    # Both ends are created in the node's namespace, then one end moves to
    # the hub and joins the bridge.
    ip -n "$ns" link add eth0 type veth peer name "p$i"
    ip -n "$ns" link set "p$i" netns "$hub"
    ip -n "$ns" addr add "10.77.0.$i/24" dev eth0
    ip -n "$ns" link set eth0 up
    ip -n "$hub" link set "p$i" master "$br"
    ip -n "$hub" link set "p$i" up
  done
  echo "cluster-netns: $nodes namespaces up (10.77.0.1-$nodes, hub 10.77.0.254)"
}

case "${1:-}" in
  up) need_root; up ;;
  down) need_root; down ;;
  test)
    need_root
    daemon=$(readlink -f "${2:?usage: $0 test DAEMON}")
    trap down EXIT
    up
    hosts=$(seq -s, -f "10.77.0.%g" 1 $nodes)
    wraps=()
    for i in $(seq 1 $nodes); do wraps+=(--wrap $((i - 1)) "ip netns exec $name-$i"); done
    ip netns exec "$hub" python3 "$root/tests/cluster/cluster_test.py" --daemon "$daemon" \
      --hosts "$hosts" --fixed-ports "${wraps[@]}"
    ;;
  *)
    echo "usage: $0 up|down|test DAEMON" >&2
    exit 2
    ;;
esac
