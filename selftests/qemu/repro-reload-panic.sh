#!/bin/bash
# repro-reload-panic.sh [-k KERNEL] [-a ACCEL] [-n RELOADS] [-r RUNS]
#
# The reload stress of the netns suite (test_datapath.sh t_up t_reload:
# RELOADS `sluice reload`s while ping floods run LAN to LAN and LAN to WAN on
# the reference topology) in a guest, RUNS times, and a tally of the guests
# that panicked. Defaults: kernel 6.12, -accel tcg,thread=multi, 80 reloads,
# one run: the setting in which the 6.12 guest panics with "Oops: int3" at
# bpf_dispatcher_xdp_func+0xa (a TCG artifact; see the comment above
# run_qemu in run-in-guest.sh and selftests/qemu/README.md).
#
#   sudo selftests/qemu/repro-reload-panic.sh                  # reproduce
#   sudo selftests/qemu/repro-reload-panic.sh -a tcg,thread=single -r 3
#
# Exit status: 0 when no guest panicked, 1 when one did, 2 on bad usage.
# Every other failure (a lost ping, a failed reload) is printed and counted.
# Build with `make` first.
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
KERNEL=6.12 ACCEL=tcg,thread=multi RELOADS=80 RUNS=1

usage() { echo "usage: $0 [-k 6.1|6.12] [-a ACCEL] [-n RELOADS] [-r RUNS]" >&2; exit 2; }
while getopts k:a:n:r:h o; do
	case $o in
	k) KERNEL=$OPTARG ;;
	a) ACCEL=$OPTARG ;;
	n) RELOADS=$OPTARG ;;
	r) RUNS=$OPTARG ;;
	*) usage ;;
	esac
done
[ $OPTIND -gt $# ] || usage
case $RELOADS$RUNS in *[!0-9]*) usage ;; esac
[ "$(id -u)" = 0 ] || { echo "$0: needs root" >&2; exit 2; }
[ -x "$TOP/build/sluice" ] || { echo "$0: build/sluice is missing: run make first" >&2; exit 2; }

cd "$TOP" || exit 2
export SLUICE_QEMU_ACCEL=$ACCEL SLUICE_RELOADS=$RELOADS SLUICE_TEST_SLOWDOWN=${SLUICE_TEST_SLOWDOWN:-10}
export SLUICE_GUEST_ENV="SLUICE_RELOADS SLUICE_TEST_SLOWDOWN"
panics=0 failures=0 err=
trap '[ -n "$err" ] && rm -f "$err" "$err.out"' EXIT
for run in $(seq "$RUNS"); do
	echo "== run $run of $RUNS: $KERNEL, -accel $ACCEL -smp 2, $RELOADS reloads"
	start=$SECONDS
	err=$(mktemp /tmp/sluice-repro.XXXXXX)
	# The guest's PASS/FAIL lines stream as they come; the harness's
	# messages (GUEST FAILURE and the console tail) follow at the end.
	"$TOP/selftests/qemu/run-in-guest.sh" -t 1200 "$KERNEL" -- \
		bash selftests/netns/test_datapath.sh t_up t_reload 2>"$err" | tee "$err.out"
	rc=${PIPESTATUS[0]}
	grep -v '^fetch-kernel' "$err" >&2
	if grep -q '^GUEST FAILURE: .*Kernel panic' "$err"; then
		panics=$((panics + 1))
		echo "== run $run: KERNEL PANIC after $((SECONDS - start)) s"
	elif [ "$rc" != 0 ] || grep -q '^FAIL ' "$err.out"; then
		failures=$((failures + 1))
		echo "== run $run: failed (exit $rc) after $((SECONDS - start)) s"
	else
		echo "== run $run: no panic, $((SECONDS - start)) s"
	fi
	rm -f "$err" "$err.out"
done
echo "== $KERNEL -accel $ACCEL, $RELOADS reloads: $panics of $RUNS runs panicked, $failures other failures"
[ "$panics" = 0 ]
