#!/bin/bash
# Runs every test suite and prints one summary line: "N passed, N failed"
# (", N skipped" when there are skips, each listed with its reason above).
#
#   selftests/run.sh [--kernels "host 6.1 6.12 arm64-6.1 arm64-6.12"] [--suites "unit netns toolchain"]
#
# Kernels: host is this machine's; 6.1 (Debian 12) and 6.12 (Debian 13) are
# stock Debian kernels booted under qemu by selftests/qemu/run-in-guest.sh;
# arm64-6.1 and arm64-6.12 are the same releases' arm64 kernels on an arm64
# root, running the arm64 build (make ARCH=arm64 all deb; make check-arm64).
# Suites: unit (config parser, man pages and completion, packet fixtures),
# netns (reference topology, CLI), toolchain (build, unit tests and the
# package with Debian 13's clang/libbpf, host only), package (make deb,
# lintian, install and removal in a Debian 12 tree on the host; in an arm64
# guest, the arm64 .deb installed with dpkg, whose sluice the guest's later
# suites then run), qemu (the guests' kernel downloads on an empty cache of
# their own, at once and with no way to the archive; host only).
#
# A suite prints PASS/FAIL/SKIP lines; a suite that dies or times out
# without saying FAIL counts as one failure. Guest kernels run this same
# script inside qemu (selftests/qemu) and their lines are counted here,
# tagged with the kernel.
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
KERNELS=${KERNELS:-"host 6.1 6.12 arm64-6.1 arm64-6.12"}
SUITES=${SUITES:-"unit netns tcmode toolchain package qemu"}
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
		# (a run that failed before its guest booted has no guest line)
		local oops last
		oops=$(sed -n 's/^GUEST OOPS: /-- /p' "$out" | head -n1)
		last=$(grep -E '^(PASS|FAIL|SKIP|#) ' "$out" | tail -n1)
		echo "FAIL [$LABEL] $name: $(grep -m1 '^GUEST FAILURE: ' "$out")${oops:+ $oops}${last:+ -- last guest line: $last}" |
			tee -a "$LOG"
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
# each guest runs what its kernel changes, and a kernel release's suites
# are shared between its amd64 and arm64 guests (the same kernel source: a
# suite's kernel-dependent behaviour is the release's). The host runs them
# all; the arm64 guests load and run every program's fixtures (unit/xdp:
# Debian 12's and 13's verifiers and the arm64 JIT; the amd64 guests run
# the x86 JIT on every program in their suites), and the box suite
# forwards real traffic on both stock amd64 kernels (NAT through tc on
# e1000e and XDP on virtio, a port forward, IPv6, PPPoE, a VLAN WAN). The
# arm64 guests run the core suites only (bridge, routing, NAT, rules,
# shaping): what arm64 changes is the build, the JIT and the drivers, not
# the other features' logic. make
# check-arm64 (SLUICE_ARM64_PART=more) runs the arm64 guests' other core
# suites: bridge, routing, rules, and 6.12's VLAN-filtering mixed box.
# guest_skips SUITE: prints why $LABEL skips it, or nothing.
guest_skips() {
	case ${SLUICE_ARM64_PART:-check}:$1:$LABEL in
	check:test_shape:arm64-6.12) ;;
	more:test_bridge:arm64-6.1 | more:test_route:arm64-6.1 | more:test_rules:arm64-6.12) ;;
	check:test_bridge:arm64-* | check:test_route:arm64-* | check:test_rules:arm64-*) echo "make check-arm64 runs it" ;;
	*:test_nat:arm64-*) echo "arm64-6.1 runs it on a mixed box (tcmode)" ;;
	*:test_bridge:arm64-* | *:test_route:arm64-*) echo "arm64-6.1 runs it" ;;
	*:test_shape:arm64-* | *:test_rules:arm64-*) echo "arm64-6.12 runs it" ;;
	*:arm64-*) echo "not a core suite: the host and the amd64 guests run it" ;;
	esac
	case ${LABEL%%-*} in arm64) return ;; esac
	case $1:$LABEL in
	test_vlan:*) echo "arm64-6.12 runs it on a mixed box (tcmode, make check-arm64)" ;;
	test_vlan_wan:6.12) echo "the 6.1 guest runs it (the ports' modes are the loader's, not the kernel's)" ;;
	test_pppoe_wan:6.12) echo "the 6.1 guest runs it (the session's handling is the datapath's and the loader's, not the kernel's)" ;;
	test_cli:*) echo "runs on the host" ;;
	test_rules:*) echo "runs on the host, twice (tcmode), and in arm64-6.12 (make check-arm64); unit/xdp loads the rules programs in both arm64 guests" ;;
	test_bridge:*) echo "the host runs it in three modes, arm64-6.1 once (make check-arm64); the amd64 guests bridge LAN traffic in test_datapath" ;;
	test_service:*) echo "the daemon's life cycle: runs on the host" ;;
	test_hosts:*) echo "the accounting is the daemon's (it reads the connection entries every kernel fills alike, and the bridge stage's counters, whose fixtures run in unit/xdp): runs on the host" ;;
	test_container:*) echo "runs on the host, twice (tcmode), with a VM on the box" ;;
	test_nat:6.1) echo "the arm64-6.1 guest runs it on the same kernel release, on a mixed box (tcmode)" ;;
	test_route:6.1) echo "the arm64-6.1 guest runs it on the same kernel release (make check-arm64)" ;;
	test_nat:6.12) echo "arm64-6.1 runs it on a mixed box; the Debian 13 box translates through XDP and tc on 6.12 (check-box)" ;;
	test_route:6.12) echo "arm64-6.1 runs it (make check-arm64); the Debian 13 box routes IPv4 and IPv6 through XDP and tc on 6.12 (check-box)" ;;
	test_shape:*) echo "the arm64-6.12 guest shapes live traffic; the arm64 guests run the shaper's fixtures (unit/xdp) and its simulator (unit/shape)" ;;
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
			# (every fixture: on the host and in the arm64 guests,
			# whose kernels are the amd64 guests' releases)
			case $LABEL in
			6.1 | 6.12) echo "SKIP [$LABEL] unit/xdp: the arm64-$LABEL guest runs every fixture on this kernel release (make check's half hour)" | tee -a "$LOG" ;;
			*) run_suite unit/xdp "$SUITE_TIMEOUT" "$TOP/build/test_xdp" ;;
			esac
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
			# hour the arm64-6.1 guest runs NAT on the mixed box (an
			# arm64 board is one: stmmac native, r8152 tc), make
			# check-arm64's arm64-6.12 (TCX) a VLAN-filtering bridge
			# on it (VLAN filtering exists in the guests only), and
			# 6.1's clsact filters carry the Debian 12 box's NAT on
			# e1000e (check-box)
			local runs="tc:bridge tc:route tc:nat tc:rules tc:container mixed:bridge mixed:nat" r
			case ${SLUICE_ARM64_PART:-check}:$LABEL in
			check:arm64-6.1) runs=mixed:nat ;;
			more:arm64-6.12) runs=mixed:vlan ;;
			*:host) ;;
			*) runs= ;;
			esac
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
			case $LABEL in
			arm64-*)
				run_suite package/installed "$SUITE_TIMEOUT" bash "$TOP/selftests/package/test_installed.sh"
				# the later suites run what the package installed
				if ! grep -q "^FAIL \[$LABEL\] package" "$LOG"; then
					export SLUICE=/usr/sbin/sluice
					echo "# [$LABEL] the suites below run $SLUICE, the installed package's"
				fi ;;
			esac
			;;
		qemu)	# the harness's downloads: what a guest run needs first
			[ "$LABEL" = host ] &&
				run_suite qemu/fetch "$SUITE_TIMEOUT" bash "$TOP/selftests/qemu/test_fetch.sh"
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
	# (an arm64 guest shares the working directory as its tree, with
	# build/arm64 as its build)
	cd "$TOP" || return
	local suites=$SUITES
	case $k:" $SUITES " in	# (the package first: the later suites run what it installed)
	arm64-*:*" package "*) suites="package $(echo " $SUITES " | sed 's/ package / /')" ;;
	esac
	SLUICE_GUEST_APPEND=$append SLUICE_ARM64_PART=${SLUICE_ARM64_PART:-check} \
	SLUICE_TEST_SLOWDOWN=${SLUICE_TEST_SLOWDOWN:-10} SLUICE_GUEST_ENV="SLUICE_TEST_SLOWDOWN SLUICE_ARM64_PART" \
		run_suite "kernel $k" $((GUEST_TIMEOUT + 60)) \
		"$TOP/selftests/qemu/run-in-guest.sh" -t "$GUEST_TIMEOUT" \
		"$k" -- "$TOP/selftests/run.sh" --kernels host --label "$k" --suites "$suites"
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
# that are mostly downloads and unpacking (toolchain and package, which
# build in Debian roots; qemu, the guests' kernel downloads) start first,
# niced, beside the host's other suites (which mostly wait: their
# deadlines are the host's, so they keep full priority), and so does the
# arm64 build the arm64 guests run; then the guests, in two
# lanes side by side (one single-threaded TCG process each): 6.1 then
# arm64-6.1, 6.12 then arm64-6.12.
# Measured on a fresh machine: the root suites in front of the guests
# slowed the guests by half; everything at once starved the host suites'
# deadlines. Each keeps its own log; lines, labelled by kernel, stream.
guests= beside= fg= bpid= gpids= arm64=
for k in $KERNELS; do
	case $k in
	host) ;;
	arm64-*) guests="$guests $k" arm64=1 ;;
	*) guests="$guests $k" ;;
	esac
done
case " $KERNELS " in
*" host "*)
	for s in $SUITES; do
		case $s:$LABEL in
		toolchain:host | package:host | qemu:host) beside="$beside $s" ;;
		*) fg="$fg $s" ;;	# (in a guest, in order: package first)
		esac
	done ;;
esac
ARM64_BUILT=$LOG.arm64-built ARM64_LOG=$LOG.arm64-build
# build_arm64: what the arm64 guests run (cross-built: `make programs`, not
# the man pages) and the .deb, built again only when its program or its
# packaging changed (dpkg-buildpackage builds everything anew); its output
# kept, and shown when it fails; then ARM64_BUILT says how it went.
build_arm64() {
	local t0=$SECONDS b=build/arm64 deb
	deb=$(ls "$TOP/$b"/deb/sluice_*_arm64.deb 2>/dev/null | head -n 1)
	if make -C "$TOP" --no-print-directory ARCH=arm64 programs >"$ARM64_LOG" 2>&1 &&
	   { { [ -n "$deb" ] && [ -z "$(find "$TOP/$b/sluice" "$TOP/debian" "$TOP/loader/man" \
				"$TOP/loader/sluice.conf.example" -newer "$deb" 2>/dev/null)" ]; } ||
	     make -C "$TOP" --no-print-directory ARCH=arm64 deb >>"$ARM64_LOG" 2>&1; }; then
		echo "PASS [$LABEL] build: the arm64 build and $(basename "$(ls "$TOP"/$b/deb/sluice_*_arm64.deb)") in $((SECONDS - t0)) s"
		echo ok >"$ARM64_BUILT"
	else
		echo "FAIL [$LABEL] build: the arm64 build (make ARCH=arm64) and its .deb"
		tail -n 20 "$ARM64_LOG" | sed 's/^/    /'
		echo failed >"$ARM64_BUILT"
	fi | tee -a "$LOG"
}
# prefetch CMD...: a download for the guests, quiet unless it fails
prefetch() {
	local out
	out=$("$@" 2>&1) && return 0
	echo "# [$LABEL] $(basename "$1") ${*:2} failed: $(grep -m1 ': ERROR: ' <<<"$out" || tail -n 1 <<<"$out")"
}
if [ -n "$beside$guests" ]; then
	# (the guests' kernels are fetched here too, on a fresh machine a
	# minute of downloads the guests need not wait for: fetch-kernel.sh
	# locks, so a guest that starts first waits for it; a failure is
	# said here, and the guest that needs the download tries it again)
	beside=${beside:- }
	: >"$LOG.beside.out"
	rm -f "$ARM64_BUILT"
	( LOG="$LOG.beside"; SUITE_TIMEOUT=$((SUITE_TIMEOUT * 3 / 2)); trap on_interrupt INT TERM
	  renice -n 10 -p $BASHPID >/dev/null
	  [ -n "$arm64" ] && build_arm64
	  for k in $guests; do prefetch "$TOP/selftests/qemu/fetch-kernel.sh" "$k"; done
	  [ -n "$arm64" ] && prefetch "$TOP/selftests/qemu/fetch-root.sh" arm64
	  SUITES=$beside run_local ) >"$LOG.beside.out" 2>&1 &
	bpid=$!
	trap 'kill -TERM $bpid 2>/dev/null; on_interrupt' INT TERM
fi
[ -n "$fg" ] && SUITES=$fg run_local
# lane GUEST...: the guests one after the other; an arm64 one waits for
# the arm64 build (bounded: the build's own deadline is make's)
lane() {
	local k i
	for k in "$@"; do
		case $k in
		arm64-*)
			i=0
			while [ ! -s "$ARM64_BUILT" ] && [ $((i += 1)) -le 1800 ]; do sleep 1; done
			if [ "$(cat "$ARM64_BUILT" 2>/dev/null)" != ok ]; then
				echo "FAIL [$k] not run: the arm64 build failed or did not finish (above)" | tee -a "$LOG"
				continue
			fi ;;
		esac
		run_guest "$k"
	done
}
lanes=()
for k in $guests; do
	case $k in
	6.1 | arm64-6.1) lanes[0]="${lanes[0]:-} $k" ;;
	*) lanes[1]="${lanes[1]:-} $k" ;;
	esac
done
outs=()
for i in "${!lanes[@]}"; do
	: >"$LOG.lane$i.out"
	# shellcheck disable=SC2086 # a list of kernel names
	( LOG="$LOG.lane$i"; trap on_interrupt INT TERM; lane ${lanes[i]} ) >"$LOG.lane$i.out" 2>&1 &
	gpids="$gpids $!"
	outs+=("lane$i")
done
if [ -n "$gpids$bpid" ]; then
	trap 'kill -TERM $gpids $bpid 2>/dev/null; wait; echo interrupted; exit 130' INT TERM
	# (tail follows the files until the last one ends)
	tail -q -s 0.5 -n +1 -f $(for k in ${beside:+beside} "${outs[@]}"; do echo "$LOG.$k.out"; done) &
	tpid=$!
	wait $gpids $bpid
	sleep 1
	kill "$tpid" 2>/dev/null
	wait "$tpid" 2>/dev/null
	for k in ${beside:+beside} "${outs[@]}"; do
		cat "$LOG.$k" >>"$LOG" 2>/dev/null
		rm -f "$LOG.$k" "$LOG.$k.out"
	done
	rm -f "$ARM64_BUILT" "$ARM64_LOG"
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
