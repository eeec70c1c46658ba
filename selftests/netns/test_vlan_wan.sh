#!/bin/bash
# VLAN devices on a port: a router on a stick. One cable (trunk0) carries
# the LAN untagged and the WAN on VLAN 7 (trunk0.7, its own zone), as a
# managed switch hands both to a one-port box. sluice serves trunk0.7 on
# trunk0 (bpf/encap.h): VLAN 7's frames are trunk0.7's, judged in its
# zone, and its traffic takes the fast path both ways, untagged and
# tagged by the datapath. A NIC that strips tags into metadata before XDP
# (rx-vlan-offload, the default of most drivers and of veth) shows XDP the
# WAN's frames untagged: judged there, the internet would be trunk0's LAN.
# So such a port is judged by tc, which reads the tag; checked on what the
# LAN host behind lan1 receives from the internet's side, with a control
# from the untagged LAN beside. Then trunk0 leaves the LAN zone: attached
# for trunk0.7 alone, its own frames are the kernel's (the backstop's).
#
#   $RTR router: trunk0  192.168.50.1/24  zone lan (mode xdp; lan -> lan routed)
#                trunk0.7 203.0.113.2/24  zone wan (masquerade, input drop)
#                lan1    192.168.10.1/24  zone lan
#   $P   eth0 192.168.50.2, untagged on the trunk (a LAN host)
#   $ISP eth0.7 203.0.113.1 (P's eth0.7, moved here), which also routes
#        192.168.10.0/24 to the router and may forge a trunk LAN source
#   $H   eth0 192.168.10.11 behind lan1
#
# Every host keeps a veth's default offloads; P turns GRO on, which a veth
# needs to take the frames XDP sends it (the kernel's limit, docs/guide.md
# "Port modes"). Needs 802.1Q VLAN devices: the Debian guests have them,
# elsewhere one SKIP line with the reason.
SUITE=vlan-wan
. "$(dirname "$0")/lib.sh"
require_root

own_topo vlanwan
P=$TAG-p ISP=$TAG-isp H=$TAG-h

ip netns add "$TAG-probe" || { fail "create a namespace"; exit 1; }
ip -n "$TAG-probe" link add p0 type veth peer name p1
if ! out=$(ip -n "$TAG-probe" link add link p0 name p0.7 type vlan id 7 2>&1); then
	ip netns del "$TAG-probe"
	if [ "${SLUICE_KERNEL:-host}" = host ]; then
		skip "VLAN devices on a port: no 802.1Q VLAN devices (CONFIG_VLAN_8021Q) in kernel $(uname -r): $out"
		exit 0
	fi
	fail "VLAN devices on a port: no 802.1Q VLAN devices in kernel $(uname -r): $out"
	exit 1
fi
ip netns del "$TAG-probe"

topo() {
	local ns
	for ns in "$RTR" "$P" "$ISP" "$H"; do
		ip netns add "$ns" && ip -n "$ns" link set lo up || return 1
	done
	ip -n "$RTR" link add trunk0 type veth peer name eth0 netns "$P" || return 1
	ip -n "$RTR" link add lan1 type veth peer name eth0 netns "$H" || return 1
	ip -n "$RTR" link add link trunk0 name trunk0.7 type vlan id 7 || return 1
	ip -n "$RTR" addr add 192.168.50.1/24 dev trunk0
	ip -n "$RTR" addr add 203.0.113.2/24 dev trunk0.7
	ip -n "$RTR" addr add 192.168.10.1/24 dev lan1
	ip -n "$RTR" route add default via 203.0.113.1
	for ns in trunk0 trunk0.7 lan1; do ip -n "$RTR" link set "$ns" up; done
	in_ns "$RTR" sysctl -qw net.ipv4.ip_forward=1
	ip -n "$P" link add link eth0 name eth0.7 type vlan id 7 || return 1
	ip -n "$P" link set eth0.7 netns "$ISP" || return 1
	in_ns "$P" ethtool -K eth0 gro on >/dev/null
	ip -n "$P" link set eth0 up
	ip -n "$P" addr add 192.168.50.2/24 dev eth0
	ip -n "$P" route add default via 192.168.50.1
	ip -n "$ISP" link set eth0.7 up
	ip -n "$ISP" addr add 203.0.113.1/24 dev eth0.7
	ip -n "$ISP" addr add 192.168.50.99/32 dev lo	# a trunk LAN source to forge
	ip -n "$ISP" route add 192.168.10.0/24 via 203.0.113.2
	ip -n "$H" link set eth0 up
	ip -n "$H" addr add 192.168.10.11/24 dev eth0
	ip -n "$H" route add default via 192.168.10.1
}
if ! topo >"$WORK/topo.log" 2>&1; then
	fail "router-on-a-stick topology comes up"; detail "$WORK/topo.log"; exit 1
fi

cat >"$WORK/sluice.conf" <<EOF
zone lan {
	interfaces trunk0 lan1
	input accept
}
zone wan {
	interfaces trunk0.7
	input drop
	masquerade
}
forward lan -> lan
forward lan -> wan
port trunk0 mode xdp
EOF
nsenter --net="/run/netns/$RTR" "$SLUICE" -p "$PIN" run -c "$WORK/sluice.conf" >"$WORK/daemon.log" 2>&1 &
DAEMON_PID=$!
if ! wait_for 30000 port_is trunk0.7 up True; then	# (the first apply loads the programs)
	fail "sluice run attaches to trunk0, trunk0.7 and lan1"; detail "$WORK/daemon.log"; exit 1
fi

# ---- the port is judged where the tag can be read ------------------------------
t_mode() {
	local why
	why=$(rsluice status --json | json_get "$(cat)" "[p['mode_reason'] for p in j['ports'] if p['name']=='trunk0'][0]")
	if port_is trunk0 mode native && grep -q 'XDP sees its tagged frames untagged' <<<"$why"; then
		pass "trunk0 (XDP, a VLAN device on it whose tags XDP cannot see) is judged by tc, and status says why"
	else
		fail "trunk0 (XDP, a VLAN device on it whose tags XDP cannot see) is judged by tc, and status says why ($why)"
	fi
}

# ---- the internet on VLAN 7 cannot pass for the untagged LAN --------------------
# send NS SRC PORT N: N datagrams from SRC to H's PORT
send() {
	in_ns "$1" python3 - "$2" "$3" "$4" <<'EOF'
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((sys.argv[1], 0))
for i in range(int(sys.argv[3])):
    s.sendto(b"SLVLAN %d" % i, ("192.168.10.11", int(sys.argv[2])))
    time.sleep(0.02)
EOF
}
# count FIRST IDLE: the datagrams H gets on 7777 (the attacks) and 7778 (the
# controls), until IDLE seconds after the last control (or FIRST without
# any). The attacks are sent first: once the controls are in, anything of
# them the router let through has arrived too.
count() {
	in_ns "$H" python3 - "$1" "$2" <<'EOF'
import select, socket, sys, time
socks = {}
for port in (7777, 7778):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("0.0.0.0", port))
    socks[s] = port
n = {7777: 0, 7778: 0}
end = time.time() + float(sys.argv[1])
while time.time() < end:
    for s in select.select(list(socks), [], [], max(0.0, end - time.time()))[0]:
        s.recv(2048)
        n[socks[s]] += 1
        if socks[s] == 7778:
            end = time.time() + float(sys.argv[2])
print(n[7777], n[7778], flush=True)
EOF
}
t_forged() {
	local n=50 atk ctl
	count $((10 * SLOW)) $((2 * SLOW)) >"$WORK/count" &
	local c=$!
	wait_for 5000 listening "$H" 7777 u && wait_for 5000 listening "$H" 7778 u
	send "$ISP" 203.0.113.1 7777 "$n"	# the internet, as itself
	send "$ISP" 192.168.50.99 7777 "$n"	# the internet, as a trunk LAN host
	send "$P" 192.168.50.2 7778 "$n"	# the untagged LAN: the control
	wait "$c"
	read -r atk ctl <"$WORK/count"
	if [ "${ctl:-0}" -ge $((n * 9 / 10)) ] && [ "$atk" = 0 ]; then
		pass "nothing from VLAN 7 reaches the LAN host, as the internet or forging a trunk LAN source ($atk of $((2 * n))); the untagged LAN does ($ctl of $n)"
	else
		fail "nothing from VLAN 7 reaches the LAN host (${atk:-?} of $((2 * n)) did); the untagged LAN does (${ctl:-?} of $n)"
	fi
}

# ---- and the WAN on VLAN 7 works ------------------------------------------------
t_wan() {
	if in_ns "$H" ping -c 3 -i 0.2 -W 2 203.0.113.1 >"$WORK/ping" 2>&1; then
		pass "the LAN host reaches the internet over trunk0.7 (its replies come in tagged on trunk0)"
	else
		fail "the LAN host reaches the internet over trunk0.7"; detail "$WORK/ping"
	fi
}

# ---- VLAN 7 in the fast path, both ways ----------------------------------------
# pst PORT FIELD: a port's counter in stats --json
pst() { stats_json | json_get "$(cat)" "[p for p in j['ports'] if p['name']=='$1'][0]$2"; }
# echo_n NS N: N datagrams to the internet's echo server (traffic.sh echo_count)
echo_n() { echo_count "$1" "$2" 203.0.113.1 5300; }
t_fast() {
	local n=50 got tx0 rx0 tx1 rx1 out why
	udp_echo "$ISP" 203.0.113.1 5300
	wait_for 5000 listening "$ISP" 5300 u
	echo_n "$H" 1 >/dev/null	# (the flow's first datagram meets the tracker and the neighbours)
	tx0=$(pst trunk0.7 "['fast_tx']['packets']") rx0=$(pst trunk0.7 "['redirect']['packets']")
	got=$(echo_n "$H" "$n")
	tx1=$(pst trunk0.7 "['fast_tx']['packets']") rx1=$(pst trunk0.7 "['redirect']['packets']")
	if [ "${got:-0}" -ge $((n * 9 / 10)) ] && [ $((tx1 - tx0)) -ge "$got" ] &&
	   [ $((rx1 - rx0)) -ge "$got" ]; then
		pass "VLAN 7 in the fast path: $got of $n datagrams to the internet answered; trunk0.7 sent $((tx1 - tx0)) tagged and took $((rx1 - rx0)) replies"
	else
		fail "VLAN 7 in the fast path: ${got:-?} of $n answered; trunk0.7 sent $((tx1 - tx0)) and took $((rx1 - rx0)) (want each >= the answers)"
		stats_json >"$WORK/stats.json"; detail "$WORK/stats.json"
	fi
	bulk_server "$ISP" 203.0.113.1 5301
	wait_for 5000 listening "$ISP" 5301 t
	out=$(bulk "$H" 203.0.113.1 5301)
	[ "$out" = ok ] && pass "2 MB of TCP to the internet and back over VLAN 7, masqueraded, intact" ||
		fail "2 MB of TCP to the internet and back over VLAN 7, masqueraded, intact ($out)"
	why=$(rsluice status --json | json_get "$(cat)" "[p['mode_reason'] for p in j['ports'] if p['name']=='trunk0.7'][0]")
	[[ "$why" == *"served on trunk0"* ]] && pass "status: trunk0.7 is served on trunk0 ($why)" ||
		fail "status: trunk0.7 is served on trunk0 ($why)"
}

# ---- trunk0 in no zone: attached for trunk0.7 alone -----------------------------
t_lower_alone() {
	local n=50 got atk ctl zone p0 p1
	sed -i 's/interfaces trunk0 lan1/interfaces lan1/' "$WORK/sluice.conf"
	if ! rsluice reload -c "$WORK/sluice.conf" >"$WORK/reload.log" 2>&1; then
		fail "reload with trunk0 in no zone"; detail "$WORK/reload.log"; return
	fi
	zone=$(rsluice status --json | json_get "$(cat)" "[p['zone'] for p in j['ports'] if p['name']=='trunk0'][0]")
	got=$(echo_n "$H" "$n")
	if [ "$zone" = - ] && [ "${got:-0}" -ge $((n * 9 / 10)) ]; then
		pass "trunk0 in no zone: attached for trunk0.7 alone (zone '$zone'), VLAN 7 still the WAN ($got of $n answered)"
	else
		fail "trunk0 in no zone: attached for trunk0.7 alone (zone '${zone:-?}'), VLAN 7 still the WAN (${got:-?} of $n answered)"
	fi
	# (the untagged LAN was the control before; now nothing of it may pass)
	count $((5 * SLOW)) 1 >"$WORK/count" &
	local c=$!
	wait_for 5000 listening "$H" 7777 u
	p0=$(pst trunk0 "['pass_reasons']['not-ours']")
	send "$P" 192.168.50.2 7777 "$n"
	wait "$c"
	p1=$(pst trunk0 "['pass_reasons']['not-ours']")
	read -r atk ctl <"$WORK/count"
	# (they reached trunk0, which passed them unjudged; none reached H)
	[ "$atk" = 0 ] && [ $((p1 - p0)) -ge "$n" ] &&
		pass "trunk0's own frames are the kernel's now: passed unjudged ($((p1 - p0)) not-ours), none forwarded to the LAN host (0 of $n)" ||
		fail "trunk0's own frames are the kernel's now: $((p1 - p0)) passed as not-ours (want >= $n), ${atk:-?} of $n forwarded to the LAN host (want 0)"
}

t_mode
t_forged
t_wan
t_fast
t_lower_alone
