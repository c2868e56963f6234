#!/usr/bin/env bash
# Installs the system packages zklock's tests, demo, benchmarks and chaos run need on
# Debian/Ubuntu: Java and ZooKeeper (the real servers the tests run against), and the peers that
# contend on the same locks: kazoo (Python), and Apache Curator with a JDK to compile its
# contender (javac); and Chromium, the browser `zklock ui`'s tests drive (through playwright-core,
# which never downloads a browser of its own here). Does nothing when they are already there.
set -euo pipefail

missing=()
have_zookeeper() {
  [ -n "${ZOOKEEPER_HOME:-}" ] || [ -n "${ZOOKEEPER_CLASSPATH:-}" ] || [ -f /usr/share/java/zookeeper.jar ]
}
have_zookeeper || missing+=(zookeeper)
# The JDK brings java too; a machine without javac needs it either way.
command -v javac >/dev/null 2>&1 || missing+=(default-jdk-headless)
/usr/bin/python3 -c 'import kazoo' >/dev/null 2>&1 || missing+=(python3-kazoo)
[ -f /usr/share/java/curator-recipes.jar ] || missing+=(libcurator-recipes-java)
# slf4j-nop silences Curator's logging (chaos/peers/java.ts puts it on the class path); libcurator
# pulls libslf4j-java in, but a machine that has Curator some other way may lack it.
[ -f /usr/share/java/slf4j-nop.jar ] || missing+=(libslf4j-java)
# test/cli/ui.test.ts drives Debian's Chromium (test/cli/helpers/browser.ts). Only the ui's tests
# need it, and some distributions have no such deb (Ubuntu ships Chromium as a snap): asked for
# apart from the rest below, so its absence never stops the demo or the other tests.
browser=()
[ -x /usr/bin/chromium ] || [ -n "${CHROMIUM_PATH:-}" ] || browser+=(chromium)
# A recommendation of chromium's, so --no-install-recommends leaves it out: without it the page
# (and the README's picture) renders in whatever font is left.
if command -v dpkg >/dev/null 2>&1 && ! dpkg -s fonts-liberation >/dev/null 2>&1; then browser+=(fonts-liberation); fi

if [ ${#missing[@]} -eq 0 ] && [ ${#browser[@]} -eq 0 ]; then
  echo "install-system-deps: java, javac, zookeeper, kazoo, curator, slf4j, chromium and its fonts are present"
  exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
  echo "install-system-deps: missing ${missing[*]} ${browser[*]} and no apt-get here; install a JDK 17+ and ZooKeeper 3.5+ (set ZOOKEEPER_HOME to an Apache tarball) yourself, and Chromium for zklock ui's tests (set CHROMIUM_PATH to it)" >&2
  [ ${#missing[@]} -eq 0 ] && exit 0
  exit 1
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
$sudo apt-get update -qq
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-system-deps: installing ${missing[*]}"
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
if [ ${#browser[@]} -gt 0 ]; then
  echo "install-system-deps: installing ${browser[*]}"
  if ! DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${browser[@]}" >/dev/null; then
    echo "install-system-deps: could not install ${browser[*]}: zklock ui's browser tests need Chromium (set CHROMIUM_PATH to one); everything else is installed" >&2
  fi
fi
