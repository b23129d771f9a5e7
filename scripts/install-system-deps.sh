#!/usr/bin/env bash
# Debian packages Flinkbench uses: a Java 17+ JDK for PySpark (its jcmd writes the Spark class archive,
# runtime/taskmanager/class_archive.py; a JRE runs everything, only slower to start), Chromium for the UI tests, ZooKeeper for HA tests,
# PostgreSQL (server, its wal2json plugin and the JDBC driver) for the database connector tests.
#
#   scripts/install-system-deps.sh          all four (what `make test` needs)
#   scripts/install-system-deps.sh java     only Java (what `make demo` and a user's cluster need)
#
# Installs only when running as root with apt-get. A failed install never stops the caller: it says
# what is missing (Java's absence is then reported by `python -m runtime.java`, which `make` runs next,
# and the tests that need Chromium or ZooKeeper fail naming what they lack).
set -uo pipefail
if [ $# -eq 0 ]; then set -- java chromium zookeeper postgresql; fi

java_ok() {
  local java=java
  [ -n "${JAVA_HOME:-}" ] && java="$JAVA_HOME/bin/java"
  local major
  major=$("$java" -version 2>&1 | sed -nE 's/.*version "(1\.)?([0-9]+).*/\2/p' | head -1)
  [ -n "$major" ] && [ "$major" -ge 17 ] || return 1
  # a JDK: jcmd beside the java binary (a JRE-only machine gets the JDK package of the same release)
  [ "$(id -u)" != 0 ] || [ -x "$(dirname "$(readlink -f "$(command -v "$java")")")/jcmd" ]
}

need=()
for what in "$@"; do
  case "$what" in
    java) java_ok || need+=(java) ;;
    chromium) command -v chromium >/dev/null 2>&1 || need+=(chromium) ;;
    zookeeper) [ -d /usr/share/zookeeper ] || need+=(zookeeper) ;;
    postgresql) { [ -x /usr/lib/postgresql/15/bin/initdb ] && [ -f /usr/share/java/postgresql.jar ] \
                  && [ -f /usr/lib/postgresql/15/lib/wal2json.so ]; } \
                || need+=(postgresql postgresql-15-wal2json libpostgresql-jdbc-java) ;;
    *) echo "install-system-deps: unknown component '$what' (java, chromium, zookeeper, postgresql)" >&2; exit 2 ;;
  esac
done
if [ ${#need[@]} -eq 0 ]; then exit 0; fi
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  # Java alone: stay quiet, the Java check that follows says it in one line with what to install.
  if [ "${need[*]}" != java ]; then
    echo "install-system-deps: not root or no apt-get; missing Debian packages: ${need[*]}" >&2
  fi
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
echo "install-system-deps: installing ${need[*]}" >&2
# A half-finished dpkg run (an interrupted earlier install) blocks every apt-get install until repaired.
dpkg --configure -a >/dev/null 2>&1 || true
# The first OpenJDK JDK of 17 or newer that this release packages (bookworm has 17, trixie 21).
java_package() {
  for p in openjdk-17-jdk-headless openjdk-21-jdk-headless openjdk-25-jdk-headless; do
    if apt-cache show "$p" >/dev/null 2>&1; then echo "$p"; return; fi
  done
  echo openjdk-17-jdk-headless
}
for attempt in 1 2; do
  apt-get update -qq >/dev/null 2>&1 || true
  need=("${need[@]/#java/$(java_package)}")
  if apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null; then exit 0; fi
  dpkg --configure -a >/dev/null 2>&1 || true
done
echo "install-system-deps: could not install ${need[*]}" >&2
exit 0
