#!/bin/bash
# The guests' kernel downloads (fetch-kernel.sh) as a fresh machine makes
# them, in a cache of this suite's own (a temp dir; the machine's cache is
# left alone):
# 1. Kernels of one Debian release fetched at once on an empty cache: 6.12
#    twice (two callers of one kernel, as make check's prefetch and a
#    guest's run) and arm64-6.12 (the release's other architecture, from
#    lists of its own). All three succeed and leave a complete cache.
# 2. Where the archive cannot be reached (a network namespace with only a
#    loopback, like a test's router namespace): the fetch fails within a
#    bound, in an error that gives apt's reason, not "no package".
# About 200 MB of downloads; 30-60 s.
#
#   selftests/qemu/test_fetch.sh          (root)
SUITE=fetch
# shellcheck source=selftests/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
require_root
# shellcheck source=selftests/apt_sources.sh
. "$TOP/selftests/apt_sources.sh"

FETCH=$TOP/selftests/qemu/fetch-kernel.sh
LIMIT=${SLUICE_FETCH_TIMEOUT:-300}	# one fetch (alone: 15-25 s)
WORK=$(mktemp -d /var/tmp/sluice-fetch.XXXXXX) || { fail "a temp dir in /var/tmp"; exit 1; }
NS=""
PIDS=()
# shellcheck disable=SC2317 # run by the trap
cleanup() {
	local rc=$? p
	trap - EXIT INT TERM
	for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null; done
	for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
	[ -n "$NS" ] && ip netns del "$NS" 2>/dev/null
	rm -rf "$WORK"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

if [ -z "$(debian_mirror)" ]; then
	skip "kernel downloads: no Debian archive in this machine's apt sources"
	exit 0
fi
avail_kb=$(df -Pk "$WORK" | awk 'NR == 2 { print $4 }')
if [ "${avail_kb:-0}" -lt $((1536 * 1024)) ]; then
	skip "kernel downloads: less than 1.5 GB free in /var/tmp ($((${avail_kb:-0} / 1024)) MB); they need ~0.5 GB"
	exit 0
fi

# ---- 1. one release's kernels at once, on an empty cache ----
CACHE=$WORK/cache
mkdir -p "$CACHE"
names=(6.12 6.12 arm64-6.12)
t0=$SECONDS
for i in "${!names[@]}"; do
	SLUICE_CACHE=$CACHE timeout -k 10 "$LIMIT" "$FETCH" "${names[i]}" >"$WORK/fetch.$i.log" 2>&1 </dev/null &
	PIDS+=($!)
done
bad=()
for i in "${!names[@]}"; do
	wait "${PIDS[i]}"
	rc=$?
	case $rc in
	0) ;;
	124 | 137) bad+=("${names[i]} (#$i) timed out after ${LIMIT}s") ;;
	*) bad+=("${names[i]} (#$i) exited with status $rc: $(grep -m1 'ERROR: ' "$WORK/fetch.$i.log" || tail -n 1 "$WORK/fetch.$i.log")") ;;
	esac
done
PIDS=()
what="three fetches at once on an empty cache (6.12 twice, arm64-6.12: one Debian release, two architectures)"
if [ ${#bad[@]} = 0 ]; then
	pass "$what all succeed ($((SECONDS - t0)) s)"
else
	fail "$what all succeed: $(printf '%s; ' "${bad[@]}")"
	for i in "${!names[@]}"; do
		echo "    --- fetch-kernel.sh ${names[i]} (#$i):"
		detail "$WORK/fetch.$i.log"
	done
fi

# complete: the marker, an info that names the image, the image itself,
# and nothing left over from a run's temp dirs
incomplete=()
got=()
for k in 6.12 arm64-6.12; do
	d=$CACHE/kernels/$k
	if [ ! -f "$d/.complete" ] || [ ! -s "$d/info" ]; then
		incomplete+=("$k: no .complete or info")
		continue
	fi
	# shellcheck disable=SC1091
	img=$(. "$d/info" && echo "$SLUICE_KIMAGE")
	kp=$(. "$d/info" && echo "$SLUICE_KPKG $SLUICE_KPKG_VERSION")
	if [ -z "$img" ] || [ ! -s "$d/$img" ]; then
		incomplete+=("$k: info names no image that exists ('$img')")
		continue
	fi
	got+=("$k: $kp")
done
left=$(find "$CACHE/kernels" -maxdepth 1 \( -name '.*.tmp.*' -o -name '.*.old.*' \) 2>/dev/null | tr '\n' ' ')
[ -n "$left" ] && incomplete+=("left behind: $left")
if [ ${#incomplete[@]} = 0 ]; then
	pass "the cache is complete (.complete, info, the image): $(printf '%s, ' "${got[@]}" | sed 's/, $//')"
else
	fail "the cache is complete (.complete, info, the image): $(printf '%s; ' "${incomplete[@]}")"
	ls -la "$CACHE/kernels" "$CACHE/kernels"/* 2>&1 | tail -n 20 | sed 's/^/    /'
fi
rm -rf "$CACHE"

# ---- 2. no way to the archive ----
NS=$(unique_tag)-fetch
if ! ip netns add "$NS" 2>"$WORK/ns.err" || ! ip -n "$NS" link set lo up 2>>"$WORK/ns.err"; then
	fail "a network namespace for the unreachable archive"; detail "$WORK/ns.err"
	exit 1
fi
mkdir -p "$WORK/cache2"
t0=$SECONDS
SLUICE_CACHE=$WORK/cache2 timeout -k 10 120 ip netns exec "$NS" "$FETCH" 6.12 >"$WORK/nonet.log" 2>&1 </dev/null &
PIDS+=($!)
wait "${PIDS[0]}"
rc=$?
PIDS=()
err=$(grep -m1 'ERROR: ' "$WORK/nonet.log")
what="a fetch that cannot reach the archive fails in bounded time, with apt's reason"
case $rc in
1)	# apt's own lines ("E: Failed to fetch ...") in the error
	if grep -q 'ERROR: apt-get update .*failed: .*E: ' <<<"$err"; then
		pass "$what ($((SECONDS - t0)) s: ${err#*ERROR: })"
	else
		fail "$what (${err:-no ERROR line})"; detail "$WORK/nonet.log"
	fi ;;
124 | 137) fail "$what (it ran for the whole 120 s)"; detail "$WORK/nonet.log" ;;
0) fail "$what (it succeeded in a namespace with only a loopback)"; detail "$WORK/nonet.log" ;;
*) fail "$what (exit status $rc, not 1: ${err:-no ERROR line})"; detail "$WORK/nonet.log" ;;
esac
