#!/bin/bash
# make bench: sluice against the kernel's own paths, side by side, one run.
#
#   tools/bench/bench.sh [--quick] [--out DIR] [--scenarios "1 2 ..."]
#
# Every scenario builds the reference box in namespaces
# (selftests/netns/topology.sh), drives it with build/benchgen (an XDP
# live-frame generator and a tc sink, tools/bench/benchgen.c) and measures
# sluice and the kernel path it replaces one after the other, on the same
# topology, in the same run. Results go to DIR/results.jsonl (one JSON object
# per run) and tools/bench/report.py turns them into DIR/REPORT.md and plots.
# A scenario whose sluice feature has not landed prints "not available yet"
# in its sluice row; a missing tool or kernel feature prints why, and the run
# goes on. The topology is torn down on exit and on Ctrl-C.
#
# --quick: every scenario once, small sizes, 1-second runs (CI runs this to
# prove the harness works; it asserts no number).
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
SUITE=bench
# shellcheck source=../../selftests/lib.sh
. "$TOP/selftests/lib.sh"
# shellcheck source=../../selftests/netns/topology.sh
. "$TOP/selftests/netns/topology.sh"

QUICK=0
OUT=$TOP/docs/bench
SCENARIOS="1 2 3 4 5 6 7 8 9 10"
INNER=	# set when a guest runs part of a scenario for the host
while [ $# -gt 0 ]; do
	case $1 in
	--quick) QUICK=1; shift ;;
	--out) OUT=$2; shift 2 ;;
	--scenarios) SCENARIOS=$2; shift 2 ;;
	--inner) INNER=$2; shift 2 ;;
	*) echo "usage: $0 [--quick] [--out DIR] [--scenarios LIST]" >&2; exit 2 ;;
	esac
done

GEN=$TOP/build/benchgen
if [ "$QUICK" = 1 ]; then
	RUNS=1 SECS=1 STAT_SECS=1 STAT_RUNS=1
	RULE_SIZES="0 1000" FLOW_SIZES="1000 10000" FLOWS_FW="1000 10000"
else
	RUNS=${BENCH_RUNS:-5} SECS=${BENCH_SECS:-3} STAT_SECS=2 STAT_RUNS=${BENCH_STAT_RUNS:-5}
	RULE_SIZES="0 1000 15000 100000" FLOW_SIZES="10000 100000 1000000"
	FLOWS_FW="10000 100000 1000000"
fi
GEN_CPU=1	# the generator and everything it triggers run on this CPU

mkdir -p "$OUT"
RES=$OUT/results.jsonl
WORK=$(mktemp -d /tmp/sluice-bench.XXXXXX)
[ -z "$INNER" ] && : > "$RES"

cleanup() {
	topo_down
	shape_topo_down
	[ -n "${HARNESS_NS:-}" ] && ip netns del "$HARNESS_NS-a" 2>/dev/null &&
		ip netns del "$HARNESS_NS-b" 2>/dev/null
	[ -n "${STATS_OLD:-}" ] && sysctl -qw kernel.bpf_stats_enabled="$STATS_OLD"
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'echo "bench: interrupted" >&2; exit 130' INT TERM

progress() { [ -z "$INNER" ] && echo "bench: $*" >&2; return 0; }

# record SCENARIO CASE JSON: one result line, tagged.
record() {
	local line="{\"scenario\": \"$1\", \"case\": \"$2\", \"kernel\": \"$(uname -r)\", ${3#\{}"
	if [ -n "$INNER" ]; then echo "$line"; else echo "$line" >> "$RES"; fi
}

# na SCENARIO CASE WHY: a row that could not be measured, and why (any
# text: quotes, backslashes and control characters are escaped).
na() {
	local why
	why=$(printf '%s' "$3" | tr '\000-\037' ' ' | sed 's/[\\"]/\\&/g')
	record "$1" "$2" "{\"na\": \"$why\"}"
	progress "  $2: $3"
}

# note SCENARIO CASE KEY NUMBER: an extra figure for a case (memory, times);
# anything but a number is reported and left out, never written as JSON.
note() {
	if [[ $4 =~ ^-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?$ ]]; then
		record "$1" "$2" "{\"$3\": $4}"
	else
		progress "  $2: no $3 figure (got '$4')"
	fi
}

mac_of() { ip -n "$1" link show "$2" | awk '/link\/ether/ {print $2}'; }

# measure SCENARIO CASE BENCHGEN-ARGS...: RUNS runs, each a result line.
measure() {
	local sc=$1 case=$2 i out
	shift 2
	for i in $(seq 1 "$RUNS"); do
		if ! out=$("$GEN" --cpu "$GEN_CPU" --headroom "$HEADROOM" --seconds "$SECS" "$@" 2>&1); then
			na "$sc" "$case" "benchgen failed: $(echo "$out" | tail -1)"
			return 1
		fi
		record "$sc" "$case" "$out"
	done
	progress "  $case: $(echo "$out" | sed 's/.*"pps": \([0-9]*\).*"loss": \([0-9.-]*\).*/\1 pps (last run), loss \2/')"
}

# prime ARGS...: send each flow once (no sink), e.g. to create conntrack
# entries, or replies to make them established.
prime() { "$GEN" --cpu "$GEN_CPU" --headroom "$HEADROOM" "$@" >/dev/null 2>&1; }

# progstat SCENARIO CASE PROGID BENCHGEN-ARGS...: the program's own run time
# per packet (kernel.bpf_stats_enabled), in separate runs so the clock reads
# it adds never touch the packet rates: the median of STAT_RUNS windows of
# STAT_SECS, so that one disturbed window does not decide a row. (What it
# cannot take out is a whole run's drift: on a busy VM a row can move by
# a fifth between runs of the same tree. Compare trees back to back.)
progstat() {
	local sc=$1 case=$2 id=$3 i runs=
	shift 3
	[ -n "$id" ] || return 0
	STATS_OLD=${STATS_OLD:-$(sysctl -n kernel.bpf_stats_enabled)}
	sysctl -qw kernel.bpf_stats_enabled=1
	for i in $(seq 1 "$STAT_RUNS"); do
		runs="$runs$(bpftool prog show id "$id" -j 2>/dev/null)"$'\n'
		"$GEN" --cpu "$GEN_CPU" --headroom "$HEADROOM" --seconds "$STAT_SECS" "$@" >/dev/null 2>&1
		runs="$runs$(bpftool prog show id "$id" -j 2>/dev/null)"$'\n'
	done
	sysctl -qw kernel.bpf_stats_enabled="$STATS_OLD"
	/usr/bin/python3 - "$runs" <<'EOF' > "$WORK/prog_ns" || return 0
import json, statistics, sys
j = [json.loads(x) for x in sys.argv[1].split("\n") if x.strip()]
ns = []
for b, a in zip(j[0::2], j[1::2]):
    n = a.get("run_cnt", 0) - b.get("run_cnt", 0)
    if n > 0:
        ns.append((a.get("run_time_ns", 0) - b.get("run_time_ns", 0)) / n)
if ns:
    print("%.1f" % statistics.median(ns))
EOF
	if [ -s "$WORK/prog_ns" ]; then
		note "$sc" "$case" prog_ns "$(cat "$WORK/prog_ns")"
	else	# the traffic never met the program measured: a harness bug
		progress "  $case: program $id did not run; no time per packet"
	fi
}

# ---- the topology -----------------------------------------------------------

# The reference box, with GRO on the router's veths: a veth only takes
# frames transmitted by XDP on its peer when it runs XDP itself or has GRO
# on (platform.md), and the kernel-path baselines run no XDP on the router.
bench_topo_up() {
	topo_down
	TAG=$(unique_tag) TOPO_ROUTE_BACK=${1:-1}
	topo_up >/dev/null 2>&1 || { echo "bench: cannot build the topology" >&2; exit 1; }
	local i
	for i in lan1 lan2 lan3 lan4 lan5 wan0; do
		ip netns exec "$RTR" ethtool -K "$i" gro on >/dev/null 2>&1
	done
	for i in "$H1" "$H2" "$H3" "$H4" "$H5" "$INET"; do
		ip netns exec "$i" ethtool -K eth0 gro on >/dev/null 2>&1
	done
	ip netns exec "$H1" ping -c1 -W2 192.168.10.12 >/dev/null 2>&1
	ip netns exec "$H1" ping -c1 -W2 203.0.113.1 >/dev/null 2>&1
	BR_MAC=$(mac_of "$RTR" br-lan)
	WAN_MAC=$(mac_of "$RTR" wan0)
	H2_MAC=$(mac_of "$H2" eth0)
}

# The headroom in front of each frame as it reaches the router (benchgen
# --headroom): what the ingress port's driver would give. A driver with XDP
# running gives XDP's 256 bytes (native ports, and the mixed box, whose
# traffic enters by native ports); one without gives its skbs 64 (tc and
# generic XDP ports, and the kernel's own path). headroom_for [MODE].
HEADROOM=64
headroom_for() {
	case ${1:-} in tc|generic) HEADROOM=64 ;; *) HEADROOM=256 ;; esac
}

# sluice_up [MODE]: the example config, every port forced into MODE
# (tc|generic) when given (docs/guide.md, "Port modes").
sluice_up() {
	headroom_for "${1:-}"
	SLUICE_TEST_PORT_MODE=${1:-} topo_config "$WORK/sluice.conf"
	[ -n "${OPEN_LIMITS:-}" ] && open_limits "$WORK/sluice.conf"
	rsluice up -c "$WORK/sluice.conf" >"$WORK/sluice.log" 2>&1
}
# The new-connection and table-scale rows send every flow from one host:
# its per-host limits (nat-host-ports, host-flows) would refuse all but
# the first thousands, and the rows would time refusals.
open_limits() { printf 'nat-host-ports 65535
host-flows 4194304
' >> "$1"; }
# `down` turns IP forwarding off (sluice fails closed); the kernel-path
# baselines that follow need it on.
sluice_down() {
	HEADROOM=64
	rsluice down >/dev/null 2>&1
	ip netns exec "$RTR" sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1
}
sluice_prog_id() {	# [tc]: the program whose run time counts
	bpftool prog show pinned "$PIN/prog_${1:-xdp}" 2>/dev/null | awk -F: 'NR==1 {print $1}'
}
# The port modes measured beside native XDP (tc, generic, mixed): the case-name
# suffix, the mode, the program that runs.
# "mixed box": lan2, lan4 and wan0 in tc mode, the other ports native
# (frames from a native port to a tc one are handed from XDP to tc).
MODES=("tc mode:tc:tc" "generic XDP:generic:xdp" "mixed box:mixed:xdp")

# Which sluice features exist in this build: the CLI and `sluice check` say.
have_feature() {
	case $1 in
	bridge) "$TOP/build/sluice" fdb --help >/dev/null 2>&1 ;;
	conntrack) "$TOP/build/sluice" conntrack --help >/dev/null 2>&1 ;;
	*)	# a config statement that `check` no longer reports as inactive
		printf 'zone lan {\n interfaces lo\n}\nzone wan {\n interfaces lo2\n masquerade\n}\n%s\n' \
			"$2" > "$WORK/feature.conf"
		! "$TOP/build/sluice" check -c "$WORK/feature.conf" 2>&1 | grep -q "not yet active" ;;
	esac
}

xdp_pass_on() {
	local i
	headroom_for
	for i in lan1 lan2 lan3 lan4 lan5 wan0; do
		ip -n "$RTR" link set dev "$i" xdpdrv obj "$TOP/build/xdp_pass.bpf.o" sec xdp ||
			return 1
	done
}
xdp_pass_id() {	# the trivial program's id (one object per port: lan1's)
	ip -n "$RTR" -d link show dev lan1 | sed -n 's/.*prog\/xdp id \([0-9]*\).*/\1/p' | head -1
}
xdp_pass_off() {
	local i
	HEADROOM=64
	for i in lan1 lan2 lan3 lan4 lan5 wan0; do ip -n "$RTR" link set dev "$i" xdpdrv off; done
}

# ---- nftables baselines -------------------------------------------------------

# The box as nftables users run it: forward policy drop, established and
# related first, LAN to WAN allowed, masquerade on the WAN. $1: extra
# forward-chain rules (after established), $2: extra table content, $3:
# rules before established (a flowtable's "flow add" must see established
# packets).
nft_box() {
	cat > "$WORK/box.nft" <<NFT
flush ruleset
table inet box {
	$2
	chain forward {
		type filter hook forward priority 0; policy drop;
		${3:-}
		ct state established,related accept
		$1
		iifname "br-lan" oifname "wan0" accept
		ct status dnat accept
	}
	chain prerouting {
		type nat hook prerouting priority -100;
		iifname "wan0" udp dport 8443 dnat ip to 192.168.10.12:443
	}
	chain postrouting {
		type nat hook postrouting priority 100;
		oifname "wan0" masquerade
	}
}
NFT
	ip netns exec "$RTR" nft -f "$WORK/box.nft" 2>"$WORK/nft.err"
}
nft_off() { ip netns exec "$RTR" nft flush ruleset 2>/dev/null; ct_flush; }
ct_flush() { ip netns exec "$RTR" conntrack -F >/dev/null 2>&1; return 0; }
ct_count() { ip netns exec "$RTR" cat /proc/sys/net/netfilter/nf_conntrack_count 2>/dev/null || echo 0; }

# LAN (h1) to the internet namespace, and the replies that make each flow
# established in a connection tracker (masquerade keeps the source ports
# here: nothing else uses them).
lan_wan_args() {
	echo --gen-ns "$H1" --gen-if eth0 --dst-mac "$BR_MAC" --src-ip 192.168.10.11 \
		--dst-ip 203.0.113.1 --sink-ns "$INET" --sink-if eth0 --flows "$1"
}
prime_lan_wan() {	# FLOWS
	prime_pairs "$1" "--dst-ip 203.0.113.2"
}

# prime_pairs FLOWS REPLY-DST: each flow from h1, then its reply from the
# internet namespace, in batches: a tracker sees every flow answered before
# its table of unanswered flows (a quarter of sluice's table) could fill up.
PRIME_BATCH=20000
prime_pairs() {
	local n=$1 first=0 c
	while [ "$first" -lt "$n" ]; do
		c=$((n - first < PRIME_BATCH ? n - first : PRIME_BATCH))
		prime --gen-ns "$H1" --gen-if eth0 --dst-mac "$BR_MAC" --src-ip 192.168.10.11 \
			--dst-ip 203.0.113.1 --flows "$n" --first "$first" --count "$c"
		sleep 0.1
		# shellcheck disable=SC2086
		prime --gen-ns "$INET" --gen-if eth0 --dst-mac "$WAN_MAC" --src-ip 203.0.113.1 \
			$2 --flows "$n" --first "$first" --count "$c" --reverse
		first=$((first + c))
	done
	sleep 0.2
}

# The zone policy alone, routed without NAT (the internet namespace routes
# the LAN prefix back): nftables as users write it, and sluice's config.
nft_fw() {
	cat > "$WORK/fw.nft" <<NFT
flush ruleset
table inet fw {
	chain forward {
		type filter hook forward priority 0; policy drop;
		ct state established,related accept
		iifname "br-lan" oifname "wan0" accept
	}
}
NFT
	ip netns exec "$RTR" nft -f "$WORK/fw.nft" 2>"$WORK/nft.err"
}
sluice_fw_up() {	# [FLOWS [MODE]]: a table that holds them (the default holds 262144)
	printf 'zone lan {\n interfaces br-lan\n}\nzone wan {\n interfaces wan0\n input drop\n}\nforward lan -> wan\n' \
		> "$WORK/fw.conf"
	[ "${1:-0}" -gt 262144 ] && printf 'conntrack {\n size %s\n}\n' "$1" >> "$WORK/fw.conf"
	open_limits "$WORK/fw.conf"	# (every flow from one host)
	headroom_for "${2:-}"
	SLUICE_TEST_PORT_MODE=${2:-} topo_modes "$WORK/fw.conf"
	rsluice up -c "$WORK/fw.conf" >"$WORK/sluice.log" 2>&1
}
sluice_fw_mode() { sluice_fw_up 0 "$1"; }
# sluice_rules_up FILE: the NAT box with FILE's rules and nothing else, its
# ports in native XDP as in the other rows (a veth with no port line runs tc).
sluice_rules_up() {
	printf 'zone lan {\n interfaces br-lan\n}\nzone wan {\n interfaces wan0\n input drop\n masquerade\n}\nforward lan -> wan\n' \
		> "$WORK/rules.conf"
	cat "$1" >> "$WORK/rules.conf"
	open_limits "$WORK/rules.conf"
	topo_modes "$WORK/rules.conf"
	headroom_for
	cp "$WORK/rules.conf" "$WORK/rules-up.conf"
	rsluice up -c "$WORK/rules-up.conf" >"$WORK/sluice.log" 2>&1
}
prime_routed() {	# FLOWS: each flow once each way, so trackers see it answered
	prime_pairs "$1" "--dst-ip 192.168.10.11"
}

# ---- 1: what sluice costs before it helps ------------------------------------
s1() {
	local args
	progress "1/9 pass-through: routed LAN to WAN with an IPv4 option (every router's slow path), and unknown unicast the bridge floods, 64 B"
	bench_topo_up
	HARNESS_NS=$(unique_tag)x
	ip netns add "$HARNESS_NS-a" && ip netns add "$HARNESS_NS-b" &&
	ip -n "$HARNESS_NS-a" link add eth0 type veth peer name eth0 netns "$HARNESS_NS-b" &&
	ip -n "$HARNESS_NS-a" link set eth0 up && ip -n "$HARNESS_NS-b" link set eth0 up &&
	measure 1 "harness: generator to sink, no router" --gen-ns "$HARNESS_NS-a" --gen-if eth0 \
		--dst-mac "$(mac_of "$HARNESS_NS-b" eth0)" --src-ip 192.168.10.11 --dst-ip 203.0.113.1 \
		--sink-ns "$HARNESS_NS-b" --sink-if eth0 --flows 100 --ip-option
	ip netns del "$HARNESS_NS-a"; ip netns del "$HARNESS_NS-b"; HARNESS_NS=

	# shellcheck disable=SC2207
	args=($(lan_wan_args 100) --ip-option)
	measure 1 "kernel forwarding, no XDP" "${args[@]}"
	if xdp_pass_on; then
		measure 1 "kernel forwarding + trivial XDP_PASS" "${args[@]}"
		progstat 1 "kernel forwarding + trivial XDP_PASS" "$(xdp_pass_id)" "${args[@]}"
	else
		na 1 "kernel forwarding + trivial XDP_PASS" "attaching build/xdp_pass.bpf.o failed"
	fi
	xdp_pass_off
	if sluice_up; then
		measure 1 "kernel forwarding + sluice (pass-through)" "${args[@]}"
		progstat 1 "kernel forwarding + sluice (pass-through)" "$(sluice_prog_id)" "${args[@]}"
		sluice_down
	else
		na 1 "kernel forwarding + sluice (pass-through)" "sluice up failed: $(tail -1 "$WORK/sluice.log")"
	fi

	# What the bridge fast path hands to the kernel bridge: unicast
	# to a MAC nobody has, which the bridge floods (the sink is one of
	# the four hosts it reaches).
	args=(--gen-ns "$H1" --gen-if eth0 --dst-mac 02:00:5e:00:99:99 --src-ip 192.168.10.11
	      --dst-ip 192.168.10.12 --sink-ns "$H2" --sink-if eth0 --flows 100)
	measure 1 "kernel bridge flooding, no XDP" "${args[@]}"
	if xdp_pass_on; then
		measure 1 "kernel bridge flooding + trivial XDP_PASS" "${args[@]}"
		progstat 1 "kernel bridge flooding + trivial XDP_PASS" "$(xdp_pass_id)" "${args[@]}"
	else
		na 1 "kernel bridge flooding + trivial XDP_PASS" "attaching build/xdp_pass.bpf.o failed"
	fi
	xdp_pass_off
	if sluice_up; then
		measure 1 "kernel bridge flooding + sluice (unknown destination passed)" "${args[@]}"
		progstat 1 "kernel bridge flooding + sluice (unknown destination passed)" \
			"$(sluice_prog_id)" "${args[@]}"
		sluice_down
	else
		na 1 "kernel bridge flooding + sluice (unknown destination passed)" \
			"sluice up failed: $(tail -1 "$WORK/sluice.log")"
	fi
}

# ---- 2: LAN to LAN --------------------------------------------------------------
# bridge_rows SIZE: the kernel bridge, then sluice's bridge fast path, H1 to
# H2 with SIZE-byte frames.
bridge_rows() {
	local size=$1 args
	args=(--gen-ns "$H1" --gen-if eth0 --dst-mac "$H2_MAC" --src-ip 192.168.10.11
	      --dst-ip 192.168.10.12 --sink-ns "$H2" --sink-if eth0 --flows 100 --size "$size")
	ip netns exec "$H1" ping -c1 -W1 192.168.10.12 >/dev/null 2>&1	# fresh FDB
	measure 2 "kernel bridge, $size B" "${args[@]}"
	if ! have_feature bridge; then
		na 2 "sluice bridge fast path, $size B" "not available (bridge fast path)"
	elif sluice_up; then
		ip netns exec "$H1" ping -c1 -W1 192.168.10.12 >/dev/null 2>&1
		measure 2 "sluice bridge fast path, $size B" "${args[@]}"
		progstat 2 "sluice bridge fast path, $size B" "$(sluice_prog_id)" "${args[@]}"
		sluice_down
	else
		na 2 "sluice bridge fast path, $size B" "sluice up failed: $(tail -1 "$WORK/sluice.log")"
	fi
}

s2() {
	progress "2/9 LAN to LAN: kernel bridge vs sluice's bridge fast path"
	bench_topo_up
	bridge_rows 64
	bridge_rows 1518
	bench_modes 2 "sluice bridge fast path" sluice_up "64 B" --gen-ns "$H1" --gen-if eth0 \
		--dst-mac "$H2_MAC" --src-ip 192.168.10.11 --dst-ip 192.168.10.12 --sink-ns "$H2" \
		--sink-if eth0 --flows 100 --size 64
}

# bench_modes SCENARIO CASE UP SUFFIX BENCHGEN-ARGS...: CASE again with
# every port in each of MODES ("UP MODE" brings sluice up; SUFFIX, if not
# empty, ends the case name as in the native row).
bench_modes() {
	local sc=$1 case=$2 up=$3 suffix=$4 m name mode prog
	shift 4
	for m in "${MODES[@]}"; do
		IFS=: read -r name mode prog <<<"$m"
		# (the emulated guests keep to the rows they had: their run
		# has a deadline, and their figures are ratios only)
		[ -n "$INNER" ] && [ "$mode" = mixed ] && continue
		if $up "$mode"; then
			ip netns exec "$H1" ping -c1 -W1 192.168.10.12 >/dev/null 2>&1
			[ "$sc" = 3 ] && ${BENCH_PRIME:-prime_routed} 1000
			measure "$sc" "$case, $name${suffix:+, $suffix}" "$@"
			progstat "$sc" "$case, $name${suffix:+, $suffix}" "$(sluice_prog_id "$prog")" "$@"
			sluice_down
		else
			na "$sc" "$case, $name${suffix:+, $suffix}" "sluice up failed: $(tail -1 "$WORK/sluice.log")"
		fi
	done
}

# ---- 3: LAN to WAN through NAT ----------------------------------------------------
s3() {
	local flows=1000
	progress "3/9 LAN to WAN through NAT, established flows, 64 B"
	bench_topo_up 0
	# shellcheck disable=SC2207
	local args=($(lan_wan_args $flows))
	# new connections: a SYN a flow, 16384 source ports (one mapping
	# each) times 245 destination ports: a second's SYNs are all new
	local syn=(--gen-ns "$H1" --gen-if eth0 --dst-mac "$BR_MAC" --src-ip 192.168.10.11
		   --dst-ip 203.0.113.1 --sink-ns "$INET" --sink-if eth0 --proto syn --flows 4000000)
	if nft_box "" ""; then
		prime_lan_wan $flows
		measure 3 "nftables masquerade + ct state" "${args[@]}"
		note 3 "nftables masquerade + ct state" conntrack_entries "$(ct_count)"
		ct_flush
		SECS=1 measure 3 "nftables masquerade + ct state: new connections" "${syn[@]}"
	else
		na 3 "nftables masquerade + ct state" "nft failed: $(head -1 "$WORK/nft.err")"
	fi
	nft_off
	if nft_box "" "flowtable ft { hook ingress priority 0; devices = { lan1, wan0 }; }" \
		"ip protocol { tcp, udp } flow add @ft"; then
		prime_lan_wan $flows
		measure 3 "nftables masquerade + flowtable" "${args[@]}"
	else
		na 3 "nftables masquerade + flowtable" "this kernel has no nf_flow_table ($(head -1 "$WORK/nft.err" | cut -c1-80)); see the guest rows"
	fi
	nft_off
	if have_feature nat "forward lan -> wan"; then
		sluice_up && { prime_lan_wan $flows; measure 3 "sluice NAT" "${args[@]}"
			progstat 3 "sluice NAT" "$(sluice_prog_id)" "${args[@]}"; sluice_down; }
		OPEN_LIMITS=1 sluice_up && { SECS=1 measure 3 "sluice NAT: new connections" "${syn[@]}"
			sluice_down; }
		[ -n "$INNER" ] ||
			BENCH_PRIME=prime_lan_wan bench_modes 3 "sluice NAT" sluice_up "" "${args[@]}"
	else
		na 3 "sluice NAT" "not available (NAT)"
	fi

	# The same traffic routed without NAT through the zone policy.
	topo_down
	bench_topo_up 1
	# shellcheck disable=SC2207
	args=($(lan_wan_args $flows))
	if nft_fw; then
		prime_routed $flows
		measure 3 "routed, nftables ct state policy" "${args[@]}"
	else
		na 3 "routed, nftables ct state policy" "nft failed: $(head -1 "$WORK/nft.err")"
	fi
	nft_off
	if ! have_feature conntrack; then
		na 3 "routed, sluice zone policy" "not available (routing and conntrack)"
	elif sluice_fw_up; then
		prime_routed $flows
		measure 3 "routed, sluice zone policy" "${args[@]}"
		progstat 3 "routed, sluice zone policy" "$(sluice_prog_id)" "${args[@]}"
		sluice_down
		bench_modes 3 "routed, sluice zone policy" sluice_fw_mode "" "${args[@]}"
	else
		na 3 "routed, sluice zone policy" "sluice up failed: $(tail -1 "$WORK/sluice.log")"
	fi
}

# ---- 4: inbound port forward ---------------------------------------------------------
s4() {
	local flows=253
	progress "4/9 inbound port forward: 253 outside sources to one inside host, 64 B"
	bench_topo_up 0
	ip netns exec "$RTR" ping -c1 -W1 192.168.10.12 >/dev/null 2>&1	# neighbour entry
	local fwd=(--gen-ns "$INET" --gen-if eth0 --dst-mac "$WAN_MAC" --src-ip 203.0.113.1
		   --dst-ip 203.0.113.2 --sport 20000 --dport 8443 --flows $flows)
	local args=("${fwd[@]}" --sink-ns "$H2" --sink-if eth0)
	if nft_box "" ""; then
		prime_forward "${fwd[@]}"
		measure 4 "nftables dnat + ct state" "${args[@]}"
	else
		na 4 "nftables dnat + ct state" "nft failed: $(head -1 "$WORK/nft.err")"
	fi
	nft_off
	if ! have_feature nat "port-forward wan udp 8443 -> 192.168.10.12:443"; then
		na 4 "sluice port forward" "not available (NAT)"
	elif headroom_for && topo_config "$WORK/sluice.conf" &&
	     echo "port-forward wan udp 8443 -> 192.168.10.12:443" >>"$WORK/sluice.conf" &&
	     rsluice up -c "$WORK/sluice.conf" >"$WORK/sluice.log" 2>&1; then
		prime_forward "${fwd[@]}"
		measure 4 "sluice port forward" "${args[@]}"
		progstat 4 "sluice port forward" "$(sluice_prog_id)" "${args[@]}"
		sluice_down
	else
		na 4 "sluice port forward" "sluice up failed: $(tail -1 "$WORK/sluice.log")"
	fi
}
# Each forwarded flow once each way (ARGS: the inbound generator's), so a
# tracker sees it answered.
prime_forward() {
	prime "$@" --count 253
	sleep 0.2
	prime --gen-ns "$H2" --gen-if eth0 --dst-mac "$BR_MAC" --src-ip 192.168.10.12 \
		--dst-ip 203.0.113.1 --sport 20000 --dport 443 --flows 253 --count 253 --reverse
	sleep 0.2
}

# ---- 5: rule scaling --------------------------------------------------------------------

# gen_rules N FILE-PREFIX: N random rules as users write them (source
# network and service), none matching the benchmark's traffic: as a linear
# chain (FILE.chain) and as one interval set (FILE.set).
gen_rules() {
	/usr/bin/python3 - "$1" "$2" <<'PY'
import random, sys
n, out = int(sys.argv[1]), sys.argv[2]
rnd = random.Random(42)
rules = [("10.%d.%d.0/24" % (rnd.randrange(256), rnd.randrange(256)), rnd.randrange(1, 65536))
         for _ in range(n)]
with open(out + ".chain", "w") as f:
    for net, port in rules:
        f.write("ip saddr %s udp dport %d drop\n" % (net, port))
with open(out + ".sluice", "w") as f:
    for net, port in rules:
        f.write("rule lan -> wan src %s udp dport %d drop\n" % (net, port))
with open(out + ".set", "w") as f:
    if rules:
        f.write("set blk { type ipv4_addr . inet_service; flags interval; elements = {\n")
        f.write(",\n".join("%s . %d" % r for r in sorted(set(rules))))
        f.write("\n} }\n")
PY
}

# The chain rules go in the forward chain, the set in the table.
nft_rules() {	# chain|set FILE-PREFIX
	if [ "$1" = chain ]; then
		nft_box "$(cat "$2.chain")" ""
	elif [ -s "$2.set" ]; then
		nft_box "ip saddr . udp dport @blk drop" "$(cat "$2.set")"
	else
		nft_box "" ""
	fi
}

s5() {
	local n kind flows=1000
	progress "5/9 rule scaling: established and new-connection rates, 64 B"
	bench_topo_up 0
	# shellcheck disable=SC2207
	local args=($(lan_wan_args $flows))
	local syn=(--gen-ns "$H1" --gen-if eth0 --dst-mac "$BR_MAC" --src-ip 192.168.10.11
		   --dst-ip 203.0.113.1 --sink-ns "$INET" --sink-if eth0 --proto syn --flows 200000)
	for n in $RULE_SIZES; do
		gen_rules "$n" "$WORK/rules$n"
		for kind in chain set; do
			if ! nft_rules $kind "$WORK/rules$n"; then
				na 5 "nftables $kind, $n rules" "nft failed: $(head -1 "$WORK/nft.err")"
				continue
			fi
			prime_lan_wan $flows
			measure 5 "nftables $kind, $n rules: established" "${args[@]}"
			ct_flush
			SECS=1 measure 5 "nftables $kind, $n rules: new connections" "${syn[@]}"
			nft_off
		done
		if ! have_feature rules "rule lan -> wan src 10.0.0.0/8 drop"; then
			na 5 "sluice, $n rules: established" "not available (rules)"
			na 5 "sluice, $n rules: new connections" "not available (rules)"
		elif sluice_rules_up "$WORK/rules$n.sluice"; then
			prime_lan_wan $flows
			measure 5 "sluice, $n rules: established" "${args[@]}"
			progstat 5 "sluice, $n rules: established" "$(sluice_prog_id)" "${args[@]}"
			rsluice conntrack flush >/dev/null 2>&1
			SECS=1 measure 5 "sluice, $n rules: new connections" "${syn[@]}"
			rsluice conntrack flush >/dev/null 2>&1
			progstat 5 "sluice, $n rules: new connections" "$(sluice_prog_id)" "${syn[@]}"
			sluice_down
		else
			na 5 "sluice, $n rules" "sluice up failed: $(tail -1 "$WORK/sluice.log")"
		fi
	done
}

# ---- 6: connection tracking scale --------------------------------------------------------
s6() {
	local n objsize max
	progress "6/9 connection tracking scale: established flows through NAT, 64 B"
	bench_topo_up 0
	objsize=$(awk '$1 == "nf_conntrack" {print $4}' /proc/slabinfo 2>/dev/null)
	max=$(ip netns exec "$RTR" cat /proc/sys/net/netfilter/nf_conntrack_max 2>/dev/null)
	for n in $FLOW_SIZES; do
		if nft_box "" ""; then
			prime_lan_wan "$n"
			# shellcheck disable=SC2046
			measure 6 "nftables conntrack, $n flows" $(lan_wan_args "$n")
			note 6 "nftables conntrack, $n flows" conntrack_entries "$(ct_count)"
			note 6 "nftables conntrack, $n flows" conntrack_max "${max:-0}"
			[ -n "$objsize" ] && note 6 "nftables conntrack, $n flows" bytes_per_entry "$objsize"
		else
			na 6 "nftables conntrack, $n flows" "nft failed: $(head -1 "$WORK/nft.err")"
		fi
		nft_off
	done
	# Without NAT: sluice's tracker against the kernel's, same policy.
	topo_down
	bench_topo_up 1
	for n in $FLOWS_FW; do
		if nft_fw; then
			prime_routed "$n"
			# shellcheck disable=SC2046
			measure 6 "routed, nftables conntrack, $n flows" $(lan_wan_args "$n")
			note 6 "routed, nftables conntrack, $n flows" conntrack_entries "$(ct_count)"
		else
			na 6 "routed, nftables conntrack, $n flows" "nft failed: $(head -1 "$WORK/nft.err")"
		fi
		nft_off
		if ! have_feature conntrack; then
			na 6 "routed, sluice conntrack, $n flows" "not available (connection tracking)"
		elif sluice_fw_up "$n"; then
			prime_routed "$n"
			# shellcheck disable=SC2046
			measure 6 "routed, sluice conntrack, $n flows" $(lan_wan_args "$n")
			note 6 "routed, sluice conntrack, $n flows" conntrack_entries \
				"$(rsluice conntrack --json 2>/dev/null | /usr/bin/python3 -c 'import json,sys; print(len(json.load(sys.stdin)))' 2>/dev/null || echo 0)"
			# the tables' kernel memory, element headers included (status)
			rsluice status --json >"$WORK/status.json" 2>/dev/null &&
				note 6 "routed, sluice conntrack, $n flows" bytes_per_flow \
					"$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["conntrack"]["bytes_per_ipv4_flow"])' "$WORK/status.json" 2>/dev/null || echo 0)" &&
				note 6 "routed, sluice conntrack, $n flows" table_bytes \
					"$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["conntrack"]["bytes"])' "$WORK/status.json" 2>/dev/null || echo 0)"
			sluice_down
		else
			na 6 "routed, sluice conntrack, $n flows" "sluice up failed: $(tail -1 "$WORK/sluice.log")"
		fi
	done
}

# ---- 7: ruleset load and replace ------------------------------------------------------------
s7() {
	local n t0 t1 t2 kind
	progress "7/9 ruleset load and replace times"
	bench_topo_up 0
	for n in $RULE_SIZES; do
		[ "$n" = 0 ] && continue
		[ -f "$WORK/rules$n.chain" ] || gen_rules "$n" "$WORK/rules$n"
		for kind in chain set; do
			nft_off
			t0=$(date +%s%N)
			if ! nft_rules $kind "$WORK/rules$n"; then
				na 7 "nft -f, $kind, $n rules" "nft failed: $(head -1 "$WORK/nft.err")"
				continue
			fi
			t1=$(date +%s%N)
			nft_rules $kind "$WORK/rules$n"	# the file flushes first: a replace
			t2=$(date +%s%N)
			record 7 "nft -f, $kind, $n rules" \
				"{\"load_s\": $(( (t1 - t0) / 1000000 ))e-3, \"replace_s\": $(( (t2 - t1) / 1000000 ))e-3}"
			progress "  nft -f, $kind, $n rules: load $(( (t1 - t0) / 1000000 )) ms, replace $(( (t2 - t1) / 1000000 )) ms"
		done
		nft_off
		if ! have_feature rules "rule lan -> wan src 10.0.0.0/8 drop"; then
			na 7 "sluice reload, $n rules" "not available (rules)"
			continue
		fi
		if ! sluice_rules_up /dev/null; then
			na 7 "sluice reload, $n rules" "sluice up failed: $(tail -1 "$WORK/sluice.log")"
			continue
		fi
		cp "$WORK/rules.conf" "$WORK/rules7.conf"
		cat "$WORK/rules$n.sluice" >>"$WORK/rules7.conf"
		t0=$(date +%s%N)
		rsluice reload -c "$WORK/rules7.conf" >"$WORK/sluice.log" 2>&1
		t1=$(date +%s%N)
		rsluice reload -c "$WORK/rules7.conf" >>"$WORK/sluice.log" 2>&1	# a full rebuild and swap
		t2=$(date +%s%N)
		# the classifier's key maps (both slots), as the kernel accounts them
		local keys
		keys=$(bpftool map show -j 2>/dev/null | /usr/bin/python3 -c '
import json, sys
print(sum(m.get("bytes_memlock", 0) for m in json.load(sys.stdin) if m.get("name") == "sluice_rkeys"))' 2>/dev/null)
		record 7 "sluice reload, $n rules" \
			"{\"load_s\": $(( (t1 - t0) / 1000000 ))e-3, \"replace_s\": $(( (t2 - t1) / 1000000 ))e-3, \"keys_bytes\": ${keys:-0}}"
		progress "  sluice reload, $n rules: load $(( (t1 - t0) / 1000000 )) ms, replace $(( (t2 - t1) / 1000000 )) ms, keys ${keys:-?} B"
		sluice_down
	done
}

# ---- 8: shaping quality ----------------------------------------------------------------------

# A small topology of its own: two LAN clients, the router, a "modem" with
# a bloated buffer (a token bucket at the line rate holding 500 ms) and a
# server. The shaper under test sits on the router's WAN egress at 95% of
# the line rate, as users set it; without one the modem's buffer fills.
SH_LINK=20	# Mbit/s, the modem's upload rate
SH_RATE=19	# Mbit/s, the shaper's rate (95%)
shape_topo_up() {
	SH=$(unique_tag)s
	local n
	for n in c1 c2 rtr mdm srv; do
		ip netns add "$SH-$n" || return 1
		ip -n "$SH-$n" link set lo up
	done
	ip netns exec "$SH-rtr" sysctl -qw net.ipv4.ip_forward=1
	ip netns exec "$SH-mdm" sysctl -qw net.ipv4.ip_forward=1
	ip -n "$SH-rtr" link add lan1 type veth peer name eth0 netns "$SH-c1"
	ip -n "$SH-rtr" link add lan2 type veth peer name eth0 netns "$SH-c2"
	ip -n "$SH-rtr" link add wan0 type veth peer name in0 netns "$SH-mdm"
	ip -n "$SH-mdm" link add out0 type veth peer name eth0 netns "$SH-srv"
	ip -n "$SH-rtr" addr add 10.1.0.1/24 dev lan1
	ip -n "$SH-rtr" addr add 10.2.0.1/24 dev lan2
	ip -n "$SH-rtr" addr add 10.9.0.1/30 dev wan0
	ip -n "$SH-mdm" addr add 10.9.0.2/30 dev in0
	ip -n "$SH-mdm" addr add 10.8.0.1/30 dev out0
	ip -n "$SH-srv" addr add 10.8.0.2/30 dev eth0
	ip -n "$SH-c1" addr add 10.1.0.2/24 dev eth0
	ip -n "$SH-c2" addr add 10.2.0.2/24 dev eth0
	for n in lan1 lan2 wan0; do ip -n "$SH-rtr" link set "$n" up; done
	ip -n "$SH-mdm" link set in0 up; ip -n "$SH-mdm" link set out0 up
	for n in c1 c2 srv; do ip -n "$SH-$n" link set eth0 up; done
	# MTU-sized segments from the clients (no TSO: a 64 KB segment is a
	# 26 ms burst at 20 Mbit/s, which no EDT shaper can split)
	for n in c1 c2; do ip netns exec "$SH-$n" ethtool -K eth0 tx off >/dev/null 2>&1; done
	ip -n "$SH-c1" route add default via 10.1.0.1
	ip -n "$SH-c2" route add default via 10.2.0.1
	ip -n "$SH-rtr" route add default via 10.9.0.2
	ip -n "$SH-mdm" route add 10.0.0.0/8 via 10.9.0.1
	ip -n "$SH-srv" route add default via 10.8.0.1
	ip netns exec "$SH-mdm" tc qdisc add dev out0 root tbf rate ${SH_LINK}mbit burst 16k latency 500ms
}
shape_topo_down() {
	local n
	[ -n "${SH:-}" ] || return 0
	for n in c1 c2 rtr mdm srv; do
		ip netns pids "$SH-$n" 2>/dev/null | xargs -r kill 2>/dev/null
		ip netns del "$SH-$n" 2>/dev/null
	done
	SH=
}

# shape_case NAME: 4 bulk TCP flows from c1 to the server for LOAD seconds
# while c2 pings it; latency under load is the added round-trip time.
shape_case() {
	local name=$1 load=$2 iperf_pid
	ip netns exec "$SH-c2" ping -c 10 -i 0.2 10.8.0.2 > "$WORK/idle.txt" 2>&1
	ip netns exec "$SH-c1" timeout $((load + 30)) iperf3 -c 10.8.0.2 -P 4 -t "$load" -J \
		> "$WORK/iperf.json" 2>&1 &
	iperf_pid=$!
	sleep 2	# past slow start
	ip netns exec "$SH-c2" ping -c $(( (load - 3) * 5 )) -i 0.2 10.8.0.2 > "$WORK/loaded.txt" 2>&1
	wait $iperf_pid
	/usr/bin/python3 - "$WORK" <<'PY' > "$WORK/shape.json" || return 1
import json, re, sys, statistics as st
w = sys.argv[1]
rtt = lambda f: [float(x) for x in re.findall(r"time=([0-9.]+) ms", open(w + f).read())]
idle, loaded = rtt("/idle.txt"), rtt("/loaded.txt")
j = json.load(open(w + "/iperf.json"))
flows = [s["receiver"]["bits_per_second"] / 1e6 for s in j["end"]["streams"]]
jain = sum(flows) ** 2 / (len(flows) * sum(x * x for x in flows))
q = lambda v, p: sorted(v)[min(len(v) - 1, int(p * len(v)))] if v else 0
print(json.dumps({"throughput_mbps": round(sum(flows), 2), "jain": round(jain, 3),
      "idle_ms": round(st.median(idle), 2) if idle else 0,
      "loaded_p50_ms": round(q(loaded, 0.5), 2), "loaded_p95_ms": round(q(loaded, 0.95), 2),
      "added_ms": round(q(loaded, 0.5) - (st.median(idle) if idle else 0), 2),
      "rtt_samples": loaded}))
PY
	record 8 "$name" "$(cat "$WORK/shape.json")"
}

s8() {
	local load=15 root
	[ "$QUICK" = 1 ] && load=6
	shape_topo_up || { na 8 "topology" "cannot build the shaping topology"; shape_topo_down; return; }
	ip netns exec "$SH-srv" iperf3 -s -D
	sleep 0.5
	shape_case "no shaping (bloated modem)" $load
	if ip netns exec "$SH-rtr" tc qdisc replace dev wan0 root cake bandwidth ${SH_RATE}mbit 2>"$WORK/tc.err"; then
		shape_case "cake ${SH_RATE} Mbit/s" $load
	else
		na 8 "cake ${SH_RATE} Mbit/s" "no cake here: $(head -1 "$WORK/tc.err")"
	fi
	ip netns exec "$SH-rtr" tc qdisc del dev wan0 root 2>/dev/null
	root="ip netns exec $SH-rtr tc"
	if $root qdisc add dev wan0 root handle 1: htb default 1 2>"$WORK/tc.err" &&
	   $root class add dev wan0 parent 1: classid 1:1 htb rate ${SH_RATE}mbit ceil ${SH_RATE}mbit &&
	   $root qdisc add dev wan0 parent 1:1 fq_codel 2>>"$WORK/tc.err"; then
		shape_case "HTB + fq_codel ${SH_RATE} Mbit/s" $load
	else
		na 8 "HTB + fq_codel ${SH_RATE} Mbit/s" "$(head -1 "$WORK/tc.err")"
	fi
	ip netns exec "$SH-rtr" tc qdisc del dev wan0 root 2>/dev/null
	shape_sluice $load
	shape_topo_down
}

# sluice's shaper on the router (last: `down` turns forwarding off).
shape_sluice() {
	local load=$1 cfg=$WORK/shape.conf n
	local sl="nsenter --net=/run/netns/$SH-rtr $TOP/build/sluice -p /sys/fs/bpf/sluice-$SH"
	cat > "$cfg" <<EOF
zone lan {
	interfaces lan1 lan2
	input accept
}
zone wan {
	interfaces wan0
	input accept
}
forward lan -> wan
shape wan upload ${SH_RATE}mbit download 1gbit
port lan1 mode xdp
port lan2 mode xdp
port wan0 mode xdp
EOF
	for n in lan1 lan2 wan0; do ip netns exec "$SH-rtr" ethtool -K "$n" gro off >/dev/null 2>&1; done
	if ! $sl up -c "$cfg" > "$WORK/sluice-up.log" 2>&1; then
		na 8 "sluice EDT shaper ${SH_RATE} Mbit/s" "sluice up failed: $(grep -m1 'sluice:' "$WORK/sluice-up.log" | cut -c1-120)"
		return
	fi
	shape_case "sluice EDT shaper ${SH_RATE} Mbit/s" "$load"
	$sl down > /dev/null 2>&1
}

# The shape stage's cost per packet on this machine (BPF_PROG_TEST_RUN of
# the tc entry, an established flow, shaped against unshaped): CPU figures
# from the emulated guest would be noise.
shape_cost() {
	local n=20000 out
	[ "$QUICK" = 1 ] && n=2000
	if out=$("$TOP/build/test_xdp" --bench-shape $n 2>/dev/null | grep '^{'); then
		record 8 "BPF time per shaped packet (host)" "$out"
	else
		na 8 "BPF time per shaped packet (host)" "test_xdp --bench-shape failed"
	fi
}

# ---- 10: NAT over a PPPoE WAN (a Debian guest: the kernel's pppoe driver) ------------------
# The router dials the ISP's pppoe-server with pppd (ppp0, MTU 1492), as
# selftests/netns/test_pppoe_wan.sh does, and masquerades a LAN host's UDP
# flows into the session. The kernel path: ppp0 (the pppoe driver puts the
# session header on, and takes it off the replies) with nftables
# masquerade; sluice serves the session on wan0 itself. Upload: the LAN
# host's frames, counted in their session frames at the ISP; download: the
# ISP's replies in session frames, to the LAN host. Then the download with
# the session's frames spread over the guest's two CPUs (`spread on`, the
# default) against one (`spread off`): the guest runs multi-threaded TCG,
# so two vCPUs are two host threads.
PPPOE_FLOWS=100
s10() {
	progress "10/10 NAT over a PPPoE WAN: the kernel's pppoe driver and nftables against sluice serving the session"
	if [ -z "$INNER" ]; then
		if [ "$QUICK" = 1 ]; then	# (a guest of its own: make check's CI budget)
			na 10 "PPPoE" "make bench only: it boots a Debian guest of its own (minutes)"
			return
		fi
		# (multi-threaded TCG, so that the guest's two vCPUs are two host
		# threads and the session can spread; a case takes a minute there,
		# mostly benchgen starting under emulation: 2 runs of each, in at
		# most 30 minutes)
		SLUICE_QEMU_ACCEL=tcg,thread=multi SLUICE_GUEST_ENV="BENCH_RUNS BENCH_STAT_RUNS" \
			BENCH_RUNS=2 BENCH_STAT_RUNS=2 BENCH_GUEST_TIMEOUT=${BENCH_GUEST_TIMEOUT:-1800} \
			guest_run 6.1 10
		return
	fi
	modprobe pppoe 2>/dev/null
	if [ ! -e /proc/net/pppoe ] || ! command -v pppoe-server >/dev/null || ! command -v pppd >/dev/null; then
		na 10 "PPPoE" "no pppoe driver, pppd or pppoe-server here"
		return
	fi
	if ! pppoe_topo_up; then
		na 10 "PPPoE" "pppd did not bring ppp0 up: $(tail -1 "$WORK/pppd.log")"
		return
	fi
	local up=(--gen-ns "$H1" --gen-if eth0 --dst-mac "$(mac_of "$RTR" lan1)" --src-ip 192.168.10.11
		  --dst-ip 198.51.100.1 --flows $PPPOE_FLOWS --sink-ns "$ISP" --sink-if eth0)
	local down=(--gen-ns "$ISP" --gen-if eth0 --dst-mac "$(mac_of "$RTR" wan0)" --pppoe "$SID"
		    --src-ip 198.51.100.1 --dst-ip "$PPP_ADDR" --flows $PPPOE_FLOWS --reverse
		    --sink-ns "$H1" --sink-if eth0)
	# (the generator straight into a sink: what the harness itself costs
	# a packet here, for the router-only figures)
	# (GRO on both ends, as on the router's ports and the hosts')
	ip -n "$H1" link add gen0 type veth peer name eth1 netns "$ISP" &&
		ip -n "$H1" link set gen0 up && ip -n "$ISP" link set eth1 up &&
		ip netns exec "$H1" ethtool -K gen0 gro on >/dev/null 2>&1 &&
		ip netns exec "$ISP" ethtool -K eth1 gro on >/dev/null 2>&1 &&
		measure 10 "harness: generator to sink, no router" --gen-ns "$H1" --gen-if gen0 \
			--dst-mac "$(mac_of "$ISP" eth1)" --src-ip 192.168.10.11 --dst-ip 198.51.100.1 \
			--flows $PPPOE_FLOWS --sink-ns "$ISP" --sink-if eth1
	if pppoe_nft; then
		pppoe_prime "${up[@]}"
		measure 10 "kernel pppoe + nftables masquerade, upload" "${up[@]}"
		measure 10 "kernel pppoe + nftables masquerade, download" "${down[@]}"
	else
		na 10 "kernel pppoe + nftables masquerade" "nft failed: $(head -1 "$WORK/nft.err")"
	fi
	ip netns exec "$RTR" nft flush ruleset 2>/dev/null
	ct_flush
	if pppoe_sluice on; then
		pppoe_prime "${up[@]}"
		measure 10 "sluice serving the session, upload" "${up[@]}"
		progstat 10 "sluice serving the session, upload" "$(sluice_prog_id)" "${up[@]}"
		note 10 "sluice serving the session, download, spread over 2 CPUs" spread_cpus "$(pppoe_spread)"
		measure 10 "sluice serving the session, download, spread over 2 CPUs" "${down[@]}"
		pppoe_sluice off && note 10 "sluice serving the session, download, 1 CPU" spread_cpus "$(pppoe_spread)" &&
			measure 10 "sluice serving the session, download, 1 CPU" "${down[@]}"
		progstat 10 "sluice serving the session, download, 1 CPU" "$(sluice_prog_id)" "${down[@]}"
		rsluice down >/dev/null 2>&1
	else
		na 10 "sluice serving the session" "sluice did not serve ppp0: $(tail -1 "$WORK/sluice.log")"
	fi
}
# The LAN host, the router and the ISP; pppd dialled. Sets SID (the
# session) and PPP_ADDR (the router's end).
pppoe_topo_up() {
	local ns i
	topo_down
	TAG=$(unique_tag)
	RTR=$TAG-rtr ISP=$TAG-isp H1=$TAG-h1 PIN=/sys/fs/bpf/sluice-$TAG
	for ns in "$RTR" "$ISP" "$H1"; do
		ip netns add "$ns" && ip -n "$ns" link set lo up || return 1
	done
	ip -n "$RTR" link add wan0 type veth peer name eth0 netns "$ISP" || return 1
	ip -n "$RTR" link add lan1 type veth peer name eth0 netns "$H1" || return 1
	ip -n "$RTR" addr add 192.168.10.1/24 dev lan1
	for i in "$RTR wan0" "$RTR lan1" "$ISP eth0" "$H1 eth0"; do
		set -- $i
		ip -n "$1" link set "$2" up
		ip netns exec "$1" ethtool -K "$2" gro on >/dev/null 2>&1
	done
	ip netns exec "$RTR" sysctl -qw net.ipv4.ip_forward=1
	ip -n "$H1" addr add 192.168.10.11/24 dev eth0
	ip -n "$H1" route add default via 192.168.10.1
	ip -n "$ISP" addr add 198.51.100.1/32 dev lo
	printf 'noauth\nlcp-echo-interval 5\nlcp-echo-failure 4\nmtu 1492\nmru 1492\n' >"$WORK/pppoe-options"
	ip netns exec "$ISP" pppoe-server -I eth0 -L 100.64.0.1 -R 100.64.0.10 -N 4 \
		-O "$WORK/pppoe-options" || return 1
	ip netns exec "$RTR" pppd plugin pppoe.so nic-wan0 user sluice noauth noipdefault defaultroute \
		mtu 1492 mru 1492 lcp-echo-interval 5 lcp-echo-failure 4 unit 0 >"$WORK/pppd.log" 2>&1 &
	for i in $(seq 60); do
		PPP_ADDR=$(ip -n "$RTR" -4 -o addr show dev ppp0 2>/dev/null | awk '{sub(/\/.*/, "", $4); print $4; exit}')
		[ -n "$PPP_ADDR" ] && break
		sleep 1
	done
	# (the kernel prints the id's two bytes as this little-endian CPU
	# holds them: loader/pppoe.c)
	SID=$(ip netns exec "$RTR" awk 'NR == 2 {print $1}' /proc/net/pppoe 2>/dev/null)
	[ -n "$PPP_ADDR" ] && [ -n "$SID" ] || return 1
	SID=$(( (16#$SID & 0xff) << 8 | (16#$SID >> 8 & 0xff) ))
	[ "$SID" != 0 ]
}
pppoe_nft() {
	cat > "$WORK/pppoe.nft" <<NFT
flush ruleset
table inet box {
	chain forward {
		type filter hook forward priority 0; policy drop;
		ct state established,related accept
		iifname "lan1" oifname "ppp0" accept
	}
	chain postrouting {
		type nat hook postrouting priority 100;
		oifname "ppp0" masquerade
	}
}
NFT
	ip netns exec "$RTR" nft -f "$WORK/pppoe.nft" 2>"$WORK/nft.err"
}
# pppoe_sluice on|off: sluice up (or reloaded) serving ppp0, SPREAD on or off
pppoe_sluice() {
	printf 'zone lan {\n interfaces lan1\n input accept\n}\nzone wan {\n interfaces ppp0\n input drop\n masquerade\n}\nforward lan -> wan\nport lan1 mode xdp\nport wan0 mode xdp\nspread %s\n' \
		"$1" > "$WORK/pppoe.conf"
	headroom_for
	if [ -d "$PIN" ]; then
		rsluice reload -c "$WORK/pppoe.conf" >"$WORK/sluice.log" 2>&1
	else
		rsluice up -c "$WORK/pppoe.conf" >"$WORK/sluice.log" 2>&1
	fi || return 1
	rsluice status 2>/dev/null | grep -q "served on wan0"
}
pppoe_spread() { json_get "$(rsluice status --json)" "j.get('spread_cpus', 0)" 2>/dev/null || echo 0; }
# pppoe_prime UPLOAD-ARGS...: each flow once up and once down, so it is
# established for both paths (masquerade keeps the ports)
pppoe_prime() {
	prime "$@" --count $PPPOE_FLOWS --seconds 1
	sleep 0.2
	prime --gen-ns "$ISP" --gen-if eth0 --dst-mac "$(mac_of "$RTR" wan0)" --pppoe "$SID" \
		--src-ip 198.51.100.1 --dst-ip "$PPP_ADDR" --flows $PPPOE_FLOWS --reverse \
		--count $PPPOE_FLOWS
	sleep 0.2
}

# ---- guest runs ----------------------------------------------------------------------------

# guest_run KERNEL SCENARIO: run one scenario inside a stock Debian kernel
# under qemu (selftests/qemu) and keep its result lines. TCG emulation makes
# absolute figures meaningless there: only ratios within one guest run count.
guest_run() {
	local k=$1 sc=$2
	progress "  scenario $sc in the Debian $k guest (qemu TCG; ratios only)"
	# (from the tree: an arm64 guest shares the working directory, with
	# build/arm64 as its build)
	(cd "$TOP" && "$TOP/selftests/qemu/run-in-guest.sh" -t "${BENCH_GUEST_TIMEOUT:-1200}" "$k" -- \
		"$TOP/tools/bench/bench.sh" --inner "$sc" $([ "$QUICK" = 1 ] && echo --quick)) \
		> "$WORK/guest.out" 2> "$WORK/guest.err"
	local rc=$?
	# only whole lines: a console line cut or interleaved by the kernel's
	# messages is reported, never written
	/usr/bin/python3 - "$k" "$WORK/guest.out" >> "$RES" <<'EOF'
import json, sys
for line in open(sys.argv[2], errors="replace"):
    if not line.startswith('{"scenario"'):
        continue
    try:
        r = json.loads(line)
    except ValueError:
        print("bench: a guest result line was garbled: %r" % line[:100], file=sys.stderr)
        continue
    print(json.dumps(dict(guest=sys.argv[1], **r)))
EOF
	if [ $rc != 0 ]; then
		na "$sc" "guest $k run" "the guest run failed (status $rc): $(tail -1 "$WORK/guest.err" | cut -c1-120)"
	fi
}

# ---- 2 and 3 on an arm64 board ----------------------------------------------------------
# The bridge and NAT rows, kernel path against sluice, 64 B, inside the
# arm64 guest (Debian 13's arm64 kernel on the emulated two-core board,
# the arm64 build): what an arm64 board's ratios look like. The full
# scenarios' other rows (modes, 1518 B, new connections, routing) stay on
# the host: the guest's run has a deadline.
s_board() {
	local flows=1000 args
	bench_topo_up
	bridge_rows 64
	topo_down
	bench_topo_up 0
	# shellcheck disable=SC2207
	args=($(lan_wan_args $flows))
	if nft_box "" ""; then
		prime_lan_wan $flows
		measure 3 "nftables masquerade + ct state" "${args[@]}"
	else
		na 3 "nftables masquerade + ct state" "nft failed: $(head -1 "$WORK/nft.err")"
	fi
	nft_off
	if sluice_up; then
		prime_lan_wan $flows
		measure 3 "sluice NAT" "${args[@]}"
		progstat 3 "sluice NAT" "$(sluice_prog_id)" "${args[@]}"
		sluice_down
	else
		na 3 "sluice NAT" "sluice up failed: $(tail -1 "$WORK/sluice.log")"
	fi
}

# ---- 9: real drivers ------------------------------------------------------------------------
# TCP through the box suite's Debian 13 box (selftests/box/bench.sh):
# e1000e and virtio NICs and a PPPoE WAN, sluice from its .deb against the
# kernel's path on the same box. A full run only: the box is built and booted (minutes).
s9() {
	progress "9/9 real drivers: TCP through a Debian 13 box, e1000e and virtio NICs (qemu TCG; ratios only)"
	if [ "$QUICK" = 1 ]; then
		na 9 "real drivers" "make bench only: it builds and boots the box suite's Debian 13 box (minutes)"
		return
	fi
	: >"$WORK/box.jsonl"
	SLUICE_BOX_ONLY="t_bench t_bench_pppoe" SLUICE_BOX_BENCH=$WORK/box.jsonl \
		bash "$TOP/selftests/box/test_box.sh" 13 >"$WORK/box.log" 2>&1 ||
		na 9 "box run" "the box suite failed: $(grep -m1 '^FAIL' "$WORK/box.log" | cut -c1-120)"
	/usr/bin/python3 - "$WORK/box.jsonl" >>"$RES" <<'EOF'
import json, sys
for line in open(sys.argv[1]):
    try:
        print(json.dumps(json.loads(line)))
    except ValueError:
        print("bench: a box result line was garbled: %r" % line[:100], file=sys.stderr)
EOF
	grep '^PASS .*bench: ' "$WORK/box.log" | sed 's/^PASS [^:]*: bench: /  /' | while read -r l; do progress "$l"; done
}

# ---- main ------------------------------------------------------------------------------------

if [ "$(id -u)" != 0 ]; then
	echo "bench: needs root (namespaces, BPF): sudo make bench" >&2
	exit 2
fi
for t in "$GEN" "$TOP/build/sluice" "$TOP/build/xdp_pass.bpf.o"; do
	[ -e "$t" ] || { echo "bench: $t is missing: run make first" >&2; exit 2; }
done

if [ -n "$INNER" ]; then	# inside a guest: one scenario, lines on stdout
	case $INNER in
	3) s3 ;;
	8) s8 ;;
	10) s10 ;;
	board) s_board ;;
	*) echo "bench: --inner $INNER: no such guest scenario" >&2; exit 2 ;;
	esac
	exit 0
fi

# The commit measured; -dirty when files other than the report being
# written (docs/bench) differ from it.
bench_commit() {
	local c
	c=$(git -C "$TOP" rev-parse --short HEAD 2>/dev/null) || { echo unknown; return; }
	git -C "$TOP" diff --quiet HEAD -- . ':!docs/bench' 2>/dev/null || c="$c-dirty"
	echo "$c"
}

# Whether this kernel lets an XDP program call bpf_xdp_adjust_meta() (the
# loader's own probe, util.c: a kernel built to refuse it rejects the
# program with EINVAL). Where it does not, sluice's XDP ports hand every
# frame to tc, and the report says what its native rows measure then.
xdp_meta_works() {
	/usr/bin/python3 - <<'EOF'
import ctypes, os, platform, struct
insn = lambda code, regs, imm: struct.pack("<BBhi", code, regs, 0, imm)
prog = insn(0xb7, 0x2, -4) + insn(0x85, 0, 54) + insn(0xb7, 0, 2) + insn(0x95, 0, 0)
buf, lic = ctypes.create_string_buffer(prog, len(prog)), ctypes.create_string_buffer(b"GPL")
attr = struct.pack("<IIQQ", 6, 4, ctypes.addressof(buf), ctypes.addressof(lic)).ljust(128, b"\0")
libc = ctypes.CDLL(None, use_errno=True)
nr = {"x86_64": 321, "aarch64": 280}.get(platform.machine(), 321)
fd = libc.syscall(nr, 5, ctypes.create_string_buffer(attr, len(attr)), len(attr))
err = ctypes.get_errno()
if fd >= 0:
    os.close(fd)
print("true" if fd >= 0 or err != 22 else "false")
EOF
}

START=$SECONDS
# Packet rates are measured with BPF statistics off: they add two clock
# reads to every program run. progstat turns them on for its own runs only.
STATS_OLD=$(sysctl -n kernel.bpf_stats_enabled)
sysctl -qw kernel.bpf_stats_enabled=0
{
	echo "{\"machine\": {\"cpu\": \"$(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo)\","
	echo " \"cores\": $(nproc), \"kernel\": \"$(uname -r)\","
	echo " \"os\": \"$(. /etc/os-release; echo "$PRETTY_NAME")\","
	echo " \"commit\": \"$(bench_commit)\", \"xdp_meta\": $(xdp_meta_works),"
	echo " \"date\": \"$(date -u +%Y-%m-%dT%H:%MZ)\", \"quick\": $QUICK, \"runs\": $RUNS, \"seconds\": $SECS}}"
} | tr -d '\n' > "$OUT/machine.json"
for sc in $SCENARIOS; do
	case $sc in
	1) s1 ;;
	2) s2 ;;
	# (--quick runs the guest harness once, with scenario 8's shaping)
	3) s3; topo_down; [ "$QUICK" = 1 ] || guest_run 6.12 3
	   # (the arm64 board's bridge and NAT rows: a full run only)
	   if [ "$QUICK" = 1 ]; then :
	   elif [ -x "$TOP/build/arm64/benchgen" ]; then guest_run arm64-6.12 board
	   else na 3 "guest arm64-6.12 run" "no arm64 build: make ARCH=arm64"; fi ;;
	4) s4 ;;
	5) s5 ;;
	6) s6 ;;
	7) s7 ;;
	8) topo_down; progress "8/9 shaping quality (Debian 6.12 guest: sch_fq and cake exist only there)"
	   shape_cost
	   guest_run 6.12 8 ;;
	9) topo_down; s9 ;;
	10) topo_down; s10 ;;
	*) echo "bench: no scenario $sc" >&2 ;;
	esac
done
topo_down
progress "measured in $((SECONDS - START)) s; writing $OUT/REPORT.md"
/usr/bin/python3 "$TOP/tools/bench/report.py" "$OUT"
