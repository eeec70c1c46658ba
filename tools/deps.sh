#!/bin/sh
# Install the Debian packages that building, testing, the demo and the
# benchmarks need.
# Does nothing when they are all present. Debian 12 and 13.
#   tools/deps.sh [arm64]   also the cross compiler and the arm64 -dev
#                           packages (make ARCH=arm64), arm64 enabled in dpkg
set -e
CROSS_PKGS=
if [ "${1:-}" = arm64 ]; then
	CROSS_PKGS="gcc-aarch64-linux-gnu libc6-dev-arm64-cross libbpf-dev:arm64 libelf-dev:arm64
	            zlib1g-dev:arm64 libmnl-dev:arm64 libcrypt-dev:arm64"
fi
PKGS="make gcc clang llvm pkg-config libbpf-dev bpftool libelf-dev zlib1g-dev libmnl-dev libcrypt-dev
      iproute2 util-linux iputils-ping iperf3 python3
      qemu-system-x86 qemu-system-arm busybox-static kmod xz-utils zstd cpio debootstrap
      ethtool nftables conntrack gnuplot-nox traceroute coturn nmap groff-base
      build-essential debhelper dpkg-dev fakeroot lintian wireguard-tools
      dnsmasq-base pppoe isc-dhcp-server isc-dhcp-client radvd tmux chromium curl"
PKGS="$PKGS $CROSS_PKGS"
missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$' ||
		missing="$missing $p"
done
# promtool checks the Prometheus output in the tests. Debian ships it only
# in the prometheus server package: unpack the one binary into the cache
# rather than install (and start) a server.
PROMTOOL=/var/cache/sluice/promtool/promtool
fetch_promtool() {
	local tmp
	tmp=$(mktemp -d)
	if (cd "$tmp" && apt-get download -qq prometheus >/dev/null 2>&1) &&
	   dpkg-deb -x "$tmp"/prometheus_*.deb "$tmp/x" && [ -x "$tmp/x/usr/bin/promtool" ]; then
		install -D -m 0755 "$tmp/x/usr/bin/promtool" "$PROMTOOL"
	fi
	rm -rf "$tmp"
}
[ -z "$missing" ] && { [ -x "$PROMTOOL" ] || [ "$(id -u)" != 0 ] || fetch_promtool; exit 0; }
if [ "$(id -u)" != 0 ]; then
	echo "missing Debian packages:$missing (run 'sudo make deps')" >&2
	exit 1
fi
echo "installing:$missing"
export DEBIAN_FRONTEND=noninteractive
if [ -n "$CROSS_PKGS" ] && ! dpkg --print-foreign-architectures | grep -qx arm64; then
	dpkg --add-architecture arm64
fi
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing
# coturn is here for its RFC 5780 client and a STUN server the NAT tests
# start inside their own namespace: the package's system-wide TURN service
# is not wanted.
case " $missing " in
*" coturn "*)
	if command -v systemctl >/dev/null 2>&1; then
		systemctl disable --now coturn >/dev/null 2>&1 || true
	fi ;;
esac
[ -x "$PROMTOOL" ] || fetch_promtool
