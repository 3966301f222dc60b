#!/usr/bin/env bash
# Installs the Debian bookworm packages swarmkeeper needs to build, test and
# benchmark. Idempotent: installs only what is missing, so it is cheap to run
# before every build. Needs root (or sudo) only when something is missing.
#
#   deploy/install-deps.sh           build + test dependencies
#   deploy/install-deps.sh --bench   also opentracker and wrk for bench/
set -euo pipefail

packages=(
  build-essential cmake ccache pkg-config
  libcaf-dev libboost-dev libspdlog-dev libfmt-dev
  googletest libgtest-dev libgmock-dev libbenchmark-dev
  python3-libtorrent libtorrent-rasterbar-dev
  curl
)
if [[ "${1:-}" == "--bench" ]]; then
  packages+=(opentracker wrk)
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]} == 0)); then
  exit 0
fi

echo "install-deps: installing ${missing[*]}" >&2
sudo=""
if [[ $(id -u) -ne 0 ]]; then
  if command -v sudo >/dev/null; then sudo="sudo"; else
    echo "install-deps: need root to install: ${missing[*]}" >&2
    exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
