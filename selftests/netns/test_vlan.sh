#!/bin/bash
# The bridge fast path on a VLAN-filtering bridge, with the daemon running:
# two VLANs on one bridge, untagged (access) and tagged (trunk) ports. The
# VLANs stay apart, frames leave every port tagged or untagged as the
# kernel bridge would send them, and the unicast between hosts of one VLAN
# takes the fast path, pushing and popping tags on the way.
#
#   $RTR  router: br-v (vlan_filtering 1, no address), ports lan1..lan5
#     lan1  VLAN 10 PVID untagged   $A1  eth0       10.0.0.11
#     lan2  VLAN 10 tagged          $A2  eth0.10    10.0.0.14
#                                   $A2X eth0.20    10.0.0.24 (tags 20 into a
#                                        VLAN 10 port: ingress filtering)
#     lan3  VLANs 10, 20 tagged     $T   eth0 (no address), its two VLAN
#                                   devices in namespaces of their own:
#                                   $T10 eth0.10    10.0.0.13
#                                   $T20 eth0.20    10.0.0.23
#     lan4  VLAN 20 PVID untagged   $B1  eth0       10.0.0.21
#     lan5  VLAN 20 PVID untagged   $B2  eth0       10.0.0.25
#
# One IPv4 subnet across both VLANs, so only the bridge keeps them apart.
# A VLAN device of a host is the only place its tagged frames can arrive,
# and each sits alone in its namespace: a frame with a wrong tag or none
# reaches no one who answers, a frame that arrives tagged on an access port
# is not for the host's IP stack.
#
# Every port and host keeps a veth's default offloads. A veth never shows
# XDP a tag its peer's stack left in the skb's metadata, so each port the
# config gives XDP runs native>tc: the tc program beside XDP reads the tag
# from the skb (where the kernel always puts it before tc) and does the
# port's work, its fast path included, pushing and popping tags with tc's
# helpers. With SLUICE_TEST_PORT_MODE (the tcmode suite: tc, or mixed with
# lan2 and lan4 in tc mode) those ports run tc alone.
#
# Needs 802.1Q VLAN devices and bridge VLAN filtering (the Debian kernels
# have both); elsewhere it is one SKIP line with the reason.
SUITE=vlan${SLUICE_TEST_PORT_MODE:+ ($SLUICE_TEST_PORT_MODE mode)}
. "$(dirname "$0")/lib.sh"
require_root

own_topo vlan
A1=$TAG-a1 A2=$TAG-a2 A2X=$TAG-a2x T=$TAG-t T10=$TAG-t10 T20=$TAG-t20 B1=$TAG-b1 B2=$TAG-b2

# ---- does this kernel have what the test needs? -------------------------------------
# A missing feature is a skip on this machine's kernel, a failure in the
# Debian guests (run.sh labels them), which ship both.
missing() {
	if [ "${SLUICE_KERNEL:-host}" = host ]; then
		skip "VLAN-filtering bridge with tagged and untagged ports: $1 (kernel $(uname -r))"
		exit 0
	fi
	fail "VLAN-filtering bridge with tagged and untagged ports: $1 (kernel $(uname -r))"
	exit 1
}
ip netns add "$TAG-probe" || { fail "create a namespace"; exit 1; }
if ! out=$(ip -n "$TAG-probe" link add br-v type bridge vlan_filtering 1 2>&1); then
	missing "no VLAN filtering in the bridge (CONFIG_BRIDGE_VLAN_FILTERING): $out"
fi
ip -n "$TAG-probe" link add p0 type veth peer name p1
if ! out=$(ip -n "$TAG-probe" link add link p0 name p0.10 type vlan id 10 2>&1); then
	missing "no 802.1Q VLAN devices (CONFIG_VLAN_8021Q): $out"
fi
ip netns del "$TAG-probe"

# delta S0 S1 PORT EXPR
delta() { echo $(( $(st "$2" "$3" "$4") - $(st "$1" "$3" "$4") )); }
fdb_lacks() { fdb_json | json_get "$(cat)" "any(e['mac']=='$1' and e['vlan']==$2 for e in j['entries'])" | grep -q False; }
ifindex() { ip -n "$RTR" -j link show "$1" | json_get "$(cat)" "j[0]['ifindex']"; }
# Echo requests a namespace's IP stack took in (it answers every one).
in_echos() {
	in_ns "$1" awk '/^Icmp:/ { if (!h) { for (i = 2; i <= NF; i++) c[$i] = i; h = 1 } else print $c["InEchos"] }' /proc/net/snmp
}
# port_field PORT EXPR: python on sluice_ports' value for PORT (v)
port_field() {
	local idx
	idx=$(ifindex "$1")
	bpftool -j map lookup pinned "$PIN/sluice_ports" key $(printf '0x%02x 0x%02x 0x%02x 0x%02x' \
		$((idx & 255)) $((idx >> 8 & 255)) $((idx >> 16 & 255)) $((idx >> 24 & 255))) 2>/dev/null |
		json_get "$(cat)" "(lambda v: $2)(j['formatted']['value'] if 'formatted' in j else j['value'])"
}
# sluice_vlans as "port:vid:flags" words
vlans_map() {
	local names
	names=$(ip -n "$RTR" -j link show | json_get "$(cat)" "' '.join('%d=%s' % (l['ifindex'], l['ifname']) for l in j)")
	bpftool -j map dump pinned "$PIN/sluice_vlans" | json_get "$(cat)" "
' '.join(sorted('%s:%d:%d' % (dict(x.split('=') for x in '$names'.split())[str(e['key']['ifindex'])],
	e['key']['vid'], e['value']['flags']) for e in [x.get('formatted', x) for x in j]))"
}
vlans_are() { [ "$(vlans_map)" = "$1" ]; }
export -f rsluice json_get port_is vlans_map vlans_are fdb_json fdb_lacks
export RTR PIN SLUICE

# ---- the topology ------------------------------------------------------------------
tc_port() {
	case ${SLUICE_TEST_PORT_MODE:-} in
	tc) return 0 ;;
	mixed) [ "$1" = lan2 ] || [ "$1" = lan4 ] ;;
	*) return 1 ;;
	esac
}
# host NS PORT: a namespace whose eth0 is the peer of the router's PORT
host() {
	ip netns add "$1" || return 1
	ip -n "$1" link set lo up
	ip -n "$RTR" link add "$2" type veth peer name eth0 netns "$1"
	ip -n "$RTR" link set "$2" master br-v up
	ip -n "$1" link set eth0 up
}
# vlan_dev NS VID DEST_NS ADDR: eth0.VID of NS, moved into DEST_NS
vlan_dev() {
	ip -n "$1" link add link eth0 name "eth0.$2" type vlan id "$2" || return 1
	if [ "$3" != "$1" ]; then
		ip netns add "$3" || return 1
		ip -n "$3" link set lo up
		ip -n "$1" link set "eth0.$2" netns "$3" || return 1
	fi
	ip -n "$3" link set "eth0.$2" up
	ip -n "$3" addr add "$4/24" dev "eth0.$2"
}
topo_vlan_up() {
	local p
	ip netns add "$RTR" || return 1
	ip -n "$RTR" link set lo up
	ip -n "$RTR" link add br-v type bridge vlan_filtering 1 || return 1
	ip -n "$RTR" link set br-v up
	host "$A1" lan1 && host "$A2" lan2 && host "$T" lan3 && host "$B1" lan4 && host "$B2" lan5 ||
		return 1
	for p in lan1 lan2 lan3 lan4 lan5; do bridge -n "$RTR" vlan del dev "$p" vid 1; done
	bridge -n "$RTR" vlan add dev lan1 vid 10 pvid untagged &&
	bridge -n "$RTR" vlan add dev lan2 vid 10 &&
	bridge -n "$RTR" vlan add dev lan3 vid 10 &&
	bridge -n "$RTR" vlan add dev lan3 vid 20 &&
	bridge -n "$RTR" vlan add dev lan4 vid 20 pvid untagged &&
	bridge -n "$RTR" vlan add dev lan5 vid 20 pvid untagged || return 1
	ip -n "$A1" addr add 10.0.0.11/24 dev eth0
	vlan_dev "$A2" 10 "$A2" 10.0.0.14 &&
	vlan_dev "$A2" 20 "$A2X" 10.0.0.24 &&
	vlan_dev "$T" 10 "$T10" 10.0.0.13 &&
	vlan_dev "$T" 20 "$T20" 10.0.0.23 || return 1
	ip -n "$B1" addr add 10.0.0.21/24 dev eth0
	ip -n "$B2" addr add 10.0.0.25/24 dev eth0
	bridge -n "$RTR" vlan show
	# The bridge forwards once its ports leave the learning state.
	wait_for 5000 in_ns "$A1" ping -c1 -W1 10.0.0.14
}

if ! topo_vlan_up >"$WORK/topo.log" 2>&1; then
	fail "VLAN topology comes up"; detail "$WORK/topo.log"; exit 1
fi
printf 'zone lan {\n\tinterfaces br-v\n\tinput accept\n}\n' >"$WORK/sluice.conf"
for p in lan1 lan2 lan3 lan4 lan5; do
	tc_port "$p" && echo "port $p mode tc" || echo "port $p mode xdp"
done >>"$WORK/sluice.conf"
nsenter --net="/run/netns/$RTR" "$SLUICE" -p "$PIN" run -c "$WORK/sluice.conf" >"$WORK/daemon.log" 2>&1 &
DAEMON_PID=$!
if ! wait_for 15000 port_is lan5 fast_path True; then	# (the first apply loads the programs)
	fail "sluice run attaches with the fast path on lan1..lan5"; detail "$WORK/daemon.log"; exit 1
fi
declare -A MAC
MAC[a1]=$(mac_of "$A1" eth0) MAC[a2]=$(mac_of "$A2" eth0) MAC[t]=$(mac_of "$T" eth0)
MAC[b1]=$(mac_of "$B1" eth0) MAC[b2]=$(mac_of "$B2" eth0)

# ---- sluice sees the VLANs ----------------------------------------------------------
# flags: 0x100 VLAN-aware, 0x200 left to the kernel (SLUICE_PORT_VLAN_*),
# 0x8000 tags XDP cannot see, judged by tc (SLUICE_PORT_TAGS_HIDDEN)
VLANS0="lan1:10:3 lan2:10:1 lan3:10:1 lan3:20:1 lan4:20:3 lan5:20:3"
t_ports() {
	local p want bad="" got
	declare -A pvid=([lan1]=10 [lan2]=0 [lan3]=0 [lan4]=20 [lan5]=20)
	for p in lan1 lan2 lan3 lan4 lan5; do
		got=$(port_field "$p" "'%d/%d/%d/%d' % (v['flags'] >> 8 & 1, v['flags'] >> 9 & 1, v['pvid'], v['flags'] >> 15 & 1)")
		want="1/0/${pvid[$p]}/$(tc_port "$p" && echo 0 || echo 1)"
		[ "$got" = "$want" ] || bad="$bad $p($got, want $want)"
	done
	if [ -z "$bad" ]; then
		pass "every port is VLAN-aware in sluice's ports map, with the kernel's PVID, none left to the kernel; the XDP ports' tags (a veth's) judged by tc"
	else
		fail "ports as VLAN-aware/left to the kernel/PVID/tags judged by tc:$bad"
		bpftool map dump pinned "$PIN/sluice_ports" | head -n 60 | sed 's/^/    /'
	fi
	if wait_for 2000 vlans_are "$VLANS0"; then
		pass "sluice_vlans holds the kernel's memberships and untagged flags ($VLANS0)"
	else
		fail "sluice_vlans holds the kernel's memberships: got '$(vlans_map)', want '$VLANS0'"
	fi
}

# ---- unicast inside a VLAN takes the fast path, tags pushed and popped -------------
# pair FROM_NS TO_ADDR IN_PORT OUT_PORT WHAT: FROM pings TO (the first ping
# teaches both MACs), then five more whose requests and replies all take
# the fast path: redirected in by each port, sent out by the other.
pair() {
	local from=$1 to=$2 in=$3 out=$4 what=$5 s0 s1 r_in r_out t_in t_out
	in_ns "$from" ping -c1 -W$((2 * SLOW)) "$to" >/dev/null 2>&1
	sleep 0.2
	s0=$(stats_json)
	if ! in_ns "$from" ping -c5 -i0.2 -W$((2 * SLOW)) "$to" >"$WORK/ping.log" 2>&1; then
		fail "$what: ping $to"; detail "$WORK/ping.log"; return
	fi
	s1=$(stats_json)
	r_in=$(delta "$s0" "$s1" "$in" "['redirect']['packets']")
	t_out=$(delta "$s0" "$s1" "$out" "['fast_tx']['packets']")
	r_out=$(delta "$s0" "$s1" "$out" "['redirect']['packets']")
	t_in=$(delta "$s0" "$s1" "$in" "['fast_tx']['packets']")
	if [ "$r_in" -ge 5 ] && [ "$t_out" -ge 5 ] && [ "$r_out" -ge 5 ] && [ "$t_in" -ge 5 ]; then
		pass "$what: 5 pings, the fast path carried them ($in->$out $r_in/$t_out, $out->$in $r_out/$t_in frames)"
	else
		fail "$what: the fast path did not carry the pings ($in->$out redirected $r_in, sent $t_out; $out->$in redirected $r_out, sent $t_in)"
		json_get "$s1" "[(p['name'], p['pass_reasons']) for p in j['ports'] if p['name'] in ('$in', '$out')]" |
			sed 's/^/    /'
	fi
}
t_unicast() {
	pair "$A1" 10.0.0.14 lan1 lan2 "VLAN 10 untagged lan1 <-> tagged lan2 (push/pop)"
	pair "$A2" 10.0.0.13 lan2 lan3 "VLAN 10 tagged lan2 <-> tagged trunk lan3 (tag kept)"
	pair "$T10" 10.0.0.11 lan3 lan1 "VLAN 10 trunk lan3 <-> untagged lan1 (pop/push)"
	pair "$B1" 10.0.0.25 lan4 lan5 "VLAN 20 untagged lan4 <-> untagged lan5"
	pair "$T20" 10.0.0.21 lan3 lan4 "VLAN 20 trunk lan3 <-> untagged lan4 (pop/push)"
	# Broadcast (ARP) stays in its VLAN and goes through the kernel: a
	# fresh ARP from the trunk's VLAN 20 device finds b2, not a VLAN 10 host.
	in_ns "$T20" ip neigh flush dev eth0.20
	if in_ns "$T20" ping -c1 -W$((2 * SLOW)) 10.0.0.25 >/dev/null 2>&1 &&
	   in_ns "$T20" ip neigh show 10.0.0.25 | grep -q "${MAC[b2]}"; then
		pass "ARP from the trunk's VLAN 20 device resolves a VLAN 20 host through the kernel"
	else
		fail "ARP from the trunk's VLAN 20 device resolves a VLAN 20 host"
	fi
}

# ---- the VLANs stay apart ----------------------------------------------------------
# apart FROM_NS DEV TO_NS TO_ADDR TO_MAC PORT REASON WHAT: FROM sends echo
# requests to TO's MAC (a static neighbour, so no ARP is needed) from the
# other VLAN; TO's IP stack must not see one, and sluice must pass them
# on PORT with REASON, never redirect them.
apart() {
	local from=$1 dev=$2 to=$3 addr=$4 mac=$5 port=$6 reason=$7 what=$8 e0 e1 s0 s1 red why
	in_ns "$from" ip neigh replace "$addr" lladdr "$mac" dev "$dev" nud permanent
	e0=$(in_echos "$to"); s0=$(stats_json)
	in_ns "$from" ping -c3 -i0.2 -W1 "$addr" >/dev/null 2>&1
	sleep 0.5
	e1=$(in_echos "$to"); s1=$(stats_json)
	in_ns "$from" ip neigh del "$addr" dev "$dev"
	red=$(delta "$s0" "$s1" "$port" "['redirect']['packets']")
	why=$(delta "$s0" "$s1" "$port" "['pass_reasons']['$reason']")
	if [ "$e1" = "$e0" ] && [ "$red" = 0 ] && [ "$why" -ge 3 ]; then
		pass "$what: nothing arrives, sluice hands the frames to the kernel as $reason ($why)"
	else
		fail "$what: echo requests at $addr $((e1 - e0)) (want 0), redirected on $port $red (want 0), passed as $reason $why (want >= 3)"
	fi
}
t_apart() {
	local n
	# Without a static neighbour: ARP never crosses.
	n=$(in_echos "$B1")
	if in_ns "$A1" ping -c2 -i0.3 -W1 10.0.0.21 >/dev/null 2>&1; then
		fail "VLAN 10 host a1 pings VLAN 20 host b1"
	elif [ "$(in_echos "$B1")" != "$n" ]; then
		fail "VLAN 10 host a1 cannot reach b1, yet b1 got echo requests"
	else
		pass "VLAN 10 host a1 cannot reach VLAN 20 host b1 (ARP stays in VLAN 10)"
	fi
	# b1's MAC is known to sluice and the kernel in VLAN 20 only.
	apart "$A1" eth0 "$B1" 10.0.0.21 "${MAC[b1]}" lan1 unknown-dst \
		"untagged VLAN 10 frames to a VLAN 20 host's MAC"
	apart "$B2" eth0 "$A1" 10.0.0.11 "${MAC[a1]}" lan5 unknown-dst \
		"untagged VLAN 20 frames to a VLAN 10 host's MAC"
	apart "$T20" eth0.20 "$A2" 10.0.0.14 "${MAC[a2]}" lan3 unknown-dst \
		"frames tagged 20 on the trunk to a VLAN 10 host's MAC"
	apart "$T10" eth0.10 "$B2" 10.0.0.25 "${MAC[b2]}" lan3 unknown-dst \
		"frames tagged 10 on the trunk to a VLAN 20 host's MAC"
	# lan2 is in VLAN 10 only: the kernel drops frames tagged 20 there.
	apart "$A2X" eth0.20 "$B1" 10.0.0.21 "${MAC[b1]}" lan2 vlan \
		"frames tagged 20 into a VLAN 10 port (ingress filtering)"
}

# ---- the FDB: the right VLAN for every host ----------------------------------------------
t_fdb() {
	local out bad="" k want
	out=$(fdb_json)
	# host:port:vlan. The trunk's two VLAN devices share its MAC: one entry
	# per VLAN.
	for want in a1:lan1:10 a2:lan2:10 t:lan3:10 t:lan3:20 b1:lan4:20 b2:lan5:20; do
		IFS=: read -r k p v <<<"$want"
		json_get "$out" "any(e['mac']=='${MAC[$k]}' and e['port']=='$p' and e['vlan']==$v and e['type']=='learned' for e in j['entries'])" |
			grep -q True || bad="$bad missing:$want"
		bridge -n "$RTR" fdb show br br-v | grep -q "^${MAC[$k]} dev $p vlan $v " || bad="$bad kernel-missing:$want"
	done
	# and nowhere else
	for want in a1:20 a2:20 b1:10 b2:10; do
		IFS=: read -r k v <<<"$want"
		json_get "$out" "any(e['mac']=='${MAC[$k]}' and e['vlan']==$v for e in j['entries'])" |
			grep -q False || bad="$bad stray:$want"
	done
	if [ -z "$bad" ]; then
		pass "sluice fdb lists every host in its VLAN only, the trunk's MAC in both, as the kernel bridge does"
	else
		fail "sluice fdb and the hosts' VLANs:$bad"
		rsluice fdb | sed 's/^/    /'
		bridge -n "$RTR" fdb show br br-v | grep -v permanent | sed 's/^/    /'
	fi
}

# ---- iperf3 from an access port into the trunk: every data frame gets a tag ----------
t_iperf() {
	local s0 s1 red tx h0 h1 ratio mbit
	in_ns "$T10" iperf3 -s -1 -B 10.0.0.13 -D -p 5301
	wait_for 3000 in_ns "$T10" ss -Hltn "sport = :5301"
	s0=$(stats_json)
	h0=$(ip -n "$T" -s -j link show eth0 | json_get "$(cat)" "j[0]['stats64']['rx']['packets']")
	if ! in_ns "$A1" timeout $((20 * SLOW)) iperf3 -c 10.0.0.13 -p 5301 -t 2 -J >"$WORK/ip.json"; then
		fail "iperf3 TCP from untagged lan1 to the trunk's VLAN 10"; detail "$WORK/ip.json"; return
	fi
	sleep 0.2
	s1=$(stats_json)
	h1=$(ip -n "$T" -s -j link show eth0 | json_get "$(cat)" "j[0]['stats64']['rx']['packets']")
	red=$(delta "$s0" "$s1" lan1 "['redirect']['packets']")
	tx=$(delta "$s0" "$s1" lan3 "['fast_tx']['packets']")
	ratio=$(awk -v a="$tx" -v b="$((h1 - h0))" 'BEGIN { printf "%.4f", b ? a / b : 0 }')
	mbit=$(json_get "$(cat "$WORK/ip.json")" "'%.0f' % (j['end']['sum_received']['bits_per_second']/1e6)")
	if awk -v a="$ratio" 'BEGIN { exit !(a >= 0.99) }' && [ "$red" -ge "$tx" ]; then
		pass "iperf3 a1->t10 (tag pushed) at $mbit Mbit/s: the fast path sent $ratio of the trunk host's rx frames ($tx of $((h1 - h0)))"
	else
		fail "iperf3 a1->t10: the fast path sent $ratio of the trunk host's rx frames ($tx of $((h1 - h0)); lan1 redirected $red)"
	fi
}

# ---- a port changes VLAN: sluice follows within a second ------------------------------
t_change() {
	local want="lan1:10:3 lan2:10:1 lan3:10:1 lan3:20:1 lan4:20:3 lan5:10:3"
	bridge -n "$RTR" vlan add dev lan5 vid 10 pvid untagged
	bridge -n "$RTR" vlan del dev lan5 vid 20
	if wait_for 1000 vlans_are "$want" && [ "$(port_field lan5 "v['pvid']")" = 10 ]; then
		pass "lan5 moved from VLAN 20 to 10: sluice_vlans and its PVID follow in ${WAITED_MS} ms"
	else
		fail "lan5 moved from VLAN 20 to 10: sluice_vlans '$(vlans_map)', PVID $(port_field lan5 "v['pvid']") (want '$want', 10)"
	fi
	# The kernel flushed b2's VLAN 20 entry; sluice's follows at its next tick.
	wait_for 1500 fdb_lacks "${MAC[b2]}" 20 &&
		pass "b2's VLAN 20 entry leaves sluice's FDB with the kernel's (${WAITED_MS} ms)" ||
		fail "b2's VLAN 20 entry leaves sluice's FDB with the kernel's"
	pair "$A1" 10.0.0.25 lan1 lan5 "after the move, VLAN 10 lan1 <-> lan5"
	apart "$B1" eth0 "$B2" 10.0.0.25 "${MAC[b2]}" lan4 unknown-dst \
		"after the move, VLAN 20 frames to b2's MAC (learned in VLAN 20 before)"
	bridge -n "$RTR" vlan add dev lan5 vid 20 pvid untagged
	bridge -n "$RTR" vlan del dev lan5 vid 10
	wait_for 1000 vlans_are "$VLANS0" &&
		pass "lan5 back in VLAN 20: sluice follows in ${WAITED_MS} ms" ||
		fail "lan5 back in VLAN 20: sluice_vlans '$(vlans_map)'"
}

for t in t_ports t_unicast t_apart t_fdb t_iperf t_change; do
	start=$SECONDS
	$t
	echo "# $SUITE: $t: $((SECONDS - start)) s"
done
