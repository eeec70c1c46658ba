#!/bin/bash
# Runs every test suite and prints one summary line: "N passed, N failed"
# (", N skipped" when there are skips, each listed with its reason above).
#
#   selftests/run.sh [--kernels "host 6.1 6.12"] [--suites "unit netns toolchain"]
#
# Kernels: host is this machine's; 6.1 (Debian 12) and 6.12 (Debian 13) are
# stock Debian kernels booted under qemu by selftests/qemu/run-in-guest.sh.
# Suites: unit (config parser, man pages and completion, packet fixtures),
# netns (reference topology, CLI), toolchain (build, unit tests and the
# package with Debian 13's clang/libbpf, host only), package (make deb,
# lintian, install and removal in a Debian 12 tree, host only).
#
# A suite prints PASS/FAIL/SKIP lines; a suite that dies or times out
# without saying FAIL counts as one failure. Guest kernels run this same
# script inside qemu (selftests/qemu) and their lines are counted here,
# tagged with the kernel.
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
KERNELS=${KERNELS:-"host 6.1 6.12"}
SUITES=${SUITES:-"unit netns tcmode toolchain package"}
LABEL=host
SUITE_TIMEOUT=${SUITE_TIMEOUT:-600}
GUEST_TIMEOUT=${GUEST_TIMEOUT:-1800}	# a whole guest run: boot and every suite (1300-1500 s lately)

while [ $# -gt 0 ]; do
	case $1 in
	--kernels) KERNELS=$2; shift 2 ;;
	--suites) SUITES=$2; shift 2 ;;
	--label) LABEL=$2; shift 2 ;;	# used inside a guest
	*) echo "usage: $0 [--kernels LIST] [--suites LIST]" >&2; exit 2 ;;
	esac
done

export SLUICE_KERNEL=$LABEL	# suites may hold a guest kernel to more
LOG=$(mktemp /tmp/sluice-check.XXXXXX)
trap 'rm -f "$LOG"' EXIT

# run_suite NAME TIMEOUT CMD...: run with a deadline, stream its lines
# tagged with the kernel, keep them in the log. timeout puts the suite in a
# process group of its own, so its deadline reaches every child; Ctrl-C
# becomes a SIGTERM to that group (SIGINT is ignored in background jobs),
# which the suites trap to clean up.
SUITE_PID=
on_interrupt() {
	[ -n "$SUITE_PID" ] && kill -TERM -- "-$SUITE_PID" 2>/dev/null && wait "$SUITE_PID"
	echo "interrupted"
	exit 130
}
trap on_interrupt INT TERM

run_suite() {
	local name=$1 limit=$2 rc out start=$SECONDS
	shift 2
	out=$(mktemp /tmp/sluice-suite.XXXXXX)
	timeout --kill-after=10 "$limit" "$@" >"$out" 2>&1 </dev/null &
	SUITE_PID=$!
	# (-n +1: from the first line; tail's default, the last ten, lost
	# whatever a fast suite wrote before tail opened the file)
	tail -n +1 -s 0.2 --pid="$SUITE_PID" -f "$out" |
		sed -u "s/^\(PASS\|FAIL\|SKIP\) \([^[]\)/\1 [$LABEL] \2/" | tee -a "$LOG"
	wait "$SUITE_PID"
	rc=$?
	SUITE_PID=
	# A guest that panicked or hung fails the run in its own line, even
	# after other failures: its later suites never ran.
	if { [ "$rc" = 124 ] || [ "$rc" = 125 ]; } && grep -q '^GUEST FAILURE: ' "$out"; then
		# (with the kernel's complaint and the guest's last test line:
		# the end of the output may be all a CI log keeps)
		echo "FAIL [$LABEL] $name: $(grep -m1 '^GUEST FAILURE: ' "$out")" \
			"$(sed -n 's/^GUEST OOPS: /-- /p' "$out" | head -n1)" \
			"-- last guest line: $(grep -E '^(PASS|FAIL|SKIP|#) ' "$out" | tail -n1)" | tee -a "$LOG"
	elif [ "$rc" != 0 ] && ! grep -q '^FAIL ' "$out"; then
		if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
			echo "FAIL [$LABEL] $name: timed out after ${limit}s" | tee -a "$LOG"
		else
			echo "FAIL [$LABEL] $name: exited with status $rc" | tee -a "$LOG"
		fi
	fi
	echo "# [$LABEL] $name: $((SECONDS - start)) s"
	rm -f "$out"
}

# The netns suites a guest skips, and why: every `up` costs a guest 10-45 s
# of emulated verifier time, so within make check's half hour on two cores
# each guest runs what its kernel changes. The host runs them all; both
# guests load and run every program's fixtures (unit/xdp), and the box
# suite forwards real traffic on both stock kernels (NAT through tc on
# e1000e and XDP on virtio, a port forward, IPv6, PPPoE, a VLAN WAN).
# guest_skips SUITE: prints why $LABEL skips it, or nothing.
guest_skips() {
	case $1:$LABEL in
	test_vlan:*) echo "the 6.12 guest runs it on a mixed box (tcmode)" ;;
	test_vlan_wan:6.12) echo "the 6.1 guest runs it (the ports' modes are the loader's, not the kernel's)" ;;
	test_pppoe_wan:6.12) echo "the 6.1 guest runs it (the session's handling is the datapath's and the loader's, not the kernel's)" ;;
	test_cli:*) echo "runs on the host" ;;
	test_rules:*) echo "runs on the host, twice (tcmode); unit/xdp loads the rules programs in both guests" ;;
	test_bridge:*) echo "the host runs it in three modes; the guests load every bridge fixture (unit/xdp) and bridge LAN traffic in test_datapath and test_vlan" ;;
	test_service:*) echo "the daemon's life cycle: runs on the host" ;;
	test_hosts:*) echo "the accounting is the daemon's (it reads the connection entries every kernel fills alike, and the bridge stage's counters, whose fixtures run in unit/xdp): runs on the host" ;;
	test_container:*) echo "runs on the host, twice (tcmode), with a VM on the box" ;;
	test_nat:6.12) echo "6.1 runs it; the Debian 13 box translates through XDP and tc on 6.12 (check-box)" ;;
	test_route:6.12) echo "6.1 runs it; the Debian 13 box routes IPv4 and IPv6 through XDP and tc on 6.12 (check-box)" ;;
	test_shape:6.1) echo "the 6.12 guest shapes live traffic; both guests run the shaper's fixtures (unit/xdp) and its simulator (unit/shape)" ;;
	esac
}

run_local() {
	local s t why
	for s in $SUITES; do
		case $s in
		unit)
			run_suite unit/config "$SUITE_TIMEOUT" "$TOP/build/test_config"
			run_suite unit/loader "$SUITE_TIMEOUT" "$TOP/build/test_loader"
			# man pages and completion against the code (the same
			# files in a guest: the host's run is enough)
			[ "$LABEL" = host ] &&
				run_suite unit/docs "$SUITE_TIMEOUT" bash "$TOP/selftests/unit/test_docs.sh"
			run_suite unit/shape "$SUITE_TIMEOUT" "$TOP/build/shapesim"
			run_suite unit/xdp "$SUITE_TIMEOUT" "$TOP/build/test_xdp"
			;;
		netns)
			for t in "$TOP"/selftests/netns/test_*.sh; do
				why=$(guest_skips "$(basename "$t" .sh)")
				if [ "$LABEL" != host ] && [ -n "$why" ]; then
					echo "SKIP [$LABEL] netns/$(basename "$t" .sh): $why (make check's half hour)" | tee -a "$LOG"
					continue
				fi
				run_suite "netns/$(basename "$t" .sh)" "$SUITE_TIMEOUT" bash "$t"
			done
			;;
		tcmode)	# the datapath suites again with every port in tc mode
			# (TCX on the host kernel, clsact filters on 6.1), and on
			# a mixed box (XDP ports handing frames to tc): the host
			# runs seven (the mixed box's routing is its NAT run's:
			# LAN to WAN routes); to keep `make check` within its half
			# hour the 6.12 guest (TCX) runs a VLAN-filtering bridge on
			# the mixed box (VLAN filtering exists in the guests only),
			# and 6.1's clsact filters carry the Debian 12 box's NAT
			# on e1000e (check-box)
			local runs="tc:bridge tc:route tc:nat tc:rules tc:container mixed:bridge mixed:nat" r
			[ "$LABEL" = 6.1 ] && runs=
			[ "$LABEL" = 6.12 ] && runs=mixed:vlan
			for r in $runs; do
				SLUICE_TEST_PORT_MODE=${r%:*} run_suite "tcmode/${r%:*}/test_${r#*:}" \
					"$SUITE_TIMEOUT" bash "$TOP/selftests/netns/test_${r#*:}.sh"
			done
			;;
		toolchain)	# builds happen on the host; a guest has nothing to add
			[ "$LABEL" = host ] &&
				run_suite toolchain/trixie-build "$SUITE_TIMEOUT" bash "$TOP/selftests/toolchain/test_trixie_build.sh"
			;;
		package)
			[ "$LABEL" = host ] &&
				run_suite package/debian-12 "$SUITE_TIMEOUT" bash "$TOP/selftests/package/test_package.sh"
			;;
		*) echo "FAIL [$LABEL] $s: no such suite" | tee -a "$LOG" ;;
		esac
	done
}

run_guest() {
	local k=$1
	# The guest boots with this machine's root filesystem (read-only, with
	# a tmpfs on top), so the build from here is what it runs.
	# TCG emulation is ~10x slower than this machine: deadlines stretch.
	# (15 made the whole run 20% longer: the tests that wait a deadline
	# out to show that nothing happens wait longer too.)
	# The 6.12 guest boots with slub_debug: twice (CI of stops 25 and 27)
	# it panicked in kmem_cache_alloc_node (a corrupt slab freelist, in
	# softirq and in a TCP ack), never under slub_debug; with it a double
	# free or an overrun is reported at the free, with its trace, and
	# run-in-guest.sh fails the run on such a report.
	local append=${SLUICE_GUEST_APPEND:-}
	[ "$k" = 6.12 ] && append="slub_debug=FZP $append"
	SLUICE_GUEST_APPEND=$append \
	SLUICE_TEST_SLOWDOWN=${SLUICE_TEST_SLOWDOWN:-10} SLUICE_GUEST_ENV=SLUICE_TEST_SLOWDOWN \
		run_suite "kernel $k" $((GUEST_TIMEOUT + 60)) \
		"$TOP/selftests/qemu/run-in-guest.sh" -t "$GUEST_TIMEOUT" \
		"$k" -- "$TOP/selftests/run.sh" --kernels host --label "$k" --suites "$SUITES"
}

if [ ! -x "$TOP/build/sluice" ]; then
	echo "build/sluice is missing: run make first" >&2
	exit 2
fi
if [ "$(id -u)" != 0 ]; then
	echo "the tests need root (namespaces, BPF): sudo make check" >&2
	exit 2
fi
# Order, for make check's half hour on two cores: the host-only suites
# that build in Debian roots (toolchain, package: mostly downloads and
# unpacking) start first, niced, beside the host's other suites (which
# mostly wait: their deadlines are the host's, so they keep full priority);
# then the guests, side by side (one single-threaded TCG process each).
# Measured on a fresh machine: the root suites in front of the guests
# slowed the guests by half; everything at once starved the host suites'
# deadlines. Each keeps its own log; lines, labelled by kernel, stream.
guests= beside= fg= bpid= gpids=
for k in $KERNELS; do
	[ "$k" != host ] && guests="$guests $k"
done
case " $KERNELS " in
*" host "*)
	for s in $SUITES; do
		case $s in
		toolchain | package) beside="$beside $s" ;;
		*) fg="$fg $s" ;;
		esac
	done ;;
esac
if [ -n "$beside$guests" ]; then
	# (the guests' kernels are fetched here too, on a fresh machine a
	# minute of downloads the guests need not wait for: fetch-kernel.sh
	# locks, so a guest that starts first waits for it)
	beside=${beside:- }
	: >"$LOG.beside.out"
	( LOG="$LOG.beside"; SUITE_TIMEOUT=$((SUITE_TIMEOUT * 3 / 2)); trap on_interrupt INT TERM
	  renice -n 10 -p $BASHPID >/dev/null
	  for k in $guests; do "$TOP/selftests/qemu/fetch-kernel.sh" "$k" >/dev/null 2>&1; done
	  SUITES=$beside run_local ) >"$LOG.beside.out" 2>&1 &
	bpid=$!
	trap 'kill -TERM $bpid 2>/dev/null; on_interrupt' INT TERM
fi
[ -n "$fg" ] && SUITES=$fg run_local
for k in $guests; do
	: >"$LOG.$k.out"
	( LOG="$LOG.$k"; trap on_interrupt INT TERM; run_guest "$k" ) >"$LOG.$k.out" 2>&1 &
	gpids="$gpids $!"
done
if [ -n "$gpids$bpid" ]; then
	trap 'kill -TERM $gpids $bpid 2>/dev/null; wait; echo interrupted; exit 130' INT TERM
	# (tail follows the files until the last one ends)
	tail -q -s 0.5 -n +1 -f $(for k in ${beside:+beside} $guests; do echo "$LOG.$k.out"; done) &
	tpid=$!
	wait $gpids $bpid
	sleep 1
	kill "$tpid" 2>/dev/null
	wait "$tpid" 2>/dev/null
	for k in ${beside:+beside} $guests; do
		cat "$LOG.$k" >>"$LOG" 2>/dev/null
		rm -f "$LOG.$k" "$LOG.$k.out"
	done
	trap on_interrupt INT TERM
fi

if [ "$LABEL" != host ]; then
	exit 0	# the host's runner counts a guest's lines
fi
passed=$(grep -c '^PASS ' "$LOG")
failed=$(grep -c '^FAIL ' "$LOG")
skipped=$(grep -c '^SKIP ' "$LOG")
if [ "$skipped" != 0 ]; then
	echo
	echo "skipped:"
	grep '^SKIP ' "$LOG" | sed 's/^SKIP /  /'
fi
if [ "$failed" != 0 ]; then
	echo
	echo "failed:"
	grep '^FAIL ' "$LOG" | sed 's/^FAIL /  /'
fi
echo
if [ "$skipped" != 0 ]; then
	echo "$passed passed, $failed failed, $skipped skipped"
else
	echo "$passed passed, $failed failed"
fi
[ "$failed" = 0 ]
