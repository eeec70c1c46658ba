#!/bin/bash
# Builds sluice with Debian 13's (trixie) toolchain and runs the unit tests
# built that way, so both Debian 12 and 13 users can build from source.
#
#   selftests/toolchain/test_trixie_build.sh          (root)
#
# 1. A trixie build root (debootstrap minbase + the build packages) is kept in
#    ${SLUICE_CACHE:-/var/cache/sluice}/trixie-root. It is built in a temp dir
#    beside it and renamed when complete; its marker file records what was
#    asked for, and a different package list rebuilds it (~1-2 min, ~800 MB).
# 2. The project's files (git-tracked + untracked non-ignored) are copied to
#    /build-src-PID inside the root and built with `make -j2 all` there, in a
#    clean environment (the Makefile has -Werror; any other warning fails too).
# 3. With /proc, /sys and /dev mounted in the root, build/test_xdp and
#    build/test_config run inside it (libbpf 1.5 loading the programs); their
#    lines come out as "PASS trixie-xdp: ..." / "PASS trixie-config: ...".
#
# Prints "PASS toolchain: ..." or "FAIL toolchain: ..." (indented build log
# after it), or "SKIP toolchain: ..." when the Debian archive can't be reached
# to create the root. Exits 1 if any FAIL line was printed.
#
# Environment: SLUICE_CACHE (cache root). The Debian archive is the one in
# the machine's own apt sources (selftests/lib_debroot.sh).
set -u
# The root's mounts (/proc, /sys, /dev, /sys/fs/bpf bound in) stay in a
# mount namespace of this suite's own: the suites beside it read
# /proc/mounts (iproute2 pins into the bpffs it finds there, and once took
# this root's, which was going away: "mkdir .../sys/fs/bpf/xdp//globals").
[ -n "${SLUICE_OWN_MOUNTS:-}" ] ||
	SLUICE_OWN_MOUNTS=1 exec unshare -m --propagation private bash "$0" "$@"
SUITE=toolchain
# shellcheck source=selftests/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

WHAT="Debian 13 toolchain builds sluice"
DIST=trixie DIST_NAME="Debian 13"
CACHE=${SLUICE_CACHE:-/var/cache/sluice}
ROOT=$CACHE/trixie-root
# iproute2: the packet fixtures build their own ports and routes with ip(8);
# build-essential, debhelper, dpkg-dev, fakeroot: the package build (make deb).
INCLUDE=clang,llvm,libbpf-dev,bpftool,libmnl-dev,libelf-dev,zlib1g-dev,make,pkg-config,gcc,libc6-dev,iproute2,build-essential,debhelper,dpkg-dev,fakeroot
MARKER=.sluice-trixie-root	# in the root; written last, before the rename

require_root

failed=0
MOUNTED=()	# mount points this run made, in order
TMPROOT=""	# root being built (removed unless renamed into place)
SRC=""		# copied sources inside the root
WORK=$(mktemp -d /tmp/sluice-trixie.XXXXXX)

# shellcheck source=selftests/lib_debroot.sh
. "$TOP/selftests/lib_debroot.sh"

# shellcheck disable=SC2317 # run by the trap
cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	unmount_ours
	remove_tree "$SRC"
	rm -f "$ROOT"/sluice_* "$ROOT"/sluice-dbgsym_*	# a package build cut short
	remove_tree "$TMPROOT"
	rm -rf "$WORK"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# run_unit NAME BINARY: run a unit test binary in the root; its PASS/FAIL/SKIP
# lines come out with the suite renamed to trixie-NAME, other output indented.
run_unit() {
	local name=$1 bin=$2 out=$WORK/$1.out rc
	in_root sh -c "cd /${SRC##*/} && ./$bin" >"$out" 2>&1
	rc=$?
	sed -E -e "s/^(PASS|FAIL|SKIP|#) $name: /\1 trixie-$name: /" \
		-e '/^(PASS|FAIL|SKIP) |^[[:space:]#]|^$/!s/^/    /' "$out"
	if grep -q '^FAIL ' "$out"; then
		failed=1
	elif [ $rc != 0 ]; then
		failx "trixie-$name: $bin exited with status $rc"
	elif ! grep -q '^PASS ' "$out"; then
		failx "trixie-$name: $bin printed no PASS line"
	fi
}

# ------------------------------------------------------------------ main
mkdir -p "$CACHE"
exec 9>"$CACHE/.trixie-root.lock"
if ! flock -n 9; then
	info "waiting for another run that holds $CACHE/.trixie-root.lock"
	flock 9
fi
# Holding the lock, anything left by an earlier run is stale.
for d in "$CACHE"/.trixie-root.tmp.* "$CACHE"/.trixie-root.old.* "$ROOT"/build-src-*; do
	[ -e "$d" ] && remove_tree "$d"
done
[ -d "$ROOT" ] && umount_under "$ROOT"

ensure_root || exit "$failed"

clang_v=$(in_root clang --version 2>/dev/null | sed -nE '1s/.*clang version ([0-9][0-9.]*).*/\1/p')
libbpf_v=$(in_root pkg-config --modversion libbpf 2>/dev/null)
bpftool_v=$(in_root bpftool version 2>/dev/null | sed -nE '1s/^bpftool (v[0-9][0-9.]*).*/\1/p')
if [ -z "$clang_v" ] || [ -z "$libbpf_v" ] || [ -z "$bpftool_v" ]; then
	failx "$WHAT: the build root $ROOT is broken (clang '${clang_v}', libbpf '${libbpf_v}', bpftool '${bpftool_v}'); remove it to rebuild"
	exit 1
fi
VERSIONS="clang $clang_v, libbpf $libbpf_v, bpftool $bpftool_v"

# Copy the sources: tracked (still present) + untracked non-ignored files.
SRC=$ROOT/build-src-$$
mkdir -p "$SRC"
if ! git -c safe.directory="$TOP" -C "$TOP" ls-files -z -co --exclude-standard >"$WORK/files" 2>"$WORK/git.err"; then
	failx "$WHAT: cannot list the sources with git in $TOP"
	indent <"$WORK/git.err"
	exit 1
fi
while IFS= read -r -d '' f; do
	[ -e "$TOP/$f" ] || [ -L "$TOP/$f" ] && printf '%s\0' "$f"
done <"$WORK/files" | sort -zu >"$WORK/files.present"
if ! tar -C "$TOP" --null -T "$WORK/files.present" -cf - | tar -C "$SRC" -xf -; then
	failx "$WHAT: cannot copy the sources into $SRC"
	exit 1
fi

info "building in $ROOT (${SRC#"$ROOT"}) with $VERSIONS"
t0=$SECONDS
in_root sh -c "cd /${SRC##*/} && make -j2 all" >"$WORK/build.log" 2>&1
rc=$?
if [ $rc != 0 ]; then
	failx "$WHAT ($VERSIONS): make all failed with status $rc"
	tail -n 30 "$WORK/build.log" | indent
	exit 1
fi
# -Werror covers the compilers; libbpf, bpftool and the linker warn too.
if grep -Eqi 'warning:|^libbpf: ' "$WORK/build.log"; then
	failx "$WHAT ($VERSIONS): the build printed warnings"
	grep -Ei -B 2 -A 3 'warning:|^libbpf: ' "$WORK/build.log" | tail -n 30 | indent
	exit 1
fi
pass "$WHAT ($VERSIONS)"
info "built in $((SECONDS - t0)) s"

mount_root || exit 1
run_unit xdp build/test_xdp
run_unit config build/test_config

# The package builds there too (the host, Debian 12, builds it in the
# package suite). dpkg-buildpackage writes beside the source folder.
t0=$SECONDS
if in_root sh -c "cd /${SRC##*/} && dpkg-buildpackage -us -uc -b -j2" >"$WORK/deb.log" 2>&1 &&
   ls "$ROOT"/sluice_*_amd64.deb >/dev/null 2>&1; then
	pass "Debian 13 builds the package (dpkg-buildpackage, $((SECONDS - t0)) s)"
else
	failx "Debian 13 builds the package (dpkg-buildpackage)"
	tail -n 30 "$WORK/deb.log" | indent
fi
rm -f "$ROOT"/sluice_* "$ROOT"/sluice-dbgsym_*
exit "$failed"
