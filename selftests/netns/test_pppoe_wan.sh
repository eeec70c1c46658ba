#!/bin/bash
# A PPPoE WAN served on its Ethernet port. The ISP runs pppoe-server
# (Debian's pppoe package, whose build relays sessions in user space)
# behind wan0; pppd on the router dials with its PPPoE plugin and makes
# ppp0, which the WAN zone names. sluice serves ppp0 on wan0 (bpf/encap.h):
# XDP on wan0 takes the session header off the session's frames and puts
# it on what it routes out, so established flows never touch the ppp
# driver; pppd keeps discovery, LCP, IPCP and IPv6CP. IPv4 (masqueraded,
# a port forward) and IPv6 (routed) go through the session. Then, while a
# LAN host streams UDP to the internet, the ISP hangs up and comes back
# with other session numbers and addresses: pppd dials again, the daemon
# follows the new session, and the stream goes on from the new address.
#
#   $RTR router: wan0 (no address: in no zone), ppp0 100.64.0.10 zone wan
#                (masquerade, input drop, mss-clamp auto, tcp 8080 forwarded
#                to $H), lan1 192.168.10.1 2001:db8:10::1 zone lan (mode xdp)
#   $ISP eth0 under pppoe-server; its end of the session 100.64.0.1, and
#        2001:db8:113::1 (the internet here: echo, peer and bulk servers),
#        198.51.100.1 (a client out there: 100.64.0.0/10 is a bogon source
#        to a connection from outside)
#   $H   eth0 192.168.10.11 2001:db8:10::11 behind lan1
#
# Every host keeps a veth's default offloads. Needs the kernel's pppoe
# driver: the Debian guests have it, elsewhere one SKIP line says why.
SUITE=pppoe-wan
. "$(dirname "$0")/lib.sh"
require_root

modprobe pppoe 2>/dev/null
if [ ! -e /proc/net/pppoe ] || ! command -v pppoe-server >/dev/null || ! command -v pppd >/dev/null; then
	if [ "${SLUICE_KERNEL:-host}" = host ]; then
		skip "PPPoE WAN: no pppoe driver (CONFIG_PPPOE) in kernel $(uname -r), or no pppd/pppoe-server"
		exit 0
	fi
	fail "PPPoE WAN: no pppoe driver in kernel $(uname -r), or no pppd/pppoe-server"
	exit 1
fi

own_topo pppoewan
ISP=$TAG-isp H=$TAG-h

topo() {
	local ns
	for ns in "$RTR" "$ISP" "$H"; do
		ip netns add "$ns" && ip -n "$ns" link set lo up || return 1
	done
	ip -n "$RTR" link add wan0 type veth peer name eth0 netns "$ISP" || return 1
	ip -n "$RTR" link add lan1 type veth peer name eth0 netns "$H" || return 1
	ip -n "$RTR" addr add 192.168.10.1/24 dev lan1
	ip -n "$RTR" addr add 2001:db8:10::1/64 dev lan1 nodad
	ip -n "$RTR" link set wan0 up
	ip -n "$RTR" link set lan1 up
	in_ns "$RTR" sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1
	ip -n "$ISP" link set eth0 up
	ip -n "$H" link set eth0 up
	# (GRO on: a veth takes the frames XDP sends it only so, docs/guide.md)
	in_ns "$ISP" ethtool -K eth0 gro on >/dev/null
	in_ns "$H" ethtool -K eth0 gro on >/dev/null
	ip -n "$H" addr add 192.168.10.11/24 dev eth0
	ip -n "$H" route add default via 192.168.10.1
	ip -n "$H" addr add 2001:db8:10::11/64 dev eth0 nodad
	ip -n "$H" -6 route add default via 2001:db8:10::1
	ip -n "$ISP" addr add 2001:db8:113::1/128 dev lo
	ip -n "$ISP" addr add 198.51.100.1/32 dev lo
	printf 'noauth\n+ipv6\nlcp-echo-interval 5\nlcp-echo-failure 4\nmtu 1492\nmru 1492\n' \
		>"$WORK/pppoe-options"
	isp_server 0 10
}
# isp_server OFFSET HOST: pppoe-server whose sessions are numbered from
# OFFSET + 1, handing out 100.64.0.HOST
isp_server() {
	in_ns "$ISP" pppoe-server -I eth0 -L 100.64.0.1 -R "100.64.0.$2" -N 4 -o "$1" \
		-O "$WORK/pppoe-options"
}
if ! topo >"$WORK/topo.log" 2>&1; then
	fail "PPPoE topology comes up"; detail "$WORK/topo.log"; exit 1
fi

# pppd on the router, as a user runs it (dials again when the ISP hangs up)
in_ns "$RTR" pppd plugin pppoe.so nic-wan0 user sluice noauth noipdefault defaultroute +ipv6 \
	persist holdoff 1 maxfail 0 mtu 1492 mru 1492 lcp-echo-interval 5 lcp-echo-failure 4 \
	unit 0 nodetach >"$WORK/pppd.log" 2>&1 &
ppp_up() { ip -n "$RTR" -4 addr show dev ppp0 2>/dev/null | grep -q 'inet 100\.64\.0\.'; }
if ! wait_for 30000 ppp_up; then
	fail "pppd on the router brings ppp0 up with the ISP's address"
	detail "$WORK/pppd.log"; exit 1
fi
pass "pppd on the router brings ppp0 up with the ISP's address"

cat >"$WORK/sluice.conf" <<EOF
zone lan {
	interfaces lan1
	input accept
}
zone wan {
	interfaces ppp0
	input drop
	masquerade
	mss-clamp auto
}
forward lan -> wan
port-forward wan tcp 8080 -> 192.168.10.11:5401
port lan1 mode xdp
EOF
nsenter --net="/run/netns/$RTR" "$SLUICE" -p "$PIN" run -v -c "$WORK/sluice.conf" >"$WORK/daemon.log" 2>&1 &
DAEMON_PID=$!
why_of() { rsluice status --json | json_get "$(cat)" "[p['mode_reason'] for p in j['ports'] if p['name']=='$1'][0] if any(p['name']=='$1' for p in j['ports']) else ''"; }
served() { [[ "$(why_of ppp0)" == *"PPPoE session"*"served on wan0"* ]]; }
if ! wait_for 30000 served; then	# (the first apply loads the programs)
	fail "sluice run serves ppp0 on wan0"
	rsluice status --json >"$WORK/status.json" 2>&1; detail "$WORK/daemon.log" "$WORK/status.json"
	exit 1
fi

# ---- how it is attached ------------------------------------------------------------
t_status() {
	local why lo
	why=$(why_of ppp0) lo=$(why_of wan0)
	if port_is wan0 zone - && port_is wan0 rx_hook xdp &&
	   [[ "$lo" == *"PPPoE session on it"* ]]; then
		pass "status: ppp0 is served on wan0 ($why); wan0 runs XDP for it, in no zone itself"
	else
		fail "status: ppp0 is served on wan0 ($why); wan0 runs XDP for it, in no zone itself ($lo)"
		rsluice status >"$WORK/status.txt" 2>&1; detail "$WORK/status.txt"
	fi
}

# pst PORT FIELD: a port's counter in stats --json
pst() { stats_json | json_get "$(cat)" "[p for p in j['ports'] if p['name']=='$1'][0]$2"; }
# ppp0's own packet counters (the ppp driver's): DIR rx or tx
pppd_pkts() { in_ns "$RTR" cat "/sys/class/net/ppp0/statistics/$1_packets"; }

# ---- the fast path both ways, past the ppp driver ---------------------------------
t_fast() {
	local n=50 tx0 rx0 tx1 rx1 prx0 ptx0 prx1 ptx1 out
	in_ns "$H" ping -c 1 -W $((2 * SLOW)) 100.64.0.1 >/dev/null 2>&1	# (the flow's first)
	tx0=$(pst ppp0 "['fast_tx']['packets']") rx0=$(pst ppp0 "['redirect']['packets']")
	prx0=$(pppd_pkts rx) ptx0=$(pppd_pkts tx)
	out=$(in_ns "$H" ping -c "$n" -i 0.05 -W $((2 * SLOW)) 100.64.0.1 2>&1 | grep -o '[0-9]* received')
	tx1=$(pst ppp0 "['fast_tx']['packets']") rx1=$(pst ppp0 "['redirect']['packets']")
	prx1=$(pppd_pkts rx) ptx1=$(pppd_pkts tx)
	out=${out% received}
	# (XDP both ways: ppp0 sent and took the pings in the datapath, and
	# the ppp driver saw none of them: LCP echoes are all it may count)
	if [ "${out:-0}" -ge $((n * 9 / 10)) ] && [ $((tx1 - tx0)) -ge "$out" ] &&
	   [ $((rx1 - rx0)) -ge "$out" ] && [ $((prx1 - prx0)) -lt 5 ] && [ $((ptx1 - ptx0)) -lt 5 ]; then
		pass "the fast path both ways: $out of $n pings answered; ppp0 sent $((tx1 - tx0)) and took $((rx1 - rx0)) in the datapath; the ppp driver saw $((prx1 - prx0)) in, $((ptx1 - ptx0)) out"
	else
		fail "the fast path both ways: ${out:-?} of $n answered; ppp0 sent $((tx1 - tx0)), took $((rx1 - rx0)) (want >= answers); the ppp driver saw $((prx1 - prx0)) in, $((ptx1 - ptx0)) out (want < 5)"
		stats_json >"$WORK/stats.json"; detail "$WORK/stats.json"
	fi
}

# echo_n NS N: N datagrams to the internet's echo server (traffic.sh echo_count)
echo_n() { echo_count "$1" "$2" 100.64.0.1 5300; }

# ---- UDP and TCP through the NAT, MSS, PMTU ----------------------------------------
t_nat() {
	local n=30 got out m0 m1
	udp_echo "$ISP" 100.64.0.1 5300
	wait_for 5000 listening "$ISP" 5300 u
	got=$(echo_n "$H" "$n")
	if [ "${got:-0}" -ge $((n * 9 / 10)) ]; then
		pass "UDP to the internet and back through the masquerade ($got of $n)"
	else
		fail "UDP to the internet and back through the masquerade (${got:-?} of $n)"
		stats_json >"$WORK/stats.json"; rsluice conntrack >"$WORK/ct.txt" 2>&1
		in_ns "$ISP" ss -uan >"$WORK/ss.txt" 2>&1; ip -n "$ISP" -s link >>"$WORK/ss.txt" 2>&1
		detail "$WORK/stats.json" "$WORK/ct.txt" "$WORK/ss.txt"
	fi
	m0=$(stats_json | json_get "$(cat)" "j['nat']['mss_clamped']")
	bulk_server "$ISP" 100.64.0.1 5301
	wait_for 5000 listening "$ISP" 5301 t
	out=$(bulk "$H" 100.64.0.1 5301)
	m1=$(stats_json | json_get "$(cat)" "j['nat']['mss_clamped']")
	[ "$out" = ok ] && [ $((m1 - m0)) -ge 1 ] &&
		pass "2 MB of TCP there and back through the session, intact; its SYN's MSS clamped for ppp0's MTU ($((m1 - m0)))" ||
		fail "2 MB of TCP there and back through the session, intact ($out); its SYN's MSS clamped ($((m1 - m0)))"
	# (1500 bytes with DF: one that ppp0's 1492 cannot take is answered as
	# the kernel would, frag-needed with the MTU)
	out=$(in_ns "$H" ping -c 1 -M do -s 1472 -W $((2 * SLOW)) 100.64.0.1 2>&1)
	grep -qE 'mtu ?= ?1492' <<<"$out" &&
		pass "a 1500-byte packet with DF is answered with ppp0's MTU (1492)" ||
		{ fail "a 1500-byte packet with DF is answered with ppp0's MTU (1492)"; printf '%s\n' "$out" | sed 's/^/    /'; }
}

# ---- the internet cannot come in uninvited ----------------------------------------
t_unsolicited() {
	local d0 d1
	d0=$(pst ppp0 "['drop']['packets']")
	in_ns "$ISP" python3 -c '
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(20):
    s.sendto(b"x", ("100.64.0.10", 7777))'
	drops_reach() { [ "$(pst ppp0 "['drop']['packets']")" -ge $((d0 + 20)) ]; }
	wait_for 2000 drops_reach
	d1=$(pst ppp0 "['drop']['packets']")
	[ $((d1 - d0)) -ge 20 ] &&
		pass "20 datagrams from the internet to a closed port are dropped in ppp0's zone ($((d1 - d0)))" ||
		fail "20 datagrams from the internet to a closed port are dropped in ppp0's zone ($((d1 - d0)))"
}

# ---- IPv6, routed through the session ---------------------------------------------
# pppd's IPv6CP gives ppp0 its link-local address; the LAN's prefix is
# routed over the session (the ISP's end routes it back by its own ppp
# device, as a delegated prefix would be).
t_ipv6() {
	local isp_ppp n=20 tx0 tx1 rx0 rx1 got out
	v6_up() { ip -n "$RTR" -6 addr show dev ppp0 2>/dev/null | grep -q 'inet6 fe80'; }
	isp_ppp=$(ip -n "$ISP" -o link show type ppp 2>/dev/null | awk -F': ' 'NR == 1 { print $2 }')
	if [ -z "$isp_ppp" ] || ! wait_for 20000 v6_up; then
		fail "IPv6CP brings IPv6 up on ppp0 (the ISP's ppp device: '$isp_ppp')"
		detail "$WORK/pppd.log"; return
	fi
	ip -n "$RTR" -6 route add default dev ppp0
	ip -n "$ISP" -6 route add 2001:db8:10::/64 dev "${isp_ppp%@*}"
	in_ns "$H" ping -6 -c 1 -W $((2 * SLOW)) 2001:db8:113::1 >/dev/null 2>&1	# (the flow's first)
	tx0=$(pst ppp0 "['fast_tx']['packets']") rx0=$(pst ppp0 "['redirect']['packets']")
	out=$(in_ns "$H" ping -6 -c "$n" -i 0.05 -W $((2 * SLOW)) 2001:db8:113::1 2>&1 |
		grep -o '[0-9]* received')
	tx1=$(pst ppp0 "['fast_tx']['packets']") rx1=$(pst ppp0 "['redirect']['packets']")
	out=${out% received}
	if [ "${out:-0}" -ge $((n * 9 / 10)) ] && [ $((tx1 - tx0)) -ge "$out" ] &&
	   [ $((rx1 - rx0)) -ge "$out" ]; then
		pass "IPv6 through the session: $out of $n pings answered, ppp0 sent $((tx1 - tx0)) and took $((rx1 - rx0)) in the datapath"
	else
		fail "IPv6 through the session: ${out:-?} of $n pings answered; ppp0 sent $((tx1 - tx0)), took $((rx1 - rx0)) in the datapath (want >= answers)"
		stats_json >"$WORK/stats.json"; detail "$WORK/stats.json"
	fi
	udp_echo "$ISP" 2001:db8:113::1 5306
	got=$(echo_count "$H" 20 2001:db8:113::1 5306)
	bulk_server "$ISP" 2001:db8:113::1 5307
	wait_for 5000 listening "$ISP" 5307 t
	out=$(bulk "$H" 2001:db8:113::1 5307)
	[ "${got:-0}" -ge 18 ] && [ "$out" = ok ] &&
		pass "IPv6 UDP ($got of 20 echoed) and 2 MB of TCP ($out) through the session" ||
		fail "IPv6 UDP (${got:-?} of 20 echoed) and 2 MB of TCP ($out) through the session"
}

# ---- a port forward on ppp0's address -----------------------------------------------
# forward_to ADDR: 2 MB from a client on the internet to ADDR:8080,
# forwarded to $H
forward_to() {
	bulk_server "$H" 192.168.10.11 5401
	wait_for 5000 listening "$H" 5401 t
	bulk "$ISP" "$1" 8080 198.51.100.1
}
t_forward() {
	local out
	out=$(forward_to 100.64.0.10)
	[ "$out" = ok ] &&
		pass "the internet reaches a LAN server through a port forward on ppp0's address (2 MB intact)" ||
		{ fail "the internet reaches a LAN server through a port forward on ppp0's address ($out)"
		  stats_json >"$WORK/stats.json"; rsluice conntrack >"$WORK/ct.txt" 2>&1
		  bpftool map dump pinned "$PIN/sluice_nat4_ext" >>"$WORK/ct.txt" 2>&1
		  detail "$WORK/stats.json" "$WORK/ct.txt"; }
}

# ---- the session spread over the CPUs ----------------------------------------------
# Everything of the ISP's comes in on CPU 0 (its processes, pppoe-server's
# relay included, pinned there: a veth receives on the sender's CPU, as a
# NIC that cannot hash PPPoE receives on one queue). 64 flows' replies then
# are judged on the other CPUs too, each flow on one; with `spread off`,
# on CPU 0. (No reload: the config's flag turns spreading off.)
# cpu_redirects PORT: PORT's frames judged to the fast path, per CPU
cpu_redirects() {
	local slot
	slot=$(rsluice status --json | json_get "$(cat)" "[p['slot'] for p in j['ports'] if p['name']=='$1'][0]")
	bpftool -j map lookup pinned "$PIN/sluice_stats" key $((slot & 255)) $((slot >> 8 & 255)) 0 0 |
		json_get "$(cat)" "' '.join(str(v['value']['redirect']['packets']) for v in j.get('formatted', j)['values'])"
}
# flows PORT: one UDP datagram to the echo server on PORT from each of 64
# sockets of $H, 10 ms apart (the ISP's pppoe-server relays the session in
# user space and loses bursts); prints how many were answered within 2 s
# of the last
flows() {
	in_ns "$H" python3 - "$1" "$((2 * SLOW))" <<'EOF'
import socket, sys, time
got = 0
ss = [socket.socket(socket.AF_INET, socket.SOCK_DGRAM) for _ in range(64)]
for s in ss:
    s.sendto(b"flow", ("100.64.0.1", int(sys.argv[1])))
    time.sleep(0.01)
end = time.monotonic() + float(sys.argv[2])
for s in ss:
    s.settimeout(max(0.01, end - time.monotonic()))
    try:
        got += s.recv(100) == b"echo:flow"
    except OSError:
        pass
print(got)
EOF
}
# spread_round PORT: a fresh echo server on PORT and every process of the
# ISP's on CPU 0; then the flows answered, and ppp0's frames judged on CPU
# 0 and on the others
spread_round() {
	local c0 c1 got pid other=0 i
	udp_echo "$ISP" 100.64.0.1 "$1"
	for pid in $(ip netns pids "$ISP"); do taskset -apc 0 "$pid" >/dev/null 2>&1; done
	c0=($(cpu_redirects ppp0))
	got=$(flows "$1")
	c1=($(cpu_redirects ppp0))
	for ((i = 1; i < ${#c1[@]}; i++)); do other=$((other + c1[i] - c0[i])); done
	echo "$got $((c1[0] - c0[0])) $other"
}
CPUS=$(getconf _NPROCESSORS_ONLN)
t_spread() {
	local why r
	if [ "$CPUS" -lt 2 ]; then
		skip "spread over the CPUs: one CPU online"; return
	fi
	why=$(why_of ppp0)
	r=($(spread_round 5320))
	if [[ "$why" == *"spread over $CPUS CPUs by flow"* ]] && [ "${r[0]}" -ge 48 ] &&
	   [ "${r[2]}" -ge 8 ]; then
		pass "spread: the ISP's frames all arrive on CPU 0; ${r[0]} of 64 flows answered, their replies judged ${r[1]} on CPU 0 and ${r[2]} on the other $((CPUS - 1)) ($why)"
	else
		fail "spread: ${r[0]} of 64 flows answered (want >= 48), replies judged ${r[1]} on CPU 0 and ${r[2]} on the others (want >= 8) ($why)"
		rsluice status >"$WORK/status.txt" 2>&1; detail "$WORK/status.txt"
	fi
	sed -i '/^port lan1/i spread off' "$WORK/sluice.conf"
	if ! rsluice reload -c "$WORK/sluice.conf" >"$WORK/reload.log" 2>&1; then
		fail "spread off: reload"; detail "$WORK/reload.log"; return
	fi
	why=$(why_of ppp0)
	r=($(spread_round 5321))
	if [[ "$why" == *"one CPU (spread off)"* ]] && [ "${r[0]}" -ge 48 ] &&
	   [ "${r[2]}" -le $((r[1] / 10)) ]; then
		pass "spread off: ${r[0]} of 64 flows answered, their replies judged ${r[1]} on CPU 0 and ${r[2]} on the others ($why)"
	else
		fail "spread off: ${r[0]} of 64 flows answered (want >= 48), replies judged ${r[1]} on CPU 0 and ${r[2]} on the others (want a tenth of CPU 0's at most) ($why)"
	fi
	sed -i '/^spread off/d' "$WORK/sluice.conf"
	rsluice reload -c "$WORK/sluice.conf" >"$WORK/reload.log" 2>&1 || detail "$WORK/reload.log"
}

# ---- a LAN port at tc -------------------------------------------------------------
# The same session with lan1 a tc port: what goes up leaves tc into ppp0
# (the kernel's driver segments and puts the header on), what comes down
# is decapsulated by XDP on wan0 and handed to tc there for lan1.
t_tc_lan() {
	local got out tx0 tx1
	sed -i 's/^port lan1 mode xdp$/port lan1 mode tc/' "$WORK/sluice.conf"
	if ! rsluice reload -c "$WORK/sluice.conf" >"$WORK/reload.log" 2>&1; then
		fail "lan1 at tc: reload"; detail "$WORK/reload.log"; return
	fi
	tx0=$(pst ppp0 "['fast_tx']['packets']")
	# its own echo server: t_nat's quits after 60 s without a datagram,
	# which the tests between can take on a loaded machine
	udp_echo "$ISP" 100.64.0.1 5313
	got=$(echo_count "$H" 30 100.64.0.1 5313)
	bulk_server "$ISP" 100.64.0.1 5312
	wait_for 5000 listening "$ISP" 5312 t
	out=$(bulk "$H" 100.64.0.1 5312)
	tx1=$(pst ppp0 "['fast_tx']['packets']")
	if port_is lan1 mode tc && [ "${got:-0}" -ge 27 ] && [ "$out" = ok ] && [ $((tx1 - tx0)) -ge 27 ]; then
		pass "lan1 at tc: UDP ($got of 30) and 2 MB of TCP ($out) through the session, ppp0 sending $((tx1 - tx0)) from tc"
	else
		fail "lan1 at tc: UDP (${got:-?} of 30) and 2 MB of TCP ($out) through the session, ppp0 sending $((tx1 - tx0)) (want >= 27)"
		stats_json >"$WORK/stats.json"; detail "$WORK/stats.json"
	fi
	sed -i 's/^port lan1 mode tc$/port lan1 mode xdp/' "$WORK/sluice.conf"
	rsluice reload -c "$WORK/sluice.conf" >"$WORK/reload.log" 2>&1 || detail "$WORK/reload.log"
}

# ---- a re-dial ----------------------------------------------------------------------
# The ISP ends the session and comes back numbering sessions from 101 and
# handing out another address; pppd dials again (a new ppp0), and the
# daemon serves the new session within its tick. All the while one UDP
# socket of the LAN host sends a datagram every 100 ms to a server that
# answers with the address it saw: the stream's answers say the old
# address before the hangup and the new one after, with no help from the
# host (the flows of the old address are removed, its next datagram opens
# a new one).
# ns_kill NS NAME: end the processes called NAME in namespace NS alone (pkill
# would reach the router's pppd too: one process namespace)
ns_kill() {
	local pid
	for pid in $(ip netns pids "$1"); do
		[ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$2" ] && kill "$pid"
	done
}
# udp_stream NS DST PORT OUT STOP: one socket sends a datagram every 100 ms
# until the file STOP exists (300 s at most) and appends each answer to OUT
udp_stream() {
	in_ns "$1" python3 - "$2" "$3" "$4" "$5" "$((300 * SLOW))" >/dev/null 2>&1 <<'EOF' &
import os, socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.connect((sys.argv[1], int(sys.argv[2])))
s.settimeout(0.1)
out = open(sys.argv[3], "a", buffering=1)
end = time.monotonic() + float(sys.argv[5])
while time.monotonic() < end and not os.path.exists(sys.argv[4]):
    try:
        s.send(b"x")
    except OSError:
        pass
    t = time.monotonic() + 0.1
    while time.monotonic() < t:
        try:
            out.write(s.recv(100).decode() + "\n")
        except socket.timeout:
            pass
        except OSError:	# (an ICMP error while ppp0 is away)
            time.sleep(0.02)
EOF
}
# answers_from ADDR N: the stream has at least N answers that saw ADDR
answers_from() { [ "$(grep -c "^$1:" "$WORK/stream.out" 2>/dev/null)" -ge "$2" ]; }
t_redial() {
	local got before after out
	: >"$WORK/stream.out"
	udp_peer "$ISP" 0.0.0.0 5310 $((300 * SLOW))
	udp_stream "$H" 100.64.0.1 5310 "$WORK/stream.out" "$WORK/stream.stop"
	if ! wait_for 20000 answers_from 100.64.0.10 5; then
		fail "a UDP stream to the internet is answered before the re-dial"
		touch "$WORK/stream.stop"; return
	fi
	ns_kill "$ISP" pppoe-server
	ns_kill "$ISP" pppd
	isp_server 100 11
	redialled() {
		ip -n "$RTR" -4 addr show dev ppp0 2>/dev/null | grep -q 'inet 100\.64\.0\.11' &&
			[[ "$(why_of ppp0)" == *"PPPoE session 101 "*"served on wan0"* ]]
	}
	if ! wait_for 60000 redialled; then
		fail "the ISP hangs up and comes back: pppd dials again and sluice serves the new session ($(why_of ppp0))"
		touch "$WORK/stream.stop"; detail "$WORK/pppd.log" "$WORK/daemon.log"; return
	fi
	wait_for 20000 answers_from 100.64.0.11 5
	touch "$WORK/stream.stop"
	before=$(grep -c '^100\.64\.0\.10:' "$WORK/stream.out")
	after=$(grep -c '^100\.64\.0\.11:' "$WORK/stream.out")
	[ "$after" -ge 5 ] &&
		pass "under traffic: one UDP socket's stream is answered from the old address before the re-dial ($before) and from the new one after it ($after), the host doing nothing" ||
		{ fail "under traffic: the stream's answers from the new address after the re-dial ($after; $before before)"; rsluice conntrack >"$WORK/ct.txt" 2>&1; detail "$WORK/ct.txt" "$WORK/daemon.log"; }
	udp_echo "$ISP" 100.64.0.1 5300
	wait_for 5000 listening "$ISP" 5300 u
	got=$(echo_n "$H" 20)
	[ "${got:-0}" -ge 18 ] &&
		pass "the ISP hangs up and comes back: sluice serves the new session ($(why_of ppp0)), masquerades to the new address, and the LAN reaches the internet again ($got of 20)" ||
		{ fail "the ISP hangs up and comes back: the LAN reaches the internet again (${got:-?} of 20)"; detail "$WORK/daemon.log"; }
	out=$(forward_to 100.64.0.11)
	[ "$out" = ok ] &&
		pass "after the re-dial the port forward is on the new address (2 MB intact)" ||
		fail "after the re-dial the port forward is on the new address ($out)"
}

# ---- shaping over the session ---------------------------------------------------------
# `shape wan ... overhead pppoe-ptm`: sch_fq on ppp0 and the other ports;
# what goes up is shaped before the session header goes on (handed to tc,
# then into ppp0), what comes down after XDP took it off (handed to tc on
# wan0). 2 MB each way at 4 Mbit/s cannot take less than about 4 s.
t_shape() {
	local t0 t1 ms out up0 dn0 up1 dn1 q
	sed -i '/^port lan1/i shape wan upload 4mbit download 4mbit overhead pppoe-ptm' "$WORK/sluice.conf"
	if ! rsluice reload -c "$WORK/sluice.conf" >"$WORK/reload.log" 2>&1; then
		fail "shaping over the session: reload with a shape line"; detail "$WORK/reload.log"; return
	fi
	q=$(tc -n "$RTR" qdisc show dev ppp0 root | awk 'NR == 1 {print $2, $3}')
	shaped_pkts() { stats_json | json_get "$(cat)" "[s['packets'] for s in j['shape'] if s['direction']=='$1'][0]"; }
	up0=$(shaped_pkts upload) dn0=$(shaped_pkts download)
	bulk_server "$ISP" 100.64.0.1 5311
	wait_for 5000 listening "$ISP" 5311 t
	t0=$(date +%s%N)
	out=$(bulk "$H" 100.64.0.1 5311)
	t1=$(date +%s%N)
	up1=$(shaped_pkts upload) dn1=$(shaped_pkts download)
	ms=$(( (t1 - t0) / 1000000 ))
	if [ "$q" = "fq 51c:" ] && [ "$out" = ok ] && [ "$ms" -ge 3500 ] &&
	   [ $((up1 - up0)) -ge 1000 ] && [ $((dn1 - dn0)) -ge 1000 ]; then
		pass "shaping over the session: sch_fq on ppp0; 2 MB each way intact in $ms ms at 4 Mbit/s, the shaper counting $((up1 - up0)) packets up and $((dn1 - dn0)) down"
	else
		fail "shaping over the session: ppp0's root qdisc '$q'; 2 MB each way $out in $ms ms (want >= 3500 at 4 Mbit/s); the shaper counted $((up1 - up0)) up, $((dn1 - dn0)) down (want >= 1000 each)"
		stats_json >"$WORK/stats.json"; detail "$WORK/stats.json"
	fi
}

for t in t_status t_fast t_nat t_unsolicited t_ipv6 t_forward t_spread t_tc_lan t_redial \
	t_shape; do
	start=$SECONDS
	$t
	echo "# $t: $((SECONDS - start)) s"
done
