#!/usr/bin/env bash
# The Debian package: cpack builds it; it holds the binaries, man pages, the
# conffile config, the unit and the maintainer scripts; it depends on Debian's
# runtime library packages only (no -dev package, nothing from the build
# tree); apt can resolve it; its binaries run from the unpacked tree. With
# SK_PACKAGE_INSTALL=1, or CI=true (a throwaway CI machine), and as root it
# is also installed with apt, checked (--version, 0600 token and secret) and
# purged — never when a swarmkeeper package is already installed.
#   package_test.sh BUILD_DIR
set -euo pipefail
build=$1
fail() { echo "package_test: $*" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cpack --config "$build/CPackConfig.cmake" -B "$work/out" >"$work/cpack.log" 2>&1 ||
  { cat "$work/cpack.log"; fail "cpack failed"; }
deb=$(ls "$work"/out/swarmkeeper_*.deb)
[[ -f $deb ]] || fail "no .deb produced"
echo "package: $(basename "$deb") ($(stat -c %s "$deb") bytes)"

files=$(dpkg-deb -c "$deb" | awk '{print $6}')
for f in ./usr/bin/swarmkeeper ./usr/bin/swarmctl ./etc/swarmkeeper/swarmkeeper.ini \
         ./lib/systemd/system/swarmkeeper.service ./usr/share/man/man1/swarmkeeper.1.gz \
         ./usr/share/man/man1/swarmctl.1.gz ./usr/share/doc/swarmkeeper/README.md \
         ./var/lib/swarmkeeper/; do
  grep -qxF "$f" <<<"$files" || fail "missing in the package: $f"
done
if grep -q "^\./usr/local\|/build/" <<<"$files"; then fail "files outside the Debian layout"; fi

dpkg-deb -e "$deb" "$work/control"
grep -qxF /etc/swarmkeeper/swarmkeeper.ini "$work/control/conffiles" || fail "the config is not a conffile"
for s in postinst prerm postrm; do [[ -x $work/control/$s ]] || fail "no executable $s"; done
depends=$(dpkg-deb -f "$deb" Depends)
echo "Depends: $depends"
for lib in libcaf-core0.17 libcaf-io0.17 libcaf-openssl0.17 libspdlog1.10 libssl3 libedit2; do
  grep -q "$lib" <<<"$depends" || fail "Depends lacks $lib"
done
if grep -q -- '-dev' <<<"$depends"; then fail "Depends names a -dev package"; fi

# apt resolves every dependency from the archive.
apt-get install --simulate "$deb" >"$work/apt.log" 2>&1 || { cat "$work/apt.log"; fail "apt cannot resolve the package"; }
grep -q "^Inst swarmkeeper" "$work/apt.log" || { cat "$work/apt.log"; fail "apt would not install it"; }

# The unpacked binaries run with the system's libraries.
dpkg-deb -x "$deb" "$work/root"
"$work/root/usr/bin/swarmkeeper" --version | grep -q '^swarmkeeper [0-9]' || fail "swarmkeeper --version"
"$work/root/usr/bin/swarmctl" --version | grep -q '^swarmctl [0-9]' || fail "swarmctl --version"
zcat "$work/root/usr/share/man/man1/swarmkeeper.1.gz" | grep -q -- 'http\\-port\|http\\.port\|http.port' ||
  fail "the man page does not list the options"
cmp "$work/root/etc/swarmkeeper/swarmkeeper.ini" "$(dirname "$0")/../../deploy/swarmkeeper.ini" ||
  fail "the packaged config is not deploy/swarmkeeper.ini"

if [[ ${SK_PACKAGE_INSTALL:-0} == 1 || ${CI:-} == true ]]; then
  [[ $(id -u) -eq 0 ]] || fail "SK_PACKAGE_INSTALL=1 needs root"
  if dpkg -s swarmkeeper >/dev/null 2>&1; then fail "a swarmkeeper package is installed already: not touching it"; fi
  trap 'apt-get purge -y swarmkeeper >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
  DEBIAN_FRONTEND=noninteractive apt-get install -y "$deb" >"$work/install.log" 2>&1 ||
    { cat "$work/install.log"; fail "apt install failed"; }
  /usr/bin/swarmkeeper --version | grep -q '^swarmkeeper [0-9]' || fail "installed swarmkeeper --version"
  for f in /etc/swarmkeeper/admin.token /etc/swarmkeeper/cluster.secret; do
    [[ $(stat -c %a "$f") == 600 ]] || fail "$f is not 0600"
    [[ $(wc -c <"$f") -ge 64 ]] || fail "$f is too short"
  done
  # The installed daemon accepts its generated token (admin.port set).
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  /usr/bin/swarmkeeper --http.port="$port" --no-udp --admin.port=0 \
    --admin.token-file=/etc/swarmkeeper/admin.token --dump-config >/dev/null ||
    fail "the installed daemon refuses its generated token"
  DEBIAN_FRONTEND=noninteractive apt-get purge -y swarmkeeper >"$work/purge.log" 2>&1 || fail "purge failed"
  [[ ! -e /etc/swarmkeeper/admin.token && ! -e /usr/bin/swarmkeeper ]] || fail "purge left files"
  echo "package: installed, checked and purged"
fi
echo "package_test: ok"
