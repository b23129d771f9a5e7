#!/usr/bin/env bash
# Debian packages the tests use: Chromium for the UI tests, ZooKeeper for HA tests.
# Installs only when running as root with apt-get; otherwise says what is missing and goes on,
# and the tests that need a missing piece are skipped with that reason.
set -euo pipefail
need=()
command -v chromium >/dev/null 2>&1 || need+=(chromium)
[ -e /usr/share/zookeeper/bin/zkServer.sh ] || [ -d /usr/share/zookeeper ] || need+=(zookeeper)
if [ ${#need[@]} -eq 0 ]; then exit 0; fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
else
  echo "install-system-deps: not root; missing Debian packages: ${need[*]}" >&2
fi
