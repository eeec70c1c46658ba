#!/bin/bash
# The Debian package: `make deb` on this machine (Debian 12)
# with lintian's verdict; then in a Debian 12 tree made with debootstrap
# (the archive from this machine's apt sources): dpkg -i, the files where
# they belong, the conffile, `systemd-analyze verify` of the unit; with a
# datapath loaded (in a namespace of the test's, at a pin of its own),
# `dpkg -r` tears it down whatever on-stop says; `dpkg -r` leaves only the
# conffile, `dpkg -P` nothing.
#
# The tree is kept in ${SLUICE_CACHE:-/var/cache/sluice}/bookworm-root
# (~1 min to make, ~300 MB) and reset between runs by dpkg itself.
set -u
# The root's mounts (/proc, /sys, /dev, /sys/fs/bpf bound in) stay in a
# mount namespace of this suite's own: the suites beside it read
# /proc/mounts (iproute2 pins into the bpffs it finds there, and once took
# this root's, which was going away: "mkdir .../sys/fs/bpf/xdp//globals").
[ -n "${SLUICE_OWN_MOUNTS:-}" ] ||
	SLUICE_OWN_MOUNTS=1 exec unshare -m --propagation private bash "$0" "$@"
SUITE=package
# shellcheck source=selftests/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
require_root

WHAT="the package installs into Debian 12"
DIST=bookworm DIST_NAME="Debian 12"
CACHE=${SLUICE_CACHE:-/var/cache/sluice}
ROOT=$CACHE/bookworm-root
# the package's run-time dependencies, systemd for systemd-analyze, man-db
# for its check of the unit's Documentation= pages
INCLUDE=systemd,libbpf1,libmnl0,libelf1,zlib1g,iproute2,nftables,procps,man-db
MARKER=.sluice-bookworm-root
failed=0
MOUNTED=()
TMPROOT=""
WORK=$(mktemp -d /tmp/sluice-pkg.XXXXXX)
TAG=$(unique_tag)
NS=$TAG-pkg
PIN=/sys/fs/bpf/sluice-$TAG

# shellcheck source=selftests/lib_debroot.sh
. "$TOP/selftests/lib_debroot.sh"

cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	[ -e "$PIN" ] && ip netns exec "$NS" "$SLUICE" -p "$PIN" down >/dev/null 2>&1
	rm -rf "$PIN"
	ip netns del "$NS" 2>/dev/null
	# a failed run must not leave the package in the cached tree
	[ -d "$ROOT/var/lib/dpkg" ] && chroot "$ROOT" dpkg -P sluice >/dev/null 2>&1
	unmount_ours
	remove_tree "$TMPROOT"
	rm -rf "$WORK"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# ---- make deb on Debian 12 ---------------------------------------------------------
t0=$SECONDS
if "$TOP/tools/mkdeb.sh" "$WORK/deb" >"$WORK/mkdeb.log" 2>&1; then
	DEB=$(ls "$WORK"/deb/sluice_*_amd64.deb)
	pass "make deb builds ${DEB##*/} on Debian 12 ($((SECONDS - t0)) s)"
else
	failx "make deb builds the package on Debian 12"
	tail -n 30 "$WORK/mkdeb.log" | indent
	exit 1
fi
# Tags the README explains ("The Debian package") are expected; any other
# error or warning fails.
EXPLAINED='^$'
tags=$(grep -E '^[EW]: ' "$WORK/deb/lintian.txt" | grep -Ev "$EXPLAINED")
[ -z "$tags" ] && pass "lintian: no errors or warnings" ||
	{ failx "lintian: no errors or warnings"; indent <<<"$tags"; }
contents=$(dpkg-deb -c "$DEB" | awk '{print $6}')
missing=""
for f in ./usr/sbin/sluice ./etc/sluice/sluice.conf ./lib/systemd/system/sluice.service \
	 ./usr/share/man/man8/sluice.8.gz ./usr/share/man/man5/sluice.conf.5.gz \
	 ./usr/share/bash-completion/completions/sluice; do
	grep -qx -- "$f" <<<"$contents" || missing="$missing ${f#.}"
done
[ -z "$missing" ] && pass "the package holds the binary, conffile, unit, man pages and completion" ||
	failx "the package holds the binary, conffile, unit, man pages and completion (missing:$missing)"
dpkg-deb -I "$DEB" conffiles 2>/dev/null | grep -qx /etc/sluice/sluice.conf &&
	pass "/etc/sluice/sluice.conf is a conffile" || failx "/etc/sluice/sluice.conf is a conffile"

# ---- the Debian 12 tree --------------------------------------------------------------
mkdir -p "$CACHE"
exec 9>"$CACHE/.bookworm-root.lock"
flock 9
for d in "$CACHE"/.bookworm-root.tmp.* "$CACHE"/.bookworm-root.old.*; do
	[ -e "$d" ] && remove_tree "$d"
done
[ -d "$ROOT" ] && umount_under "$ROOT"
ensure_root || exit "$failed"
chroot "$ROOT" dpkg -P sluice >/dev/null 2>&1	# left by a killed run

# Every file in the tree outside dpkg's own records, logs and caches.
snapshot() {
	(cd "$ROOT" && find . -xdev \( -path ./proc -o -path ./sys -o -path ./dev -o -path ./run \
		-o -path ./tmp -o -path ./var/lib/dpkg -o -path ./var/log -o -path ./var/cache \
		-o -path ./sys -o -name "$MARKER" \) -prune -o -print) | sort
}
snapshot > "$WORK/before"
mount_root || exit 1	# /proc, /sys, /dev (systemd-analyze, sluice)
cp "$DEB" "$ROOT/tmp/sluice.deb"
in_root dpkg -i /tmp/sluice.deb > "$WORK/install.log" 2>&1
rc=$?
[ $rc = 0 ] && pass "dpkg -i into a Debian 12 tree" ||
	{ failx "dpkg -i into a Debian 12 tree (exit $rc)"; indent < "$WORK/install.log"; exit 1; }
in_root sluice --help > "$WORK/help" 2>&1 && grep -q "^usage: sluice" "$WORK/help" &&
	pass "the installed sluice runs with Debian 12's libraries" ||
	{ failx "the installed sluice runs with Debian 12's libraries"; indent < "$WORK/help"; }
in_root sluice check > "$WORK/check" 2>&1 && grep -q "sluice.conf: ok" "$WORK/check" &&
	pass "sluice check passes on the installed /etc/sluice/sluice.conf" ||
	{ failx "sluice check passes on the installed /etc/sluice/sluice.conf"; indent < "$WORK/check"; }
in_root systemctl is-enabled sluice.service > "$WORK/enabled" 2>&1
grep -qx disabled "$WORK/enabled" &&
	pass "the unit is installed disabled (the example config must not take a box's ports)" ||
	failx "the unit is installed disabled ($(cat "$WORK/enabled"))"
in_root systemd-analyze verify /lib/systemd/system/sluice.service > "$WORK/verify" 2>&1
rc=$?
[ $rc = 0 ] && [ ! -s "$WORK/verify" ] && pass "systemd-analyze verify sluice.service: clean" ||
	{ failx "systemd-analyze verify sluice.service: clean (exit $rc)"; indent < "$WORK/verify"; }
in_root man -w sluice > /dev/null 2>&1 || [ -f "$ROOT/usr/share/man/man8/sluice.8.gz" ] &&
	pass "man pages installed" || failx "man pages installed"

# ---- dpkg -r with a datapath loaded: the remove script takes it down ----------------------
ip netns add "$NS"
ip -n "$NS" link add p0 type veth peer name p1
ip -n "$NS" link set p0 up
ip -n "$NS" link set p1 up
# (a veth stands for a NIC with native XDP: forced, as auto gives a veth tc)
printf 'zone lan {\n\tinterfaces p0\n}\non-stop keep\nport p0 mode xdp\n' > "$ROOT/tmp/t.conf"
mount --bind /sys/fs/bpf "$ROOT/sys/fs/bpf" 2>/dev/null && MOUNTED+=("$ROOT/sys/fs/bpf")
ip netns exec "$NS" "${CLEAN_ENV[@]}" SLUICE_PIN="$PIN" chroot "$ROOT" sluice up -c /tmp/t.conf \
	> "$WORK/up.log" 2>&1
in_ns_root() { ip netns exec "$NS" "${CLEAN_ENV[@]}" SLUICE_PIN="$PIN" chroot "$ROOT" "$@"; }
if [ -e "$PIN/sluice_meta" ] && ip -n "$NS" link show p0 | grep -q xdp; then
	# An upgrade (the same files as a newer version) keeps the datapath:
	# only removal takes it down. (The daemon's restart that follows an
	# upgrade under systemd is test_service's "restart under a ping".)
	mkdir -p "$WORK/up2"
	dpkg-deb -R "$DEB" "$WORK/up2/x" &&
		sed -i 's/^Version: .*/&+upgrade1/' "$WORK/up2/x/DEBIAN/control" &&
		dpkg-deb -b -Zxz "$WORK/up2/x" "$ROOT/tmp/sluice-up.deb" >/dev/null 2>&1
	id0=$(ip -n "$NS" -d link show p0 | sed -n 's/.*prog\/xdp id \([0-9]*\).*/\1/p')
	echo "# edited by the admin" >> "$ROOT/etc/sluice/sluice.conf"
	in_ns_root dpkg -i --force-confold /tmp/sluice-up.deb > "$WORK/upgrade.log" 2>&1
	rc=$?
	id1=$(ip -n "$NS" -d link show p0 | sed -n 's/.*prog\/xdp id \([0-9]*\).*/\1/p')
	[ $rc = 0 ] && [ -e "$PIN/sluice_meta" ] && [ -n "$id0" ] && [ "$id0" = "$id1" ] &&
		in_root dpkg-query -W -f='${Version}' sluice | grep -q 'upgrade1$' &&
		tail -n 1 "$ROOT/etc/sluice/sluice.conf" | grep -q "edited by the admin" &&
		pass "an upgrade keeps the datapath forwarding (same XDP program $id0) and the edited conffile" ||
		{ failx "an upgrade keeps the datapath forwarding and the edited conffile (exit $rc, prog $id0 -> $id1)"; indent < "$WORK/upgrade.log"; }
	rm -f "$ROOT/tmp/sluice-up.deb"
	in_ns_root dpkg -r sluice \
		> "$WORK/remove.log" 2>&1
	rc=$?
	[ $rc = 0 ] && [ ! -e "$PIN" ] && ! ip -n "$NS" link show p0 | grep -q xdp &&
		pass "dpkg -r takes the datapath down (pins and XDP gone; on-stop keep notwithstanding)" ||
		{ failx "dpkg -r takes the datapath down (exit $rc, pin $([ -e "$PIN" ] && echo left || echo gone))"; indent < "$WORK/remove.log"; }
else
	failx "the installed sluice brings a datapath up in the tree"; indent < "$WORK/up.log"
	in_root dpkg -r sluice > "$WORK/remove.log" 2>&1
fi
rm -f "$ROOT/tmp/t.conf"
snapshot > "$WORK/removed"
left=$(comm -13 "$WORK/before" "$WORK/removed")
# (deb-systemd-helper keeps whether the unit was enabled until the purge,
# as for every package with a unit)
[ "$left" = "$(printf './etc/sluice\n./etc/sluice/sluice.conf\n./var/lib/systemd/deb-systemd-helper-enabled/sluice-web.service.dsh-also\n./var/lib/systemd/deb-systemd-helper-enabled/sluice.service.dsh-also')" ] &&
	pass "dpkg -r leaves only the conffile (and deb-systemd-helper's record, until the purge)" ||
	{ failx "dpkg -r leaves only the conffile"; indent <<<"$left"; }
in_root dpkg -P sluice > "$WORK/purge.log" 2>&1
snapshot > "$WORK/purged"
diff "$WORK/before" "$WORK/purged" > "$WORK/purge.diff"
[ ! -s "$WORK/purge.diff" ] && ! in_root dpkg -s sluice >/dev/null 2>&1 &&
	pass "dpkg -P leaves nothing behind" ||
	{ failx "dpkg -P leaves nothing behind"; indent < "$WORK/purge.diff"; indent < "$WORK/purge.log"; }
exit "$failed"
