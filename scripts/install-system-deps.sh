#!/usr/bin/env bash
# Installs the system packages zklock's tests, demo and benchmarks need on Debian/Ubuntu:
# Java and ZooKeeper (the real servers the tests run against) and kazoo (the Python peer that
# the interop tests and benchmarks compare with). Does nothing when they are already there.
set -euo pipefail

missing=()
have_zookeeper() {
  [ -n "${ZOOKEEPER_HOME:-}" ] || [ -n "${ZOOKEEPER_CLASSPATH:-}" ] || [ -f /usr/share/java/zookeeper.jar ]
}
have_zookeeper || missing+=(zookeeper)
command -v java >/dev/null 2>&1 || missing+=(default-jre-headless)
/usr/bin/python3 -c 'import kazoo' >/dev/null 2>&1 || missing+=(python3-kazoo)

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-system-deps: java, zookeeper and kazoo are present"
  exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
  echo "install-system-deps: missing ${missing[*]} and no apt-get here; install Java 11+ and ZooKeeper 3.5+ (set ZOOKEEPER_HOME to an Apache tarball) yourself" >&2
  exit 1
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
echo "install-system-deps: installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
