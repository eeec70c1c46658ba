# Debian roots made with debootstrap, kept in a cache between runs, for
# the toolchain and package suites. The caller sets:
#   DIST (bookworm, trixie), DIST_NAME ("Debian 12"), INCLUDE (packages,
#   comma-separated), CACHE, ROOT, MARKER (file in the root recording what
#   it was made from), WHAT (the test's name for messages), WORK (temp dir),
#   MOUNTED=() and TMPROOT="" (cleaned up by the caller's trap), failed=0
#   (failx sets it). MIRROR is set here from the machine's own
#   apt sources (no address is written into the repository).
info() { echo "# $SUITE: $*"; }
failx() { fail "$@"; failed=1; }
indent() { sed 's/^/    /'; }
CLEAN_ENV=(env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LC_ALL=C)

# shellcheck source=selftests/apt_sources.sh
. "$TOP/selftests/apt_sources.sh"
MIRROR=$(debian_mirror)

# The key of a root: what it was built from. Comment lines are not compared.
marker_key() {
	printf 'format=1\nsuite=%s\nvariant=minbase\ninclude=%s\n' "$DIST" "$INCLUDE"
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

# unmount_ours: what this run mounted (MOUNTED), in reverse order.
unmount_ours() {
	local i
	for ((i = ${#MOUNTED[@]} - 1; i >= 0; i--)); do
		umount "${MOUNTED[i]}" 2>/dev/null || umount -l "${MOUNTED[i]}" 2>/dev/null ||
			echo "# $SUITE: warning: cannot unmount ${MOUNTED[i]}" >&2
	done
}

# in_root CMD...: run CMD inside the root with a clean environment. fd 9
# (the cache lock) is not inherited, so a stray child can't keep the lock.
in_root() { "${CLEAN_ENV[@]}" chroot "$ROOT" "$@" 9>&-; }

# ------------------------------------------------------------ the build root
ensure_root() {
	local t0 log reason
	root_is_current "$ROOT" && return 0

	if [ -z "$MIRROR" ]; then
		skip "$WHAT: no Debian archive in this machine's apt sources to make the $DIST_NAME root from"
		return 1
	fi
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

	TMPROOT=$CACHE/.$DIST-root.tmp.$$
	remove_tree "$TMPROOT"
	mkdir -p "$TMPROOT"
	log=$WORK/debootstrap.log
	# Bounded network waits: wget's defaults (20 tries, 900 s read timeout)
	# would turn an unreachable archive into a hang instead of a SKIP.
	printf 'tries = 3\ntimeout = 30\n' >"$WORK/wgetrc"
	if [ -e "$ROOT" ]; then
		info "the build root in $ROOT was made for another package list: rebuilding it"
	fi
	info "creating the $DIST_NAME root in $ROOT (debootstrap $DIST from $MIRROR: a minute or two, ~800 MB)"
	t0=$SECONDS
	if ! WGETRC=$WORK/wgetrc LC_ALL=C debootstrap --variant=minbase --include="$INCLUDE" \
		"$DIST" "$TMPROOT" "$MIRROR" >"$log" 2>&1 9>&-; then
		# Download stage: release file, its signature, the index or a package.
		reason=$(grep -E "^E: (Failed getting release|Couldn't download)" "$log" | head -n 1)
		if [ -n "$reason" ]; then
			skip "$WHAT: cannot create the $DIST_NAME root: the Debian archive $MIRROR is unreachable (debootstrap failed downloading: ${reason#E: })"
		else
			failx "$WHAT: debootstrap $DIST failed"
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
		echo "# sluice selftests: a complete $DIST_NAME root."
		echo "# Made $(date -u +%Y-%m-%dT%H:%M:%SZ) from $MIRROR in $((SECONDS - t0)) s."
		# shellcheck disable=SC2016 # dpkg-query's format, not shell
		"${CLEAN_ENV[@]}" chroot "$TMPROOT" dpkg-query -W -f='# ${Package} ${Version}\n' \
			${INCLUDE//,/ } 2>/dev/null
		marker_key
	} >"$TMPROOT/$MARKER"

	if [ -e "$ROOT" ]; then
		local old=$CACHE/.$DIST-root.old.$$
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

