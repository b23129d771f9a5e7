#!/usr/bin/env bash
# Debian packages the tests use: Chromium for the UI tests, ZooKeeper for HA tests.
# Installs only when running as root with apt-get. A failed install never stops `make test`:
# it says what is missing, and the tests that need a missing piece are skipped with that reason.
set -uo pipefail
need=()
command -v chromium >/dev/null 2>&1 || need+=(chromium)
[ -d /usr/share/zookeeper ] || need+=(zookeeper)
if [ ${#need[@]} -eq 0 ]; then exit 0; fi
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "install-system-deps: not root or no apt-get; missing Debian packages: ${need[*]}" >&2
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
# A half-finished dpkg run (an interrupted earlier install) blocks every apt-get install until repaired.
dpkg --configure -a >/dev/null 2>&1 || true
for attempt in 1 2; do
  apt-get update -qq >/dev/null 2>&1 || true
  if apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null; then exit 0; fi
  dpkg --configure -a >/dev/null 2>&1 || true
done
echo "install-system-deps: could not install ${need[*]}; tests that need them will be skipped" >&2
exit 0
