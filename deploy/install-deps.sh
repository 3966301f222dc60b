#!/usr/bin/env bash
# Installs the Debian bookworm packages swarmkeeper needs. Idempotent:
# installs only what is missing, so it is cheap to run before every build.
# Needs root (or sudo) only when something is missing.
#
#   deploy/install-deps.sh --run     what building and running the tracker needs
#                                    (deploy/run.sh): compiler, CMake, the libraries
#   deploy/install-deps.sh           also everything the tests use (deploy/test.sh)
#   deploy/install-deps.sh --bench   also opentracker and wrk for bench/
#
# A machine that only runs a packaged tracker needs none of this:
# `apt install ./swarmkeeper_*.deb` pulls the runtime libraries.
#
# The /metrics test needs `promtool`, which Debian ships only inside the
# `prometheus` server package; installing that would also start a Prometheus
# service on :9090 on a systemd machine. So the package is downloaded, not
# installed, and only promtool is unpacked into .tools/ (gitignored).
set -euo pipefail

mode=test
case "${1:-}" in
  --run) mode=run ;;
  --bench) mode=bench ;;
  "") ;;
  *) echo "usage: deploy/install-deps.sh [--run|--bench]" >&2; exit 2 ;;
esac

# Building and running: the daemon links CAF, spdlog/fmt, OpenSSL, zlib, zstd; swarmctl
# libedit (BSD, not GNU readline) and libcurl (http and https to the admin API);
# Boost.Beast/Asio are headers.
packages=(
  build-essential cmake ninja-build ccache pkg-config
  libcaf-dev libboost-dev libspdlog-dev libfmt-dev libssl-dev libedit-dev zlib1g-dev libzstd-dev
  libcurl4-openssl-dev
)
if [[ $mode != run ]]; then
  packages+=(
    googletest libgtest-dev libgmock-dev libbenchmark-dev
    python3-libtorrent libtorrent-rasterbar-dev
    curl
    nlohmann-json3-dev
    # tests/admin/console: the web console in headless Chromium via Selenium
    chromium chromium-driver python3-selenium
    # deploy/cluster-netns.sh and its test need ip (network namespaces)
    iproute2
    # tests/e2e/client_matrix.py: more real BitTorrent clients next to libtorrent
    # (the test runs its own transmission-daemon on free ports, not the service)
    aria2 transmission-daemon transmission-cli
    # tests/fuzz: libFuzzer targets built with clang under ASan + UBSan
    clang-14 libclang-rt-14-dev
    # tests/sanitize: the ASan + UBSan and TSan stages build with GCC 12's
    # runtimes (g++ pulls them in through libgcc-12-dev; named here because
    # the stages fail without them)
    libgcc-12-dev libasan8 libubsan1 liblsan0 libtsan2
    # tests/swarmctl: https through a throwaway TLS proxy (python3 ssl, a
    # certificate from `openssl req`)
    openssl python3
    # tests/deploy: the package (cpack, dpkg-shlibdeps, man pages from --help)
    # and the unit (systemd-analyze)
    dpkg-dev help2man systemd
  )
fi
if [[ $mode == bench ]]; then
  # liburing-dev: udp_floor --io=uring (bench/udp/README.md)
  packages+=(opentracker wrk liburing-dev)
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
[[ $mode == run ]] || fetch_promtool
