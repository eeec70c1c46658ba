#!/bin/bash
# The .deb for this machine's architecture installed on the machine itself
# with dpkg, as a user installs it; run only inside a guest, whose root is
# thrown away when it powers off (selftests/qemu). selftests/run.sh then
# runs the guest's other suites with the installed /usr/sbin/sluice.
#
# The package's build, lintian, install and removal in a Debian 12 tree
# are test_package.sh's (host); this is the package on another architecture
# and kernel: arm64 on Debian's arm64 kernels.
SUITE=package
. "$(dirname "$0")/../lib.sh"
require_root
if [ "${SLUICE_GUEST:-0}" != 1 ]; then
	skip "installing the .deb: runs only in a guest (it installs into the running system)"
	exit 0
fi
ARCH=$(dpkg --print-architecture)
DEB=$(ls "$TOP"/build/deb/sluice_*_"$ARCH".deb 2>/dev/null | head -n 1)
if [ -z "$DEB" ]; then
	fail "installing the .deb: no build/deb/sluice_*_$ARCH.deb (make deb${ARCH:+ ARCH=$ARCH})"
	exit 1
fi
WORK=$(mktemp -d /tmp/sluice-installed.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

if dpkg -i "$DEB" >"$WORK/dpkg.log" 2>&1 &&
	[ "$(dpkg-query -W -f='${Status}' sluice 2>/dev/null)" = "install ok installed" ]; then
	pass "dpkg -i $(basename "$DEB"): installed, its dependencies ($(dpkg-query -W -f='${Depends}' sluice)) met"
else
	fail "dpkg -i $(basename "$DEB")"
	detail "$WORK/dpkg.log"
	exit 1
fi

file_arch() { # the ELF machine of FILE: 183 is aarch64, 62 x86-64
	od -An -tu2 -j18 -N2 "$1" | tr -d ' '
}
want=62
[ "$ARCH" = arm64 ] && want=183
got=$(file_arch /usr/sbin/sluice)
if [ "$got" = "$want" ] && /usr/sbin/sluice --help >"$WORK/help" 2>&1 && grep -q '^commands:' "$WORK/help"; then
	pass "/usr/sbin/sluice is an $ARCH program (ELF machine $got) and runs ($(uname -m), kernel $(uname -r))"
else
	fail "/usr/sbin/sluice is an $ARCH program that runs (ELF machine ${got:-?}, want $want)"
	detail "$WORK/help"
fi

if /usr/sbin/sluice check -c /etc/sluice/sluice.conf >"$WORK/check" 2>&1; then
	pass "the shipped /etc/sluice/sluice.conf passes 'sluice check'"
else
	fail "the shipped /etc/sluice/sluice.conf passes 'sluice check'"
	detail "$WORK/check"
fi

missing=
for f in /usr/share/man/man8/sluice.8.gz /usr/share/man/man5/sluice.conf.5.gz \
	/lib/systemd/system/sluice.service /usr/share/bash-completion/completions/sluice; do
	[ -e "$f" ] || missing="$missing $f"
done
if [ -z "$missing" ]; then
	pass "the man pages, the systemd units and the completion are in place"
else
	fail "the man pages, the systemd units and the completion are in place (missing:$missing)"
fi
