#!/usr/bin/env bash
# Installs the Debian bookworm packages swarmkeeper needs to build, test and
# benchmark. Idempotent: installs only what is missing, so it is cheap to run
# before every build. Needs root (or sudo) only when something is missing.
#
#   deploy/install-deps.sh           build + test dependencies
#   deploy/install-deps.sh --bench   also opentracker and wrk for bench/
#
# The /metrics test needs `promtool`, which Debian ships only inside the
# `prometheus` server package; installing that would also start a Prometheus
# service on :9090 on a systemd machine. So the package is downloaded, not
# installed, and only promtool is unpacked into .tools/ (gitignored).
set -euo pipefail

packages=(
  build-essential cmake ccache pkg-config
  libcaf-dev libboost-dev libspdlog-dev libfmt-dev
  googletest libgtest-dev libgmock-dev libbenchmark-dev
  python3-libtorrent libtorrent-rasterbar-dev
  curl
  nlohmann-json3-dev
  # swarmctl's shell: line editing and history (BSD libedit, not GPL readline)
  libedit-dev
  # tests/console: the web console driven in headless Chromium by Selenium
  chromium chromium-driver python3-selenium
  # the cluster: TLS identity derived with libcrypto, libcaf_openssl's
  # libssl; deploy/cluster-netns.sh and its test need ip (network namespaces)
  libssl-dev iproute2
  # tests/e2e/client_matrix.py: more real BitTorrent clients next to libtorrent
  # (the test runs its own transmission-daemon on free ports, not the service)
  aria2 transmission-daemon transmission-cli
  # tests/fuzz: libFuzzer targets built with clang under ASan + UBSan
  clang-14 libclang-rt-14-dev
)
if [[ "${1:-}" == "--bench" ]]; then
  packages+=(opentracker wrk)
fi

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

sudo=""
need_root() {
  if [[ $(id -u) -ne 0 && -z $sudo ]]; then
    if command -v sudo >/dev/null; then sudo="sudo"; else
      echo "install-deps: need root to install: $*" >&2
      exit 1
    fi
  fi
}

# promtool from the prometheus .deb, without installing the package.
fetch_promtool() {
  local tools="$root/.tools"
  [[ -x $tools/promtool ]] && return 0
  if command -v promtool >/dev/null; then
    mkdir -p "$tools" && ln -sf "$(command -v promtool)" "$tools/promtool"
    return 0
  fi
  local tmp
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' RETURN
  echo "install-deps: fetching promtool (Debian package prometheus, unpacked into .tools/)" >&2
  if ! (cd "$tmp" && apt-get download -qq prometheus >/dev/null 2>&1); then
    need_root apt-get update
    $sudo apt-get update -qq
    (cd "$tmp" && apt-get download -qq prometheus >/dev/null 2>&1) || {
      echo "install-deps: cannot download the prometheus package for promtool" >&2
      exit 1
    }
  fi
  dpkg-deb -x "$tmp"/prometheus_*.deb "$tmp/x"
  mkdir -p "$tools"
  install -m 0755 "$tmp/x/usr/bin/promtool" "$tools/promtool"
}

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

export DEBIAN_FRONTEND=noninteractive
if ((${#missing[@]} > 0)); then
  echo "install-deps: installing ${missing[*]}" >&2
  need_root "${missing[*]}"
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi
fetch_promtool
