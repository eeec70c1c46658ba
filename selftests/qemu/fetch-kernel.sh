#!/bin/bash
# fetch-kernel.sh NAME [--refresh]
#
# Download a stock Debian kernel package and unpack it into a cache folder for
# selftests/qemu/run-in-guest.sh.  NAME is one of:
#   6.1    Debian 12 (bookworm): newest linux-image-6.1.0-N-amd64 in the host's
#          configured apt sources (host apt-cache).
#   6.12   Debian 13 (trixie):   newest linux-image-6.12.*+deb13*-amd64, resolved
#          with a PRIVATE apt sources list / state dir (the host's /etc/apt and
#          /var/lib/apt are left alone).  The mirror is taken from the host's
#          apt sources.
#   arm64-6.1, arm64-6.12   the same releases' arm64 kernels (linux-image-*-arm64),
#          both through private lists (the host need not know arm64); for
#          qemu-system-aarch64 -M virt (run-in-guest.sh boots them on an arm64
#          Debian root, fetch-root.sh)
#
# Result: ${SLUICE_CACHE:-/var/cache/sluice}/kernels/NAME/
#   root/            dpkg-deb -x of the package (boot/, [usr/]lib/modules/KVER)
#   vmlinux          uncompressed ELF kernel with a PVH note (fast qemu boot)
#   Image            arm64: the uncompressed kernel image qemu boots
#   info             shell-sourceable description (KVER, package, paths)
#   .complete        marker: cache is complete; later runs do nothing
#
# --refresh (or SLUICE_KERNEL_REFRESH=1) re-resolves the newest package and
# replaces the cache if a newer one exists.  Never installs anything, never
# touches /boot.  Any number of callers may run it at once (the locks are
# below and in selftests/qemu/README.md); it needs the Debian archive
# reachable from the caller's network namespace.
set -euo pipefail

usage() { echo "usage: $0 {6.1|6.12|arm64-6.1|arm64-6.12} [--refresh]" >&2; exit 2; }
[ $# -ge 1 ] || usage
NAME=$1; shift
REFRESH=${SLUICE_KERNEL_REFRESH:-0}
for a in "$@"; do
	case $a in
	--refresh) REFRESH=1 ;;
	*) usage ;;
	esac
done
case $NAME in 6.1|6.12|arm64-6.1|arm64-6.12) ;; *) usage ;; esac
KARCH=amd64
case $NAME in arm64-*) KARCH=arm64 ;; esac

CACHE=${SLUICE_CACHE:-/var/cache/sluice}
KROOT=$CACHE/kernels
KDIR=$KROOT/$NAME

msg() { echo "fetch-kernel[$NAME]: $*"; }
die() { echo "fetch-kernel[$NAME]: ERROR: $*" >&2; exit 1; }

if [ -f "$KDIR/.complete" ] && [ "$REFRESH" != 1 ]; then
	exit 0
fi

for t in apt-get apt-cache dpkg-deb dpkg depmod xz zstd flock od grep; do
	command -v "$t" >/dev/null 2>&1 ||
		die "missing tool '$t' (apt-get install qemu-system-x86 busybox-static kmod xz-utils zstd)"
done

mkdir -p "$KROOT"
# Locks. kernels/NAME is this script's alone: $KROOT/.NAME.lock (fd 9).
# The apt lists a fetch resolves and downloads from are not: a private
# list dir ($CACHE/apt/DIST[-ARCH]) serves any kernel of that release and
# architecture, the host's lists (6.1) any apt on the machine. apt's own
# locks do not order such users: a second `apt-get update` of the same
# lists fails at once instead of waiting, and apt-cache and apt-get
# download take no lock, so they could read lists an update is rewriting.
# So each list dir has a lock of ours too (fd 8), held from its update to
# the end of the download: $CACHE/apt/.DIST[-ARCH].lock, or
# $CACHE/apt/.host.lock. The name's lock is always taken first. apt gets
# neither descriptor, so no child of apt that outlives this script can
# keep a lock.
exec 9>"$KROOT/.$NAME.lock"
flock 9
# Someone else may have completed it while we waited for the lock.
if [ -f "$KDIR/.complete" ] && [ "$REFRESH" != 1 ]; then
	exit 0
fi
# Holding the lock, what an earlier run killed midway left is stale.
rm -rf "$KROOT/.$NAME.tmp."* "$KROOT/.$NAME.old."*

avail_kb=$(df -Pk "$KROOT" | awk 'NR==2 {print $4}')
if [ "${avail_kb:-0}" -lt $((1200 * 1024)) ]; then
	die "less than 1.2 GB free in $KROOT ($((avail_kb / 1024)) MB); a kernel needs ~0.5 GB"
fi

# ---------------------------------------------------------------- apt setup
# shellcheck source=selftests/apt_sources.sh
. "$(dirname "${BASH_SOURCE[0]}")/../apt_sources.sh"
# apt's options for the lists in use; the host's lists (6.1) are updated
# as the host's apt would update them, without APT_OPTS
APT_OPTS=(-o APT::Sandbox::User=root)
UPDATE_OPTS=()
SEC_URI=""
MAIN_URI=""
ADIR=""		# the private lists' dir; empty: the host's lists
UPDATE_LOG=""	# the last apt-get update's output
CACHE_LOG=""	# apt-cache's complaints while resolving

lock_lists() { # LOCKFILE
	mkdir -p "$CACHE/apt"
	exec 8>"$1"
	if ! flock -n 8; then
		msg "waiting for another fetch that uses the same apt lists ($1)"
		flock 8
	fi
}

# apt_said LOG: apt's last words in LOG, on one line: its errors and
# warnings if it printed any, else its last lines.
apt_said() {
	local s
	s=$(grep -E '^(E|W|Err):' "$1" 2>/dev/null | tail -n 3)
	[ -n "$s" ] || s=$(tail -n 3 "$1" 2>/dev/null)
	printf '%s' "${s:-(no output)}" | tr -s '\n' ' ' | sed 's/ *$//'
}

# apt_update LOG: `apt-get update` of the lists UPDATE_OPTS name, its output
# in LOG. --error-on=any: by default apt exits 0 when no index could be
# fetched (no route to the archive, no DNS), with empty lists and
# warnings only. apt-get update does not wait for another apt that holds
# the lists (the host's: make deps, unattended-upgrades): that is
# retried for up to two minutes.
apt_update() {
	local log=$1
	UPDATE_LOG=$log
	for _ in $(seq 24); do
		apt-get -q "${UPDATE_OPTS[@]}" --error-on=any update >"$log" 2>&1 8>&- 9>&- && return 0
		grep -q '^E: Could not get lock' "$log" || return 1
		sleep 5
	done
	return 1
}

setup_private_apt() { # DIST
	local dist=$1 srcs uri suite
	srcs=$(host_sources)
	while read -r uri suite; do
		[ -n "$uri" ] || continue
		uri=${uri%/}
		case $suite in
		bookworm-security | bookworm/updates | trixie-security) [ -n "$SEC_URI" ] || SEC_URI=$uri ;;
		bookworm | bookworm-updates | trixie | trixie-updates | stable | stable-updates)
			[ -n "$MAIN_URI" ] || MAIN_URI=$uri ;;
		esac
	done <<<"$srcs"
	# Fall back on any debian-looking mirror, then on the default one.
	if [ -z "$MAIN_URI" ]; then
		MAIN_URI=$(awk '$1 ~ /debian\/?$/ && $1 !~ /security/ {print $1; exit}' <<<"$srcs")
		MAIN_URI=${MAIN_URI%/}
	fi
	[ -n "$MAIN_URI" ] || die "no Debian archive in this machine's apt sources (/etc/apt/sources.list*)"
	if [ -z "$SEC_URI" ]; then
		case $MAIN_URI in
		*/debian) SEC_URI=${MAIN_URI%/debian}/debian-security ;;
		esac
	fi

	ADIR=$CACHE/apt/$dist
	[ "$KARCH" = amd64 ] || ADIR=$ADIR-$KARCH
	lock_lists "$CACHE/apt/.${ADIR##*/}.lock"
	mkdir -p "$ADIR/state/lists/partial" "$ADIR/cache/archives/partial" "$ADIR/etc"
	APT_OPTS+=(
		-o Dir::Etc::SourceList="$ADIR/etc/sources.list"
		-o Dir::Etc::SourceParts=/dev/null
		-o Dir::Etc::Preferences=/dev/null
		-o Dir::Etc::PreferencesParts=/dev/null
		-o Dir::State="$ADIR/state"
		-o Dir::State::status=/dev/null
		-o Dir::Cache="$ADIR/cache"
		-o APT::Architecture="$KARCH"
		-o APT::Architectures::="$KARCH"
	)
	UPDATE_OPTS=("${APT_OPTS[@]}")
	local key=/usr/share/keyrings/debian-archive-keyring.gpg
	local so=""
	[ -f "$key" ] && so="[signed-by=$key] "
	write_list() {
		{
			echo "deb ${so}$MAIN_URI $dist main"
			echo "deb ${so}$MAIN_URI $dist-updates main"
			[ "$1" = nosec ] || [ -z "$SEC_URI" ] || echo "deb ${so}$SEC_URI $dist-security main"
		} >"$ADIR/etc/sources.list"
	}
	write_list sec
	msg "apt update (private lists in $ADIR): $MAIN_URI $dist $dist-updates${SEC_URI:+, $SEC_URI $dist-security}"
	if ! apt_update "$ADIR/update.log"; then
		msg "apt update with $dist-security failed ($(apt_said "$ADIR/update.log")); retrying with $dist + $dist-updates"
		write_list nosec
		apt_update "$ADIR/update.log" ||
			die "apt-get update for $dist failed: $(apt_said "$ADIR/update.log")"
	fi
}

# newest_pkg REGEX: print "PACKAGE VERSION" of the newest candidate whose name
# matches REGEX (compared by Debian version, not by name). apt-cache's
# complaints go to CACHE_LOG.
newest_pkg() {
	local re=$1 best="" bestv="" p v
	local names
	names=$(apt-cache "${APT_OPTS[@]}" pkgnames linux-image- 2>>"$CACHE_LOG" 8>&- 9>&- | grep -E "$re" || true)
	[ -n "$names" ] || return 1
	# one apt-cache call for all candidates: "PACKAGE VERSION" lines
	while read -r p v; do
		[ -n "$v" ] || continue
		if [ -z "$best" ] || dpkg --compare-versions "$v" gt "$bestv"; then
			best=$p bestv=$v
		fi
	done < <(apt-cache "${APT_OPTS[@]}" show --no-all-versions $names 2>>"$CACHE_LOG" 8>&- 9>&- |
		awk '/^Package: / {p = $2} /^Version: / {print p, $2}')
	[ -n "$best" ] && echo "$best $bestv"
}

pkg_field() { # pkg field
	apt-cache "${APT_OPTS[@]}" show --no-all-versions "$1" 2>>"$CACHE_LOG" 8>&- 9>&- |
		sed -n "s/^$2: //p" | head -n1
}

# resolve: PKG and PKGVER, the newest package matching RE in the lists.
resolve() {
	PKG="" PKGVER=""
	read -r PKG PKGVER < <(newest_pkg "$RE" || true) || true
	[ -n "$PKG" ]
}

# The host's lists: the lock keeps this script's update of them (below)
# from rewriting them under another fetch's apt-cache; another apt on the
# machine is waited for in apt_update. The log is kept beside the private
# lists'.
host_lists() {
	lock_lists "$CACHE/apt/.host.lock"
	UPDATE_LOG=$CACHE/apt/host-update.log
}

case $NAME in
6.1)
	RE='^linux-image-6\.1\.0-[0-9]+-amd64$'
	host_lists
	;;
6.12)
	RE='^linux-image-6\.12\.[0-9]+\+deb13(\.[0-9]+)?-amd64$'
	setup_private_apt trixie
	;;
arm64-6.1)
	RE='^linux-image-6\.1\.0-[0-9]+-arm64$'
	setup_private_apt bookworm
	;;
arm64-6.12)
	RE='^linux-image-6\.12\.[0-9]+\+deb13(\.[0-9]+)?-arm64$'
	setup_private_apt trixie
	;;
esac
CACHE_LOG=$CACHE/apt/.$NAME.apt-cache.log
: >"$CACHE_LOG"

# Not found: the lists are updated once more (the host's, or the private
# ones from scratch) and the search repeated; then apt's own words say why.
# (The host's lists may hold other sources, which may fail to update while
# Debian's do: there, what decides is whether the package is found.)
cache_said() { [ -s "$CACHE_LOG" ] && echo "; apt-cache: $(apt_said "$CACHE_LOG")"; }
if ! resolve; then
	if [ -z "$ADIR" ]; then
		msg "no $RE in the host's apt lists; running apt-get update"
		apt_update "$UPDATE_LOG" || msg "apt-get update: $(apt_said "$UPDATE_LOG")"
	else
		msg "no $RE in $ADIR$(cache_said); updating the lists from scratch"
		rm -rf "$ADIR/state/lists"
		mkdir -p "$ADIR/state/lists/partial"
		apt_update "$UPDATE_LOG" ||
			die "apt-get update of $ADIR failed: $(apt_said "$UPDATE_LOG")"
	fi
	resolve ||
		die "no package matching $RE (apt-get update: $(apt_said "$UPDATE_LOG")$(cache_said))"
fi

# Is it the real image or a meta/transitional package?  The real one is
# tens of MB; otherwise use the -unsigned package that carries the same files.
size=$(pkg_field "$PKG" Size)
if [ "${size:-0}" -lt $((20 * 1024 * 1024)) ]; then
	if [ -n "$(pkg_field "$PKG-unsigned" Version)" ]; then
		msg "$PKG is only ${size:-?} bytes (meta package?); using $PKG-unsigned"
		PKG=$PKG-unsigned
		PKGVER=$(pkg_field "$PKG" Version)
		size=$(pkg_field "$PKG" Size)
	fi
fi

if [ -f "$KDIR/.complete" ]; then
	# shellcheck disable=SC1091
	old=$(. "$KDIR/info"; echo "$SLUICE_KPKG $SLUICE_KPKG_VERSION")
	if [ "$old" = "$PKG $PKGVER" ]; then
		msg "cache is up to date ($PKG $PKGVER)"
		exit 0
	fi
	msg "replacing cached $old with $PKG $PKGVER"
fi

TMP=$KROOT/.$NAME.tmp.$$
rm -rf "$TMP"
mkdir -p "$TMP/dl"
trap 'rm -rf "$TMP"' EXIT

msg "fetching $PKG $PKGVER ($(( ${size:-0} / 1024 / 1024 )) MB)"
(cd "$TMP/dl" && apt-get -q "${APT_OPTS[@]}" download "$PKG=$PKGVER" >"$TMP/download.log" 2>&1 8>&- 9>&-) ||
	die "apt-get download $PKG=$PKGVER failed: $(apt_said "$TMP/download.log")"
flock -u 8	# (the lists are not read again)
deb=$(ls "$TMP"/dl/*.deb)

msg "unpacking $(basename "$deb")"
dpkg-deb -x "$deb" "$TMP/root"
rm -rf "$TMP/dl"

vmlinuz=$(ls "$TMP"/root/boot/vmlinuz-* 2>/dev/null | head -n1 || true)
[ -n "$vmlinuz" ] || die "$PKG has no boot/vmlinuz-* (meta package?)"
KVER=${vmlinuz##*/vmlinuz-}

if [ -d "$TMP/root/lib/modules/$KVER" ]; then
	MODDIR=root/lib/modules/$KVER
elif [ -d "$TMP/root/usr/lib/modules/$KVER" ]; then
	MODDIR=root/usr/lib/modules/$KVER
	# depmod -b BASE looks in BASE/lib/modules (kmod 30)
	[ -e "$TMP/root/lib" ] || ln -s usr/lib "$TMP/root/lib"
else
	die "$PKG has no modules directory for $KVER"
fi

msg "depmod $KVER"
depmod -b "$TMP/root" "$KVER"
[ -s "$TMP/$MODDIR/modules.dep" ] || die "depmod produced no modules.dep"

# ------------------------------------------------------- extract-vmlinux
# Own version of the kernel tree's scripts/extract-vmlinux: the bzImage setup
# header (boot protocol >= 2.08) gives the offset/length of the compressed
# payload; if that fails, scan for compression magics like the original does.
u8()  { od -An -tu1 -j"$2" -N1 "$1" | tr -d ' '; }
u16() { od -An -tu2 -j"$2" -N2 "$1" | tr -d ' '; }
u32() { od -An -tu4 -j"$2" -N4 "$1" | tr -d ' '; }

is_elf() { [ "$(od -An -c -N4 "$1" | tr -d ' ')" = '177ELF' ]; }
has_pvh_note() { # ELF note: namesz=4 descsz=4|8 type=18 (XEN_ELFNOTE_PHYS32_ENTRY) "Xen\0"
	LC_ALL=C grep -qaP '\x04\x00\x00\x00[\x04\x08]\x00\x00\x00\x12\x00\x00\x00Xen\x00' "$1"
}

decompress_at() { # file offset(0-based) [length] -> stdout
	local f=$1 off=$2 len=${3:-} magic
	magic=$(od -An -tx1 -j"$off" -N6 "$f" | tr -d ' \n')
	if [ -n "$len" ]; then
		src() { tail -c +$((off + 1)) "$f" | head -c "$len"; }
	else
		src() { tail -c +$((off + 1)) "$f"; }
	fi
	case $magic in
	fd377a585a00*) src | xz -dc --single-stream 2>/dev/null ;;
	28b52ffd*)     src | zstd -dc --memory=2048MB 2>/dev/null ;;
	1f8b08*)       src | gzip -dc 2>/dev/null ;;
	425a68*)       src | bzip2 -dc 2>/dev/null ;;
	5d000000*)     src | xz -dc --format=lzma 2>/dev/null ;;
	02214c18*)     src | lz4 -dc 2>/dev/null ;;
	*) return 1 ;;
	esac
	return 0
}

extract_vmlinux() { # bzImage out
	local img=$1 out=$2
	local hdr ver ss poff plen base
	hdr=$(od -An -c -j$((0x202)) -N4 "$img" | tr -d ' ')
	if [ "$hdr" = HdrS ]; then
		ver=$(u16 "$img" $((0x206)))
		ss=$(u8 "$img" $((0x1f1)))
		[ "$ss" = 0 ] && ss=4
		if [ "$ver" -ge $((0x208)) ]; then
			poff=$(u32 "$img" $((0x248)))
			plen=$(u32 "$img" $((0x24c)))
			base=$(((ss + 1) * 512 + poff))
			if decompress_at "$img" "$base" "$plen" >"$out" || true; then
				if [ -s "$out" ] && is_elf "$out"; then
					echo "header payload at $base ($(od -An -tx1 -j"$base" -N4 "$img" | tr -d ' '))"
					return 0
				fi
			fi
		fi
	fi
	# Fallback: magic scan.
	local pat off
	for pat in '\xfd7zXZ\x00' '\x28\xb5\x2f\xfd' '\x1f\x8b\x08' '\x02\x21\x4c\x18' 'BZh' '\x5d\x00\x00\x00'; do
		for off in $(LC_ALL=C grep -obUaP "$pat" "$img" 2>/dev/null | cut -d: -f1); do
			decompress_at "$img" "$off" >"$out" || continue
			if [ -s "$out" ] && is_elf "$out"; then
				echo "magic scan payload at $off"
				return 0
			fi
		done
	done
	rm -f "$out"
	return 1
}

# arm64: Debian's vmlinuz is the Image gzipped, or (EFI zboot) a PE file whose
# header names the compressed Image inside it ("zimg", offset and size at 8
# and 12, the method at 24). qemu 7.2 boots neither directly: unpack it.
extract_arm64_image() { # vmlinuz out
	local img=$1 out=$2 off len
	if [ "$(od -An -c -j4 -N4 "$img" | tr -d ' ')" = zimg ]; then
		off=$(u32 "$img" 8)
		len=$(u32 "$img" 12)
		decompress_at "$img" "$off" "$len" >"$out" || return 1
	else
		decompress_at "$img" 0 >"$out" || cp "$img" "$out"
	fi
	# the arm64 Image header's magic "ARM\x64" at offset 56
	[ "$(od -An -tx1 -j56 -N4 "$out" | tr -d ' ')" = 41524d64 ]
}

IMAGE=${vmlinuz#"$TMP"/}
if [ "$KARCH" = arm64 ]; then
	msg "unpacking the arm64 Image from $(basename "$vmlinuz")"
	extract_arm64_image "$vmlinuz" "$TMP/Image" || die "$(basename "$vmlinuz") holds no arm64 Image"
	IMAGE=Image
elif how=$(msg "extracting vmlinux from $(basename "$vmlinuz")" >&2; extract_vmlinux "$vmlinuz" "$TMP/vmlinux"); then
	if has_pvh_note "$TMP/vmlinux"; then
		msg "vmlinux: ELF with PVH entry note, $(( $(stat -c %s "$TMP/vmlinux") / 1024 / 1024 )) MB ($how)"
		IMAGE=vmlinux
	else
		msg "vmlinux has no PVH note; qemu will boot the bzImage"
		rm -f "$TMP/vmlinux"
	fi
else
	msg "could not extract vmlinux; qemu will boot the bzImage"
fi

cat >"$TMP/info" <<EOF
# generated by selftests/qemu/fetch-kernel.sh
SLUICE_KNAME='$NAME'
SLUICE_KPKG='$PKG'
SLUICE_KPKG_VERSION='$PKGVER'
SLUICE_KVER='$KVER'
SLUICE_KMODDIR='$MODDIR'
SLUICE_KIMAGE='$IMAGE'
SLUICE_KBZIMAGE='${vmlinuz#"$TMP"/}'
EOF
touch "$TMP/.complete"

if [ -e "$KDIR" ]; then
	mv "$KDIR" "$KROOT/.$NAME.old.$$"
	mv "$TMP" "$KDIR"
	rm -rf "$KROOT/.$NAME.old.$$"
else
	mv "$TMP" "$KDIR"
fi
trap - EXIT
msg "done: $PKG $PKGVER, kernel $KVER in $KDIR ($(du -sh "$KDIR" | cut -f1))"
