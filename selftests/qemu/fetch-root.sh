#!/bin/bash
# fetch-root.sh arm64 [--refresh]
#
# A Debian 12 arm64 root for the arm64 guests (run-in-guest.sh arm64-6.1 and
# arm64-6.12): what the suites run (bash, iproute2, python3, ping, iperf3,
# nftables, bpftool ...) and what the arm64 sluice links (libbpf1, libelf1,
# libmnl0), made on this amd64 machine without running a single arm64
# program: debootstrap --foreign downloads the packages and their
# dependencies, every package is then unpacked (dpkg-deb) into the merged-/usr
# tree debootstrap laid out, and the few things maintainer scripts would have
# made are written here (users and groups, the awk link, hosts). Nothing is
# configured with dpkg: the guest's root is read-only with a throwaway layer
# on top, and the suites need files, not a package database that says
# "configured". Unpacking takes seconds where running debootstrap's second
# stage under emulation takes a quarter of an hour, on every CI machine.
#
# Result: ${SLUICE_CACHE:-/var/cache/sluice}/roots/arm64/
#   root/       the tree, booted as the guest's / (read-only 9p + tmpfs)
#   info        what it was made from
#   .complete   marker; later runs return at once
set -euo pipefail

usage() { echo "usage: $0 arm64 [--refresh]" >&2; exit 2; }
[ $# -ge 1 ] && [ "$1" = arm64 ] || usage
ARCH=$1; shift
REFRESH=${SLUICE_ROOT_REFRESH:-0}
for a in "$@"; do
	case $a in --refresh) REFRESH=1 ;; *) usage ;; esac
done

DIST=bookworm
# The suites' tools and the arm64 sluice's libraries. busybox-static is the
# guest's early userland (the initramfs, before the root is mounted).
PKGS="bash coreutils util-linux mount procps kmod iproute2 iputils-ping iperf3 python3
      ethtool bpftool nftables conntrack traceroute nmap curl wireguard-tools dnsmasq-base
      psmisc diffutils findutils grep sed gzip xz-utils mawk busybox-static
      libbpf1 libelf1 libmnl0 zlib1g libcrypt1"

CACHE=${SLUICE_CACHE:-/var/cache/sluice}
RROOT=$CACHE/roots
DIR=$RROOT/$ARCH
msg() { echo "fetch-root[$ARCH]: $*"; }
die() { echo "fetch-root[$ARCH]: ERROR: $*" >&2; exit 1; }

key() { printf 'format=3\ndist=%s\npackages=%s\n' "$DIST" "$(echo $PKGS)"; }
current() { [ -f "$DIR/.complete" ] && [ "$(grep -v '^#' "$DIR/info" 2>/dev/null)" = "$(key)" ]; }
current && [ "$REFRESH" != 1 ] && exit 0

for t in debootstrap dpkg-deb tar flock; do
	command -v "$t" >/dev/null 2>&1 || die "missing tool '$t' (apt-get install debootstrap)"
done
mkdir -p "$RROOT"
exec 9>"$RROOT/.$ARCH.lock"
flock 9
current && [ "$REFRESH" != 1 ] && exit 0

avail_kb=$(df -Pk "$RROOT" | awk 'NR==2 {print $4}')
[ "${avail_kb:-0}" -ge $((1024 * 1024)) ] ||
	die "less than 1 GB free in $RROOT ($((${avail_kb:-0} / 1024)) MB); the root needs ~0.4 GB"

# shellcheck source=selftests/apt_sources.sh
. "$(dirname "${BASH_SOURCE[0]}")/../apt_sources.sh"
MIRROR=$(debian_mirror)
[ -n "$MIRROR" ] || die "no Debian archive in this machine's apt sources (/etc/apt/sources.list*)"

TMP=$RROOT/.$ARCH.tmp.$$
rm -rf --one-file-system "$TMP"
mkdir -p "$TMP"
trap 'rm -rf --one-file-system "$TMP"' EXIT
printf 'tries = 3\ntimeout = 30\n' >"$TMP/wgetrc"
t0=$SECONDS
msg "downloading Debian 12 $ARCH packages from $MIRROR (debootstrap --foreign: nothing runs)"
if ! WGETRC=$TMP/wgetrc LC_ALL=C debootstrap --foreign --arch="$ARCH" --variant=minbase \
	--include="$(echo $PKGS | tr ' ' ,)" "$DIST" "$TMP/root" "$MIRROR" >"$TMP/debootstrap.log" 2>&1 9>&-; then
	tail -n 20 "$TMP/debootstrap.log" >&2
	die "debootstrap --foreign $DIST $ARCH failed"
fi

R=$TMP/root
debs=("$R"/var/cache/apt/archives/*.deb)
msg "unpacking ${#debs[@]} packages"
# dpkg's database says what is there (each package's fields and files), so
# that `dpkg -i` of sluice's .deb in the guest checks its dependencies
# against them as on a real install.
DB=$R/var/lib/dpkg
mkdir -p "$DB/info"
: >"$DB/status"
for d in "${debs[@]}"; do
	# --keep-directory-symlink: /bin, /lib, /sbin are links into /usr
	dpkg-deb --fsys-tarfile "$d" | tar -C "$R" --keep-directory-symlink -xf - ||
		die "cannot unpack $(basename "$d")"
	p=$(dpkg-deb -f "$d" Package)
	l=$p	# (a Multi-Arch: same package's files are listed under PKG:ARCH)
	[ "$(dpkg-deb -f "$d" Multi-Arch)" = same ] && l=$p:$(dpkg-deb -f "$d" Architecture)
	dpkg-deb -f "$d" | sed '1a Status: install ok installed' >>"$DB/status"
	echo >>"$DB/status"
	dpkg-deb --fsys-tarfile "$d" | tar -t | sed -e 's,^\./,/,' -e 's,/$,,' -e 's,^$,/.,' >"$DB/info/$l.list"
	dpkg-deb --ctrl-tarfile "$d" | tar -xOf - ./postinst 2>/dev/null |
		awk '/\\$/ { sub(/\\$/, ""); line = line $0; next }
		     { line = line $0; n = split(line, f); line = ""
		       for (i = 1; i + 4 <= n; i++)
			       if (f[i] == "update-alternatives" && f[i + 1] == "--install" &&
				   f[i + 2] ~ /^\// && f[i + 4] ~ /^\//)
				       print f[i + 2], f[i + 4] }' \
		>>"$TMP/alternatives" || true	# (most packages have no postinst)
done
rm -f "$R"/var/cache/apt/archives/*.deb
rm -rf "$R/debootstrap"
# (the foreign stage leaves /proc a link to the host's)
rm -f "$R/proc"
mkdir -p "$R/proc" "$R/sys" "$R/dev" "$R/run" "$R/tmp"

# What the maintainer scripts would have made: the alternatives' links
# (the first package's wins: awk is mawk, libblas.so.3 the reference BLAS
# nmap links), the users and groups, hosts.
while read -r link path; do
	[ -e "$R$link" ] || [ -L "$R$link" ] || ln -s "$path" "$R$link"
done <"$TMP/alternatives"
cp "$R/usr/share/base-passwd/passwd.master" "$R/etc/passwd"
cp "$R/usr/share/base-passwd/group.master" "$R/etc/group"
[ -e "$R/usr/bin/awk" ] || ln -s mawk "$R/usr/bin/awk"
printf '127.0.0.1\tlocalhost\n::1\t\tlocalhost ip6-localhost ip6-loopback\n' >"$R/etc/hosts"
printf 'passwd: files\ngroup: files\nhosts: files dns\n' >"$R/etc/nsswitch.conf"
[ -x "$R/bin/busybox" ] || die "busybox-static was not unpacked"

{
	echo "# generated by selftests/qemu/fetch-root.sh in $((SECONDS - t0)) s from $MIRROR"
	key
} >"$TMP/info"
touch "$TMP/.complete"
[ -e "$DIR" ] && mv "$DIR" "$RROOT/.$ARCH.old.$$"
mv "$TMP" "$DIR"
rm -rf --one-file-system "$RROOT/.$ARCH.old.$$"
trap - EXIT
msg "done in $((SECONDS - t0)) s: $(du -sh "$DIR" | cut -f1) in $DIR"
