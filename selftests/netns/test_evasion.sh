#!/bin/bash
# The firewall as an attacker on the internet tries it: crafted frames from
# the WAN (IPv6 extension-header chains, fragments, VLAN priority and stacked
# tags, IPv4 options) towards a LAN host and a closed service of the router,
# and a host behind an interface that no zone names. Every class has a plain
# control beside it that the policy allows, sent to the same receiver in the
# same window; the assertion is on what the receiving host got, not on
# sluice's counters. Run at both hooks (XDP, then every port in tc mode), and
# once more with the datapath told to pass every frame to the kernel, where
# the kernel backstop alone must hold the same line.
SUITE=evasion
. "$(dirname "$0")/lib.sh"
# Where it runs (selftests/run.sh): every part on the host; in the emulated
# guests, for make check's half hour, both hooks' rounds on each kernel,
# and the router's own traffic and its tunnels (no GRE or WireGuard on the
# host) in the 6.12 guest. What is the kernel's alone (the backstop, its
# conntrack) or the same code whatever the kernel (the NAT limit) runs on
# the host.
KERNEL=${SLUICE_KERNEL:-host}
require_root
topo_suite

CRAFT="/usr/bin/python3 $TOP/selftests/netns/craft.py"
H1_4=192.168.10.11 H1_6=fd00:10::11 INET_4=203.0.113.1 INET_6=2001:db8:113::1
RTR_4=203.0.113.2 RTR_6=2001:db8:113::2
WAN_MAC=$(mac_of "$RTR" wan0)

# A host behind an interface that no zone names (docker0, a guest Wi-Fi
# bridge added later): $STRAY, 10.99.0.2 behind the router's stray0.
STRAY=$TAG-stray
ip netns add "$STRAY"
ip -n "$STRAY" link set lo up
ip -n "$RTR" link add stray0 type veth peer name eth0 netns "$STRAY"
ip -n "$RTR" addr add 10.99.0.1/24 dev stray0
ip -n "$RTR" addr add fd99::1/64 dev stray0 nodad
ip -n "$RTR" link set stray0 up
ip -n "$STRAY" link set eth0 up
ip -n "$STRAY" addr add 10.99.0.2/24 dev eth0
ip -n "$STRAY" addr add fd99::2/64 dev eth0 nodad
ip -n "$STRAY" route add default via 10.99.0.1
ip -n "$STRAY" -6 route add default via fd99::1
STRAY_MAC=$(mac_of "$RTR" stray0)

# The internet may reach H1 on UDP 7000 (a forward for IPv4, a rule for
# IPv6): the controls. The router serves TCP 2222 to the LAN only.
write_cfg() {
	cat > "$WORK/ev.conf" <<EOF
zone lan {
	interfaces br-lan
	input accept
}
zone wan {
	interfaces wan0
	input drop
	masquerade
}
forward lan -> wan
port-forward wan udp 7000 -> $H1_4:7000
rule wan -> lan udp dport 7000 dst $H1_6 accept
EOF
	topo_modes "$WORK/ev.conf"
}

# round LABEL CONTROLS: every class once; the sniffers on H1 and on the
# internet side say what arrived. CONTROLS: the markers H1 must get.
round() {
	local t0=$SECONDS
	local label=$1 controls=$2 k m n=0 got
	rm -f "$WORK"/*.seen*
	# (each sniffer stops a while after the last control came: everything
	# else was sent before the controls)
	in_ns "$H1" $CRAFT sniff eth0 $((10 * SLOW)) "$WORK/h1.seen" 2 "${controls// /,}" &
	local s1=$!
	in_ns "$INET" $CRAFT sniff eth0 $((10 * SLOW)) "$WORK/inet.seen" 2 SLXctlinet &
	local s2=$!
	wait_for 5000 test -e "$WORK/h1.seen.ready" -a -e "$WORK/inet.seen.ready"
	# the evasions: nothing of these may reach H1
	for k in v4 v4-opts v4-frag-later v4-vlan0 v4-qinq; do
		in_ns "$INET" $CRAFT send eth0 "$WAN_MAC" "$k" "$INET_4" "$H1_4" 7777 "SLX${k//-/}"
	done
	for k in v6 v6-hbh v6-dst7 v6-frag-later v6-frag-atomic v6-rthdr v6-vlan0; do
		in_ns "$INET" $CRAFT send eth0 "$WAN_MAC" "$k" "$INET_6" "$H1_6" 7777 "SLX${k//-/}"
	done
	# ... nor a host from an interface in no zone
	in_ns "$STRAY" $CRAFT send eth0 "$STRAY_MAC" v4 10.99.0.2 "$H1_4" 7777 SLXstray4
	in_ns "$STRAY" $CRAFT send eth0 "$STRAY_MAC" v6 fd99::2 "$H1_6" 7777 SLXstray6
	# ... nor get a SYN-ACK from the router's closed (to the WAN) service
	for k in v4 v4-vlan0 v6 v6-hbh v6-dst7 v6-frag-atomic v6-vlan0; do
		n=$((n + 1))
		local dst=$RTR_6 src=$INET_6
		case $k in v4*) dst=$RTR_4 src=$INET_4 ;; esac
		in_ns "$INET" $CRAFT send eth0 "$WAN_MAC" "$k" "$src" "$dst" 2222 "SLXr${k//-/}" $((41000 + n))
	done
	# controls, last: the policy lets these through
	in_ns "$INET" /usr/bin/python3 -c "
import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.sendto(b'SLXctl4', ('$RTR_4', 7000))
s=socket.socket(socket.AF_INET6, socket.SOCK_DGRAM); s.sendto(b'SLXctl6', ('$H1_6', 7000))"
	# ... bridged LAN traffic, which the policy does not judge, and the
	# router's own, which nothing filters
	in_ns "$H2" /usr/bin/python3 -c "
import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.sendto(b'SLXctlbr', ('$H1_4', 7000))"
	in_ns "$RTR" /usr/bin/python3 -c "
import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.sendto(b'SLXctlrtr', ('$H1_4', 7000)); s.sendto(b'SLXctlinet', ('$INET_4', 9))"
	wait "$s1" "$s2"
	echo "# round $label: $((SECONDS - t0)) s"
	got=$(tr '\n' ' ' < "$WORK/h1.seen")
	for m in $controls; do
		grep -qx "$m" "$WORK/h1.seen" && pass "$label: control ${m#SLX} reaches H1" ||
			{ fail "$label: control ${m#SLX} reaches H1"; echo "    H1 got: $got"; }
	done
	for k in v4 v4-opts v4-frag-later v4-vlan0 v4-qinq v6 v6-hbh v6-dst7 v6-frag-later \
		 v6-frag-atomic v6-rthdr v6-vlan0 stray4 stray6; do
		m=SLX${k//-/}
		grep -qx "$m" "$WORK/h1.seen" && { fail "$label: $k from outside reaches H1"; echo "    H1 got: $got"; } ||
			pass "$label: $k from outside does not reach H1"
	done
	got=$(tr '\n' ' ' < "$WORK/inet.seen")
	n=0
	for k in v4 v4-vlan0 v6 v6-hbh v6-dst7 v6-frag-atomic v6-vlan0; do
		n=$((n + 1))
		grep -qx "synack:$((41000 + n))" "$WORK/inet.seen" &&
			{ fail "$label: $k SYN to the router's closed service is answered"; echo "    internet got: $got"; } ||
			pass "$label: $k SYN to the router's closed service gets no answer"
	done
}

# The router's service that the WAN must not reach.
in_ns "$RTR" /usr/bin/python3 -c "
import socket, time
for fam, a in ((socket.AF_INET, '0.0.0.0'), (socket.AF_INET6, '::')):
    s = socket.socket(fam); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if fam == socket.AF_INET6: s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
    s.bind((a, 2222)); s.listen(8); globals()['k' + str(fam)] = s
time.sleep(600)" &
PIDS+=($!)
udp_sink() { in_ns "$H1" /usr/bin/python3 -c "
import socket, time
a = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); a.bind(('0.0.0.0', 7000))
b = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
b.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1); b.bind(('::', 7000))
time.sleep(600)" & PIDS+=($!); }
udp_sink

# The router's own traffic under input drop: replies to what it sent get
# in (nftables' `ct state established,related accept` for it), new
# connections from the internet do not.
own_traffic() {
	local label=$1 r
	in_ns "$RTR" ping -c1 -W$((2 * SLOW)) "$INET_4" >/dev/null 2>&1 &&
		in_ns "$RTR" ping -c1 -W$((2 * SLOW)) "$INET_6" >/dev/null 2>&1 &&
		pass "$label: the router pings the internet (IPv4, IPv6)" ||
		fail "$label: the router pings the internet (IPv4, IPv6)"
	in_ns "$INET" ping -c1 -W1 "$RTR_4" >/dev/null 2>&1 &&
		fail "$label: ... the internet cannot ping it (input drop)" ||
		pass "$label: ... the internet cannot ping it (input drop)"
	# an NTP client's unconnected socket, a resolver's connected one, and
	# an ICMP port unreachable for a closed port (traceroute, PMTU: related)
	r=$(in_ns "$RTR" /usr/bin/python3 - "$INET_4" "$INET_6" "$SLOW" <<'EOF2'
import socket, sys
out = []
for fam, addr in ((socket.AF_INET, sys.argv[1]), (socket.AF_INET6, sys.argv[2])):
    s = socket.socket(fam, socket.SOCK_DGRAM)
    s.settimeout(2 * int(sys.argv[3]))
    s.sendto(b"ntp", (addr, 7123))
    try:
        out.append(s.recvfrom(100)[0].decode())
    except OSError as e:
        out.append("none")
    c = socket.socket(fam, socket.SOCK_DGRAM)
    c.settimeout(2 * int(sys.argv[3]))
    c.connect((addr, 7124))
    c.send(b"dns")
    try:
        out.append(c.recv(100).decode())
    except ConnectionRefusedError:
        out.append("refused")
    except OSError:
        out.append("none")
print(" ".join(out))
EOF2
)
	[ "$r" = "echo:ntp refused echo:ntp refused" ] &&
		pass "$label: UDP answers reach the router's sockets, connected or not, and ICMP errors about them" ||
		fail "$label: UDP answers reach the router's sockets, connected or not, and ICMP errors about them ($r)"
	r=$(in_ns "$INET" /usr/bin/python3 -c "
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(1)
s.sendto(b'x', ('$RTR_4', 7125))
try: print(s.recv(100).decode())
except OSError: print('none')")
	[ "$r" = none ] && pass "$label: ... but a datagram from the internet to its open UDP port gets no answer" ||
		fail "$label: ... but a datagram from the internet to its open UDP port gets no answer ($r)"
}
# the internet's UDP echo (an NTP or DNS server), for the whole suite
in_ns "$INET" /usr/bin/python3 -c "
import select, socket
a = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); a.bind(('$INET_4', 7123))
b = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM); b.bind(('$INET_6', 7123))
while True:
    for s in select.select([a, b], [], [], 600)[0] or exit():
        d, p = s.recvfrom(100); s.sendto(b'echo:' + d, p)" &
PIDS+=($!)
# the router's UDP service (unreachable from the WAN under input drop)
in_ns "$RTR" /usr/bin/python3 -c "
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(('0.0.0.0', 7125)); s.settimeout(600)
while True:
    d, a = s.recvfrom(100); s.sendto(b'open', a)" &
PIDS+=($!)

for mode in xdp tc; do
	if [ "$mode" = tc ]; then SLUICE_TEST_PORT_MODE=tc; else SLUICE_TEST_PORT_MODE=; fi
	write_cfg
	[ "$mode" = tc ] && rsluice down >/dev/null 2>&1
	if ! rsluice up -c "$WORK/ev.conf" >"$WORK/up.log" 2>&1; then
		fail "$mode: sluice up"; detail "$WORK/up.log"; continue
	fi
	round "$mode" "SLXctl4 SLXctl6 SLXctlbr SLXctlrtr"
	[ "$KERNEL" = host ] || { [ "$KERNEL" = 6.12 ] && [ "$mode" = xdp ]; } && own_traffic "$mode"
done
[ "$KERNEL" = 6.1 ] && exit 0

# tunnel_checks NAME DEV ZONE ROUTER-ADDR PEER-ADDR: a tunnel the router
# ends (DEV here, its twin in the internet namespace, both given their
# /24 and brought up), its interface in a zone of its own with input drop,
# and no rule opening the WAN to it: the router's own ping through it is
# answered, the far end opens nothing.
tunnel_checks() {
	local name=$1 dev=$2 zone=$3 mine=$4 peer=$5
	ip -n "$RTR" addr add "$mine/24" dev "$dev"
	ip -n "$INET" addr add "$peer/24" dev "${dev%0}1"
	ip -n "$RTR" link set "$dev" up
	ip -n "$INET" link set "${dev%0}1" up
	printf 'zone %s {\n\tinterfaces %s\n\tinput drop\n}\n' "$zone" "$dev" >>"$WORK/ev.conf"
	if ! rsluice reload -c "$WORK/ev.conf" >"$WORK/reload.log" 2>&1; then
		fail "$name: reload with $dev in a zone"; detail "$WORK/reload.log"; return
	fi
	# (a first ping may wait for the tunnel's handshake)
	in_ns "$RTR" ping -c3 -i0.5 -W$((2 * SLOW)) "$peer" >/dev/null 2>&1
	in_ns "$RTR" ping -c1 -W$((2 * SLOW)) "$peer" >/dev/null 2>&1 &&
		pass "$name: the router's ping through its tunnel is answered (input drop, no rule for it)" ||
		fail "$name: the router's ping through its tunnel is answered"
	in_ns "$INET" ping -c1 -W1 "$mine" >/dev/null 2>&1 &&
		fail "$name: ... the far end cannot ping the router's tunnel address (input drop)" ||
		pass "$name: ... the far end cannot ping the router's tunnel address (input drop)"
}

t_gre() {
	if ! ip -n "$RTR" link add tgre0 type gre local "$RTR_4" remote "$INET_4" ttl 64 2>/dev/null; then
		skip "a GRE tunnel ending on the router: no GRE in this kernel ($(uname -r))"
		return
	fi
	ip -n "$INET" link add tgre1 type gre local "$INET_4" remote "$RTR_4" ttl 64
	tunnel_checks GRE tgre0 vpn 10.77.0.1 10.77.0.2
}

# A WireGuard client on the router: the handshake it starts is answered.
t_wg_client() {
	local k1 k2
	if ! command -v wg >/dev/null || ! ip -n "$RTR" link add wg0 type wireguard 2>/dev/null; then
		skip "a WireGuard client on the router: $(command -v wg >/dev/null && echo "no WireGuard in this kernel ($(uname -r))" || echo "no wg tool (wireguard-tools)")"
		return
	fi
	ip -n "$INET" link add wg1 type wireguard
	(umask 077; wg genkey > "$WORK/wg.k1"; wg genkey > "$WORK/wg.k2")
	k1=$(cat "$WORK/wg.k1") k2=$(cat "$WORK/wg.k2")
	in_ns "$RTR" wg set wg0 private-key "$WORK/wg.k1" \
		peer "$(echo "$k2" | wg pubkey)" allowed-ips 10.97.0.2/32 endpoint "$INET_4:51821"
	in_ns "$INET" wg set wg1 listen-port 51821 private-key "$WORK/wg.k2" \
		peer "$(echo "$k1" | wg pubkey)" allowed-ips 10.97.0.1/32
	tunnel_checks WireGuard wg0 tun 10.97.0.1 10.97.0.2
}
# (on the tc box the last round left: tunnels are tc ports anyway)
t_gre
t_wg_client
[ "$KERNEL" = host ] || exit 0

# One LAN host cannot take NAT away from the others: H1 sends UDP and bare
# TCP ACKs from tens of thousands of ports to an address that never
# answers; H2 still opens TCP connections and UDP exchanges through NAT.
t_exhaust() {
	local n=50000 r ok=0 i
	in_ns "$H1" $CRAFT flood eth0 "$(mac_of "$RTR" br-lan)" "$H1_4" 198.51.100.1 $n
	for i in 1 2 3 4 5; do
		[ "$(tcp_result "$H2" "$INET_4" 7130)" = open ] && ok=$((ok + 1))
	done
	r=$(in_ns "$H2" /usr/bin/python3 - "$INET_4" "$SLOW" <<'EOF2'
import socket, sys
n = 0
for i in range(3):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(2 * int(sys.argv[2]))
    s.sendto(b"x", (sys.argv[1], 7123))
    try:
        s.recvfrom(100)
        n += 1
    except OSError:
        pass
print(n)
EOF2
)
	[ "$ok" = 5 ] && [ "$r" = 3 ] &&
		pass "after $n UDP datagrams and $n bare ACKs from H1's own ports to a silent address, H2 opens 5 of 5 TCP connections and 3 of 3 UDP exchanges through NAT" ||
		fail "after $n UDP datagrams and $n bare ACKs from H1, H2 opens TCP $ok of 5, UDP $r of 3"
	r=$(rsluice stats --json -i 0)
	json_get "$r" "[h for h in j['nat']['hosts_limited'] if h['addr'] == '$H1_4' and h['refused'] > 0 and h['ports'] <= j['nat']['host_ports']] != []" | grep -qx True &&
		pass "... H1 was held to its nat-host-ports, and sluice stats names it" ||
		fail "... H1 was held to its nat-host-ports, and sluice stats names it ($(json_get "$r" "j['nat']['hosts_limited']"))"
	rsluice stats --prometheus -i 0 | grep -q "^sluice_nat_host_refused_total{host=\"$H1_4\",zone=\"lan\"} [1-9]" &&
		pass "... and so does its Prometheus series" ||
		fail "... and so does its Prometheus series ($(rsluice stats --prometheus -i 0 | grep nat_host))"
	r=$(rsluice conntrack --json --proto tcp | json_get "$(cat)" "len([f for f in j if f.get('state') == 'established'])")
	[ "$r" -lt 10 ] && pass "... its bare ACKs opened no connection ($r established)" ||
		fail "... its bare ACKs opened no connection ($r established)"
}
in_ns "$INET" /usr/bin/python3 -c "
import socket, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(('$INET_4', 7130)); s.listen(64); s.settimeout(600)
while True:
    c, _ = s.accept(); c.close()" &
PIDS+=($!)
SLUICE_TEST_PORT_MODE=
write_cfg
rsluice down >/dev/null 2>&1
rsluice up -c "$WORK/ev.conf" >"$WORK/up.log" 2>&1 || { fail "sluice up"; detail "$WORK/up.log"; }
t_exhaust

# A blind RST sweep (RFC 5961): RSTs as if from the server of a connection
# H2 opened through NAT (t_exhaust left H1 at its NAT limit), at sequence
# numbers all over the space but near what the server sent, reach neither
# H2 nor the connection's state; the server's own RST at its sequence
# number closes it.
t_rst_sweep() {
	local d=$WORK/sweep r st
	rm -rf "$d"; mkdir -p "$d"
	in_ns "$INET" /usr/bin/python3 "$TOP/selftests/netns/rstsweep.py" server eth0 "$WAN_MAC" \
		"$INET_4" 7140 "$d" $((20 * SLOW)) >"$d/server.log" 2>&1 &
	local sp=$!
	wait_for 5000 test -e "$d/listening"
	in_ns "$H2" /usr/bin/python3 "$TOP/selftests/netns/rstsweep.py" client eth0 "$INET_4" 7140 \
		"$d" $((20 * SLOW)) >"$d/client.log" 2>&1 &
	local cp=$!
	wait_for $((30000 * SLOW)) grep -qE "^(alive|dead)" "$d/client.log"
	st=$(rsluice conntrack --json --proto tcp --port 7140 |
		json_get "$(cat)" "sorted(set(f['state'] for f in j))")
	touch "$d/checked"
	wait "$cp" "$sp"
	r=$(tr '\n' ' ' < "$d/client.log")
	case " $r" in
	*" sweep-rsts 0 alive "*) pass "2002 blind RSTs outside the window reach no LAN host, the connection carries on" ;;
	*) fail "2002 blind RSTs outside the window reach no LAN host, the connection carries on ($r)"; detail "$d/server.log" ;;
	esac
	[ "$st" = "['established']" ] && pass "... and its state stays established" ||
		fail "... and its state stays established ($st)"
	case " $r" in
	*" reset "*) pass "... the server's own RST at its sequence number closes it" ;;
	*) fail "... the server's own RST at its sequence number closes it ($r)" ;;
	esac
}
t_rst_sweep

# One host cannot take the connection table from the others, whatever it
# opens (here untranslated IPv6 flows, which need no NAT port): in a table
# of 4096 connections (a host-flows of 256), H1 sends UDP from 5000 ports;
# it keeps 256 of them, and H2 still opens connections.
t_host_flows() {
	local r ok=0 i
	write_cfg
	echo "conntrack { size 4096 }" >> "$WORK/ev.conf"
	rsluice down >/dev/null 2>&1
	rsluice up -c "$WORK/ev.conf" >"$WORK/up.log" 2>&1 || { fail "sluice up (conntrack size 4096)"; detail "$WORK/up.log"; return; }
	in_ns "$H1" $CRAFT flood eth0 "$(mac_of "$RTR" br-lan)" "$H1_6" "$INET_6" 5000
	for i in 1 2 3 4 5; do
		case $(tcp_result "$H2" "$INET_6" 7131) in open|refused) ok=$((ok + 1)) ;; esac
	done
	r=$(rsluice conntrack --json --proto udp | json_get "$(cat)" "len([f for f in j if f['src'] == '$H1_6'])")
	[ "$ok" = 5 ] && [ "$r" -le 256 ] && [ "$r" -ge 200 ] &&
		pass "after UDP from 5000 of H1's ports, H1 has $r connections (host-flows 256) and H2 reaches the internet 5 of 5 times" ||
		fail "after UDP from 5000 of H1's ports, H1 has $r connections (host-flows 256), H2 reaches the internet $ok of 5 times"
	r=$(rsluice stats --json -i 0)
	json_get "$r" "[h for h in j['conntrack']['hosts_limited'] if h['addr'] == '$H1_6' and h['refused'] > 0] != [] and j['conntrack']['host_flows'] == 256" | grep -qx True &&
		pass "... sluice stats names H1 at its host-flows" ||
		fail "... sluice stats names H1 at its host-flows ($(json_get "$r" "j['conntrack']"))"
	rsluice stats --prometheus -i 0 | grep -q "^sluice_host_flows_refused_total{host=\"$H1_6\",zone=\"lan\"} [1-9]" &&
		pass "... and so does its Prometheus series" ||
		fail "... and so does its Prometheus series ($(rsluice stats --prometheus -i 0 | grep host_flows))"
	rsluice down >/dev/null 2>&1
	write_cfg
	rsluice up -c "$WORK/ev.conf" >"$WORK/up.log" 2>&1 || { fail "sluice up"; detail "$WORK/up.log"; }
}
t_host_flows

# The backstop stays in place: `nft flush ruleset` (what a restart of
# nftables.service does) takes it away, and the daemon puts it back.
write_cfg
rsluice reload -c "$WORK/ev.conf" >/dev/null 2>&1
nsenter --net="/run/netns/$RTR" "$SLUICE" -p "$PIN" run -c "$WORK/ev.conf" >"$WORK/run.log" 2>&1 &
DAEMON_PID=$!
wait_for 15000 grep -q "following interface changes" "$WORK/run.log"	# (the first apply loads the programs)
in_ns "$RTR" nft add table inet admin
in_ns "$RTR" nft flush ruleset
if wait_for 15000 in_ns "$RTR" nft list table inet sluice; then
	pass "the daemon puts the backstop back after nft flush ruleset ($WAITED_MS ms)"
else
	fail "the daemon puts the backstop back after nft flush ruleset"; detail "$WORK/run.log"
fi
rsluice status | grep -q "backstop  *nftables table inet sluice;" &&
	pass "sluice status shows the backstop" || fail "sluice status shows the backstop"
in_ns "$RTR" nft add table inet admin
kill "$DAEMON_PID"; wait "$DAEMON_PID" 2>/dev/null; DAEMON_PID=
rsluice down >/dev/null 2>&1
! in_ns "$RTR" nft list table inet sluice >/dev/null 2>&1 && in_ns "$RTR" nft list table inet admin >/dev/null 2>&1 &&
	pass "down removes the backstop and leaves the admin's own table" ||
	fail "down removes the backstop and leaves the admin's own table"
[ "$(in_ns "$RTR" sysctl -n net.ipv4.ip_forward)" = 0 ] &&
	pass "down turns forwarding off" || fail "down turns forwarding off"

# The backstop alone: the datapath passes every frame to the kernel
# unjudged, and nothing the policy forbids gets through all the same (nor
# anything it allows: nothing was judged, and where br_netfilter shows the
# backstop bridged frames, not those either); the router's own traffic
# still leaves.
SLUICE_TEST_PORT_MODE=
write_cfg
rsluice down >/dev/null 2>&1
if SLUICE_TEST_PASS_ALL=1 rsluice up -c "$WORK/ev.conf" >"$WORK/up.log" 2>&1; then
	round "backstop alone" "SLXctlrtr"
else
	fail "backstop alone: sluice up"; detail "$WORK/up.log"
fi
