#!/bin/sh
# deps.sh demo|test: installs the Debian packages `make demo` or `make
# test` needs (README), when run as root; otherwise, if some are
# missing, prints the apt-get line to run and exits 1.  On a system
# without dpkg it checks nothing.
BUILD_PKGS="build-essential pvm pvm-dev pvm-examples libevent-dev \
zlib1g-dev libjansson-dev"
# What the tests build and run besides: OTF2 (pmon export -f otf2 is
# built with it when it is there), CUnit, namespaces and process tools,
# jq, gdb (t_gdb), a browser and curl (the web view), the exports'
# readers.
TEST_PKGS="$BUILD_PKGS libotf2-trace-dev libcunit1-dev iproute2 util-linux procps psmisc jq gdb chromium \
curl otf2-tools pajeng vite pkg-config groff-base"

case $1 in
demo) pkgs=$BUILD_PKGS ;;
test) pkgs=$TEST_PKGS ;;
*) echo "usage: deps.sh demo|test" >&2; exit 2 ;;
esac
command -v dpkg-query >/dev/null 2>&1 || exit 0

missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null |
	    grep -q 'install ok installed' || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" != 0 ]; then
	echo "make $1: missing Debian packages:$missing" >&2
	echo "Install them, then run make $1 again:" >&2
	echo "  sudo apt-get install -y$missing" >&2
	exit 1
fi
echo "make $1: installing$missing"
# $missing is a list of words on purpose.
# shellcheck disable=SC2086
apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
    apt-get install -y -qq $missing >/dev/null ||
    { echo "make $1: apt-get could not install$missing" >&2; exit 1; }
