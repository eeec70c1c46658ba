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
# Environment: SLUICE_CACHE (cache root), SLUICE_TRIXIE_MIRROR (default
# http://deb.debian.org/debian).
set -u
SUITE=toolchain
# shellcheck source=selftests/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

WHAT="Debian 13 toolchain builds sluice"
CACHE=${SLUICE_CACHE:-/var/cache/sluice}
ROOT=$CACHE/trixie-root
MIRROR=${SLUICE_TRIXIE_MIRROR:-http://deb.debian.org/debian}
# iproute2: the packet fixtures build their own ports and routes with ip(8).
INCLUDE=clang,llvm,libbpf-dev,bpftool,libmnl-dev,libelf-dev,zlib1g-dev,make,pkg-config,gcc,libc6-dev,iproute2
MARKER=.sluice-trixie-root	# in the root; written last, before the rename
CLEAN_ENV=(env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LC_ALL=C)

require_root

failed=0
MOUNTED=()	# mount points this run made, in order
TMPROOT=""	# root being built (removed unless renamed into place)
SRC=""		# copied sources inside the root
WORK=$(mktemp -d /tmp/sluice-trixie.XXXXXX)

info() { echo "# $SUITE: $*"; }
failx() { fail "$@"; failed=1; }
indent() { sed 's/^/    /'; }

# The key of a root: what it was built from. Comment lines are not compared.
marker_key() {
	printf 'format=1\nsuite=trixie\nvariant=minbase\ninclude=%s\n' "$INCLUDE"
}
root_is_current() {
	[ -f "$1/$MARKER" ] && [ "$(grep -v '^#' "$1/$MARKER")" = "$(marker_key)" ]
}

# umount_under DIR: unmount everything mounted at or below DIR, deepest first
# (leftovers of a killed run or of debootstrap itself).
umount_under() {
	local dir m
	dir=$(realpath -m "$1")
	awk '{ print $5 }' /proc/self/mountinfo | while read -r m; do
		m=$(printf '%b' "$m")	# mountinfo escapes space etc. as \040
		case $m in "$dir" | "$dir"/*) echo "$m" ;; esac
	done | sort -r | while read -r m; do
		umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null ||
			echo "# $SUITE: warning: cannot unmount $m" >&2
	done
}

# remove_tree DIR: never follows a mount into the host (a bound /dev ...).
remove_tree() {
	[ -n "$1" ] && [ -e "$1" ] || return 0
	umount_under "$1"
	rm -rf --one-file-system "$1"
}

# shellcheck disable=SC2317 # run by the trap
cleanup() {
	local rc=$? i
	trap - EXIT INT TERM
	for ((i = ${#MOUNTED[@]} - 1; i >= 0; i--)); do
		umount "${MOUNTED[i]}" 2>/dev/null || umount -l "${MOUNTED[i]}" 2>/dev/null ||
			echo "# $SUITE: warning: cannot unmount ${MOUNTED[i]}" >&2
	done
	remove_tree "$SRC"
	remove_tree "$TMPROOT"
	rm -rf "$WORK"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# in_root CMD...: run CMD inside the root with a clean environment. fd 9
# (the cache lock) is not inherited, so a stray child can't keep the lock.
in_root() { "${CLEAN_ENV[@]}" chroot "$ROOT" "$@" 9>&-; }

# ------------------------------------------------------------ the build root
ensure_root() {
	local t0 log reason
	root_is_current "$ROOT" && return 0

	if ! command -v debootstrap >/dev/null 2>&1; then
		failx "$WHAT: debootstrap is missing (Debian package 'debootstrap'; make deps)"
		return 1
	fi
	local avail_kb
	avail_kb=$(df -Pk "$CACHE" | awk 'NR == 2 { print $4 }')
	if [ "${avail_kb:-0}" -lt $((1536 * 1024)) ]; then
		failx "$WHAT: less than 1.5 GB free in $CACHE ($((${avail_kb:-0} / 1024)) MB); the root needs ~0.75 GB"
		return 1
	fi

	TMPROOT=$CACHE/.trixie-root.tmp.$$
	remove_tree "$TMPROOT"
	mkdir -p "$TMPROOT"
	log=$WORK/debootstrap.log
	# Bounded network waits: wget's defaults (20 tries, 900 s read timeout)
	# would turn an unreachable archive into a hang instead of a SKIP.
	printf 'tries = 3\ntimeout = 30\n' >"$WORK/wgetrc"
	if [ -e "$ROOT" ]; then
		info "the build root in $ROOT was made for another package list: rebuilding it"
	fi
	info "creating the Debian 13 build root in $ROOT (debootstrap trixie from $MIRROR: a minute or two, ~800 MB)"
	t0=$SECONDS
	if ! WGETRC=$WORK/wgetrc LC_ALL=C debootstrap --variant=minbase --include="$INCLUDE" \
		trixie "$TMPROOT" "$MIRROR" >"$log" 2>&1 9>&-; then
		# Download stage: release file, its signature, the index or a package.
		reason=$(grep -E "^E: (Failed getting release|Couldn't download)" "$log" | head -n 1)
		if [ -n "$reason" ]; then
			skip "$WHAT: cannot create the Debian 13 build root: the Debian archive $MIRROR is unreachable (debootstrap failed downloading: ${reason#E: })"
		else
			failx "$WHAT: debootstrap trixie failed"
			{
				tail -n 30 "$log"
				if [ -f "$TMPROOT/debootstrap/debootstrap.log" ]; then
					echo "--- $TMPROOT/debootstrap/debootstrap.log:"
					tail -n 15 "$TMPROOT/debootstrap/debootstrap.log"
				fi
			} | indent
		fi
		return 1
	fi
	umount_under "$TMPROOT"	# debootstrap unmounts its /proc, /sys; be sure

	# The downloaded .debs, if debootstrap left any, are not needed.
	rm -f "$TMPROOT"/var/cache/apt/archives/*.deb
	{
		echo "# sluice selftests/toolchain: a complete Debian 13 build root."
		echo "# Made $(date -u +%Y-%m-%dT%H:%M:%SZ) from $MIRROR in $((SECONDS - t0)) s."
		# shellcheck disable=SC2016 # dpkg-query's format, not shell
		"${CLEAN_ENV[@]}" chroot "$TMPROOT" dpkg-query -W \
			-f='# ${Package} ${Version}\n' clang-19 llvm-19 libbpf-dev bpftool gcc libc6-dev \
			2>/dev/null
		marker_key
	} >"$TMPROOT/$MARKER"

	if [ -e "$ROOT" ]; then
		local old=$CACHE/.trixie-root.old.$$
		mv "$ROOT" "$old"
		mv "$TMPROOT" "$ROOT"
		remove_tree "$old"
	else
		mv "$TMPROOT" "$ROOT"
	fi
	TMPROOT=""
	info "build root ready in $((SECONDS - t0)) s: $(du -sh --one-file-system "$ROOT" | cut -f1) in $ROOT"
}

mount_root() {
	local d
	for d in proc sys dev; do
		mkdir -p "$ROOT/$d"
		case $d in
		proc) mount -t proc proc "$ROOT/proc" 2>/dev/null || mount --bind /proc "$ROOT/proc" ;;
		*) mount --bind "/$d" "$ROOT/$d" ;;	# not rbind: nothing below it
		esac || { failx "$WHAT: cannot mount /$d in $ROOT"; return 1; }
		MOUNTED+=("$ROOT/$d")
	done
}

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
exit "$failed"
