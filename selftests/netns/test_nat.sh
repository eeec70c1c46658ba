#!/bin/bash
# NAT on the reference topology, with the internet namespace
# knowing no route back to the LAN: every LAN host reaches it only through
# masquerade. Checked here: what the server sees (the WAN address), port
# preservation and two hosts with the same source port, endpoint-
# independent mapping across two servers, address-and-port-dependent
# filtering, TCP and ping through the NAT, `sluice conntrack` and the
# counters.
SUITE=nat${SLUICE_TEST_PORT_MODE:+ ($SLUICE_TEST_PORT_MODE mode)}
. "$(dirname "$0")/lib.sh"
require_root

WORK=$(mktemp -d /tmp/sluice-test.XXXXXX)
DAEMON_PID=
# `sluice run` in the router, up once it applied its config (its applies
# turn on holding out-of-order fragments).
start_daemon() {
	: >"$WORK/daemon.log"
	nsenter --net="/run/netns/$RTR" "$SLUICE" -p "$PIN" run -v -c "$CFG" >>"$WORK/daemon.log" 2>&1 &
	DAEMON_PID=$!
	wait_for 15000 grep -q "following interface changes" "$WORK/daemon.log" && return 0
	fail "sluice run starts"; detail "$WORK/daemon.log"
	stop_daemon
	return 1
}

stop_daemon() {
	[ -n "${DAEMON_PID:-}" ] || return 0
	kill "$DAEMON_PID" 2>/dev/null
	wait "$DAEMON_PID" 2>/dev/null
	DAEMON_PID=
}

cleanup() { stop_daemon; topo_down; rm -rf "$WORK"; }
trap cleanup EXIT
trap 'exit 130' INT TERM

if ! TOPO_ROUTE_BACK=0 topo_up >"$WORK/topo.log" 2>&1; then
	fail "reference topology comes up"; detail "$WORK/topo.log"; exit 1
fi
# A second server address in the internet, for the mapping tests.
ip -n "$INET" addr add 198.51.100.1/32 dev lo

CFG=$WORK/nat.conf
cat > "$CFG" <<EOF
zone lan {
	interfaces br-lan
	input accept
}
zone wan {
	interfaces wan0
	input drop
	masquerade
	mss-clamp 1400
}
forward lan -> wan
port-forward wan tcp 8080 -> 192.168.10.13:80
port-forward wan udp 7200-7201 -> 192.168.10.14:7300
# a small range, so that t_exhaustion can fill it (from one host: no
# per-host limit below the range)
nat-ports 20000-20127
nat-host-ports 65535
EOF
topo_modes "$CFG"

# udp_seen NS SPORT DST DPORT...: from source port SPORT (0: any) to each
# DST:DPORT in turn on one socket; prints what each server saw, one a line.
udp_seen() {
	local ns=$1 sport=$2
	shift 2
	in_ns "$ns" /usr/bin/python3 - "$sport" "$@" <<'EOF'
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", int(sys.argv[1])))
s.settimeout(2)
args = sys.argv[2:]
for dst, port in zip(args[0::2], args[1::2]):
    try:
        s.sendto(b"who", (dst, int(port)))
        print(s.recvfrom(100)[0].decode())
    except socket.timeout:
        print("timeout")
EOF
}

t_up() {
	if rsluice up -c "$CFG" >"$WORK/up.log" 2>&1; then
		pass "up with masquerade on the WAN zone"
	else
		fail "up with masquerade on the WAN zone"; detail "$WORK/up.log"; exit 1
	fi
}

# Every LAN host reaches the internet's server, which sees the WAN address.
t_masquerade() {
	local i out bad=""
	udp_peer "$INET" 203.0.113.1 7100
	wait_for 3000 listening "$INET" 7100 u
	# fixed source ports outside nat-ports: an allocated port could be
	# 20001, which t_same_port expects to find free
	for i in 1 2 3 4 5; do
		out=$(udp_seen "$TAG-h$i" $((21000 + i)) 203.0.113.1 7100)
		case $out in
		203.0.113.2:*) ;;
		*) bad="$bad h$i:$out" ;;
		esac
	done
	[ -z "$bad" ] && pass "five LAN hosts reach the internet over UDP; the server sees 203.0.113.2" ||
		fail "five LAN hosts reach the internet over UDP; the server sees 203.0.113.2 ($bad)"
}

# RFC 4787 REQ-3 (no port overloading) with port preservation: the first
# host keeps its port, the second with the same port gets another one,
# and both get their answers.
t_same_port() {
	local a b
	a=$(udp_seen "$H1" 20001 203.0.113.1 7100)
	b=$(udp_seen "$H2" 20001 203.0.113.1 7100)
	[ "$a" = 203.0.113.2:20001 ] && pass "the first host's source port is preserved ($a)" ||
		fail "the first host's source port is preserved ($a)"
	case $b in
	203.0.113.2:20001|timeout|"") fail "a second host with the same source port gets another external port and its answer ($b)" ;;
	203.0.113.2:*) pass "a second host with the same source port gets another external port and its answer ($b)" ;;
	*) fail "a second host with the same source port gets another external port and its answer ($b)" ;;
	esac
	# a port in the router's own ephemeral range is never preserved
	a=$(udp_seen "$H3" 40001 203.0.113.1 7100)
	case $a in
	203.0.113.2:40001|timeout) fail "a source port in the router's ephemeral range is not preserved ($a)" ;;
	*) pass "a source port in the router's ephemeral range is not preserved ($a)" ;;
	esac
}

# RFC 4787 REQ-1: one inside endpoint, two servers, one external port.
t_eim() {
	local out
	udp_peer "$INET" 198.51.100.1 7101
	wait_for 3000 listening "$INET" 7101 u
	out=$(udp_seen "$H4" 20004 203.0.113.1 7100 198.51.100.1 7101 | sort -u -t: -k2 | wc -l)
	[ "$out" = 1 ] && pass "endpoint-independent mapping: two servers see the same external port" ||
		fail "endpoint-independent mapping: two servers see the same external port ($(udp_seen "$H4" 20004 203.0.113.1 7100 198.51.100.1 7101 | tr '\n' ' '))"
}

# Address-and-port-dependent filtering (the default): a datagram to the
# mapped port from another port of the server is not let in; from the
# server's own port it is (an answer).
t_filtering() {
	local got pid
	in_ns "$INET" /usr/bin/python3 - >"$WORK/filter.srv" 2>&1 <<'EOF' &
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("203.0.113.1", 7102))
s.settimeout(5)
d, a = s.recvfrom(100)
o = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
o.bind(("203.0.113.1", 7103))
o.sendto(b"other-port", a)
s.sendto(b"answer", a)
print(a)
EOF
	pid=$!
	wait_for 3000 listening "$INET" 7102 u
	got=$(in_ns "$H5" /usr/bin/python3 - 2>&1 <<'EOF'
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("0.0.0.0", 20005))
s.settimeout(2)
s.sendto(b"open", ("203.0.113.1", 7102))
try:
    while True:
        d, a = s.recvfrom(100)
        print(a[1], d.decode())
except socket.timeout:
    pass
EOF
)
	wait $pid
	echo "$got" | grep -q "7102 answer" && ! echo "$got" | grep -q other-port &&
		pass "address-and-port-dependent filtering: the answer comes in, another port's datagram not" ||
		{ fail "address-and-port-dependent filtering: the answer comes in, another port's datagram not ($got)"; detail "$WORK/filter.srv"; }
}

# TCP and ICMP echo through the NAT; the flows show both tuples.
t_tcp_icmp() {
	local ok=1 ct
	in_ns "$INET" iperf3 -s -B 203.0.113.1 -D -p 5401
	wait_for 3000 listening "$INET" 5401 t
	in_ns "$H1" iperf3 -c 203.0.113.1 -p 5401 -t 2 -J >"$WORK/iperf.json" 2>&1 || ok=0
	[ "$ok" = 1 ] && [ "$(json_get "$(cat "$WORK/iperf.json")" "j['end']['sum_received']['bytes'] > 0")" = True ] &&
		pass "a TCP transfer through the NAT (iperf3)" ||
		{ fail "a TCP transfer through the NAT (iperf3)"; detail "$WORK/iperf.json"; }
	in_ns "$H2" ping -c3 -i0.2 -W2 203.0.113.1 >"$WORK/ping.log" 2>&1 &&
		in_ns "$H3" ping -c3 -i0.2 -W2 203.0.113.1 >>"$WORK/ping.log" 2>&1 &&
		pass "ping through the NAT from two hosts" ||
		{ fail "ping through the NAT from two hosts"; detail "$WORK/ping.log"; }
	ct=$(ct_json --proto udp --port 20001)
	[ "$(json_get "$ct" "sorted(set((f['src'], f.get('nat_src')) for f in j))")" = "[('192.168.10.11', '203.0.113.2'), ('192.168.10.12', '203.0.113.2')]" ] &&
		pass "conntrack shows the inside and the translated source" ||
		fail "conntrack shows the inside and the translated source ($ct)"
}

t_counters() {
	local s
	s=$(stats_json)
	[ "$(json_get "$s" "j['nat']['mapped'] >= 5 and j['nat']['preserved'] >= 1 and j['nat']['reused'] >= 1 and j['nat']['mappings'] >= 5")" = True ] &&
		pass "stats counts mappings in use and made, ports preserved, mappings reused" ||
		fail "stats counts mappings in use and made, ports preserved, mappings reused ($(json_get "$s" "j.get('nat')"))"
}

# Port forwards from the internet, and hairpin from the LAN to the WAN
# address (RFC 4787 REQ-9): the server sees the client's external endpoint,
# which it answers through the router.
t_port_forward() {
	local out ct s
	tcp_peer "$H3" 192.168.10.13 80
	udp_peer "$H4" 192.168.10.14 7300
	udp_peer "$H4" 192.168.10.14 7301
	wait_for 3000 listening "$H3" 80 t
	wait_for 3000 listening "$H4" 7301 u
	out=$(tcp_seen "$INET" 203.0.113.2 8080)
	case $out in
	203.0.113.1:*) pass "port forward: a TCP connection to 203.0.113.2:8080 reaches 192.168.10.13:80 ($out)" ;;
	*) fail "port forward: a TCP connection to 203.0.113.2:8080 reaches 192.168.10.13:80 ($out)" ;;
	esac
	out=$(udp_seen "$INET" 0 203.0.113.2 7200 203.0.113.2 7201 | tr '\n' ' ')
	case $out in
	"203.0.113.1:"*" 203.0.113.1:"*) pass "port forward: UDP to a port range reaches the target's range ($out)" ;;
	*) fail "port forward: UDP to a port range reaches the target's range ($out)" ;;
	esac
	out=$(tcp_seen "$H1" 203.0.113.2 8080)
	case $out in
	203.0.113.2:*) pass "hairpin: a LAN host reaches the forward at the WAN address; the server sees 203.0.113.2 ($out)" ;;
	*) fail "hairpin: a LAN host reaches the forward at the WAN address; the server sees 203.0.113.2 ($out)" ;;
	esac
	ct=$(ct_json --proto tcp --port 8080)
	[ "$(json_get "$ct" "any(f.get('nat_dst') == '192.168.10.13' and f.get('nat_dport') == 80 for f in j)")" = True ] &&
		pass "conntrack shows the forward's translated destination" ||
		fail "conntrack shows the forward's translated destination ($ct)"
	s=$(stats_json)
	[ "$(json_get "$s" "j['nat']['forwarded'] >= 4 and j['nat']['hairpin'] >= 1 and j['nat']['forward_ports'] == 3")" = True ] &&
		pass "stats counts forwarded and hairpinned connections, and the forwarded ports" ||
		fail "stats counts forwarded and hairpinned connections, and the forwarded ports ($(json_get "$s" "j.get('nat')"))"
}

# A 3000-byte UDP datagram each way through the NAT: fragmented by the
# LAN host and by the server, every later fragment translated like its
# first (the address-only rewrite, sluice_frag4).
t_fragments() {
	local out s
	udp_echo "$INET" 203.0.113.1 7500
	wait_for 3000 listening "$INET" 7500 u
	out=$(in_ns "$H1" /usr/bin/python3 - <<'EOF'
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(3)
try:
    s.sendto(b"x" * 3000, ("203.0.113.1", 7500))
    print(len(s.recvfrom(65535)[0]))
except socket.timeout:
    print("timeout")
EOF
)
	s=$(stats_json)
	[ "$out" = 3005 ] && [ "$(json_get "$s" "j['nat']['fragments'] >= 4")" = True ] &&
		pass "a fragmented UDP datagram each way through the NAT (later fragments translated: $(json_get "$s" "j['nat']['fragments']"))" ||
		fail "a fragmented UDP datagram each way through the NAT ($out, $(json_get "$s" "j['nat']"))"
}

# RFC 4787 REQ-14: a datagram whose fragments arrive last first, each way
# (frag_reverse.py: two later fragments out, one in). The later fragments
# wait in the daemon until the first has passed and are then replayed
# through the datapath, translated.
t_frag_order() {
	local out s pid
	start_daemon || return
	in_ns "$INET" timeout 25 /usr/bin/python3 "$TOP/selftests/netns/frag_reverse.py" server \
		203.0.113.1 7501 2900 >"$WORK/fragrev.srv" 2>&1 &
	pid=$!
	wait_for 3000 listening "$INET" 7501 u
	out=$(in_ns "$H1" timeout 10 /usr/bin/python3 "$TOP/selftests/netns/frag_reverse.py" client \
		192.168.10.11 7601 203.0.113.1 7501 3000 2>&1)
	s=$(stats_json)
	if grep -q "this kernel refuses to replay held fragments" "$WORK/daemon.log"; then
		skip "fragments out of order each way: this kernel refuses XDP live frames, which the replay needs (the daemon says so; the Debian guests run it)"
	else
		[ "$out" = 2900 ] &&
			[ "$(json_get "$s" "j['nat']['fragments_held'] >= 3 and j['nat']['fragments_replayed'] >= 3")" = True ] &&
			pass "fragments out of order each way: the later ones are held until their first came, then forwarded translated (held $(json_get "$s" "j['nat']['fragments_held']"), replayed $(json_get "$s" "j['nat']['fragments_replayed']"))" ||
			{ fail "fragments out of order each way: the later ones are held until their first came, then forwarded translated ($out; $(json_get "$s" "j['nat']"); drops $(json_get "$s" "j['total']['drop_reasons']"))"
			  detail "$WORK/daemon.log"; detail "$WORK/fragrev.srv"; }
	fi
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	# (the daemon stays for t_wan_address)
}

# A GRE tunnel from a LAN host to the internet namespace: translated by
# address (the far end knows the inside host as 203.0.113.2).
t_gre() {
	local ct
	if ! ip -n "$H1" link add gre-t type gre remote 203.0.113.1 local 192.168.10.11 \
		2>"$WORK/gre.err"; then
		skip "GRE through the NAT: no GRE in this kernel ($(uname -r)): $(head -1 "$WORK/gre.err")"
		return
	fi
	ip -n "$INET" link add gre-t type gre remote 203.0.113.2 local 203.0.113.1
	ip -n "$H1" addr add 10.99.0.1/30 dev gre-t
	ip -n "$INET" addr add 10.99.0.2/30 dev gre-t
	ip -n "$H1" link set gre-t up
	ip -n "$INET" link set gre-t up
	if in_ns "$H1" ping -c3 -i0.2 -W$((2 * SLOW)) 10.99.0.2 >"$WORK/gre.log" 2>&1 &&
	   in_ns "$INET" ping -c2 -i0.2 -W$((2 * SLOW)) 10.99.0.1 >>"$WORK/gre.log" 2>&1; then
		pass "a GRE tunnel from a LAN host through the NAT carries pings both ways"
	else
		fail "a GRE tunnel from a LAN host through the NAT carries pings both ways"
		detail "$WORK/gre.log"
	fi
	ct=$(ct_json --proto 47)
	[ "$(json_get "$ct" "[(f['src'], f.get('nat_src')) for f in j]")" = "[('192.168.10.11', '203.0.113.2')]" ] &&
		pass "conntrack shows the GRE flow and its translated source" ||
		fail "conntrack shows the GRE flow and its translated source ($ct)"
}

# syn_mss NS PORT READY: the MSS option of the first TCP SYN to PORT that NS
# receives in 5 s (stretched by SLOW) of an AF_PACKET capture, or "none";
# creates the file READY once it captures.
syn_mss() {
	in_ns "$1" timeout $((6 * SLOW)) /usr/bin/python3 - "$2" "$3" "$((5 * SLOW))" <<'EOF'
import socket, struct, sys, time
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0800))
open(sys.argv[2], "w").close()
s.settimeout(int(sys.argv[3]))
end = time.time() + int(sys.argv[3])
while time.time() < end:
    try:
        f = s.recv(2048)
    except socket.timeout:
        break
    ip = f[14:]
    if ip[9] != 6:
        continue
    t = ip[(ip[0] & 15) * 4:]
    if struct.unpack("!H", t[2:4])[0] != int(sys.argv[1]) or not t[13] & 2:
        continue
    o, i = t[20:(t[12] >> 4) * 4], 0
    while i < len(o) and o[i] != 0:
        if o[i] == 1:
            i += 1
            continue
        if o[i] == 2:
            print(struct.unpack("!H", o[i + 2:i + 4])[0])
            sys.exit(0)
        i += max(o[i + 1], 2)
    break
print("none")
EOF
}

# `mss-clamp 1400` on the WAN: a SYN leaves announcing 1400 (the LAN
# host's own is 1460).
t_mss() {
	local out
	tcp_peer "$INET" 203.0.113.1 7401
	wait_for 3000 listening "$INET" 7401 t
	rm -f "$WORK/mss.ready"
	syn_mss "$INET" 7401 "$WORK/mss.ready" >"$WORK/mss.out" &
	wait_for 5000 test -e "$WORK/mss.ready"
	tcp_seen "$H2" 203.0.113.1 7401 >/dev/null
	wait $!
	out=$(cat "$WORK/mss.out")
	[ "$out" = 1400 ] && pass "mss-clamp 1400: a LAN host's SYN reaches the internet announcing 1400" ||
		fail "mss-clamp 1400: a LAN host's SYN reaches the internet announcing 1400 ($out)"
}

# RFC 5780 behaviour discovery from a LAN host against a STUN server with
# two addresses in the internet (nat.md): endpoint-independent mapping, and
# the filtering the WAN zone is configured with.
natdiscovery() {
	in_ns "$H5" timeout $((30 * SLOW)) turnutils_natdiscovery -m -f 203.0.113.1 2>&1
}
t_natdiscovery() {
	local out
	if ! command -v turnserver >/dev/null || ! command -v turnutils_natdiscovery >/dev/null; then
		skip "RFC 5780 NAT discovery: coturn is not installed"
		return
	fi
	: >"$WORK/turn.conf"
	# (not in_ns: a backgrounded function is a subshell, and $! would
	# not be the server)
	ip netns exec "$INET" turnserver -c "$WORK/turn.conf" -L 203.0.113.1 -L 198.51.100.1 \
		--no-tcp --no-tls --no-dtls --no-cli -z --log-file stdout >"$WORK/turn.log" 2>&1 &
	TURN_PID=$!
	wait_for 5000 listening "$INET" 3478 u
	out=$(natdiscovery)
	grep -q "NAT with Endpoint Independent Mapping" <<<"$out" &&
		grep -q "NAT with Address and Port Dependent Filtering" <<<"$out" &&
		pass "turnutils_natdiscovery: endpoint-independent mapping, address-and-port-dependent filtering" ||
		{ fail "turnutils_natdiscovery: endpoint-independent mapping, address-and-port-dependent filtering"; printf '%s\n' "$out" | sed 's/^/    /'; }
	sed 's/^\tmasquerade$/\tmasquerade\n\tfiltering endpoint-independent/' "$CFG" >"$WORK/eif.conf"
	if ! rsluice reload -c "$WORK/eif.conf" >"$WORK/reload.log" 2>&1; then
		fail "reload with endpoint-independent filtering"; detail "$WORK/reload.log"
	else
		out=$(natdiscovery)
		grep -q "NAT with Endpoint Independent Mapping" <<<"$out" &&
			grep -q "NAT with Endpoint Independent Filtering" <<<"$out" &&
			pass "turnutils_natdiscovery after reload: endpoint-independent mapping and filtering" ||
			{ fail "turnutils_natdiscovery after reload: endpoint-independent mapping and filtering"; printf '%s\n' "$out" | sed 's/^/    /'; }
	fi
	kill "$TURN_PID" 2>/dev/null
	wait "$TURN_PID" 2>/dev/null
}

# ICMP errors about translated flows (RFC 5508), with a host one router
# beyond the internet namespace ($TAG-far, 198.18.0.2, behind a 1280-byte
# link): traceroute from a LAN host lists the router, the internet's router
# and the destination (the time-exceeded of the second hop comes to the
# WAN address and must be translated to the host), and a TCP upload with
# DF across the small link succeeds only if fragmentation-needed reaches
# the host (path MTU discovery). The sender must get all 2 MB out (it
# stalls for good if full-size segments never shrink); the receiver's count
# is taken when the sender ends, with data still in flight under emulation,
# so it only has to show that segments of the reduced size got through.
t_icmp_errors() {
	local far=$TAG-far out mode
	ip netns add "$far"
	ip -n "$far" link set lo up
	ip -n "$INET" link add far0 type veth peer name eth0 netns "$far"
	ip -n "$INET" addr add 198.18.0.1/24 dev far0
	ip -n "$INET" link set far0 mtu 1280 up
	ip -n "$far" addr add 198.18.0.2/24 dev eth0
	ip -n "$far" link set eth0 up
	ip -n "$far" route add default via 198.18.0.1
	ip netns exec "$INET" sysctl -qw net.ipv4.ip_forward=1
	in_ns "$far" ethtool -K eth0 tx off >/dev/null 2>&1
	if command -v traceroute >/dev/null; then
		for mode in "" -I; do
			out=$(in_ns "$H2" timeout $((20 * SLOW)) traceroute -n $mode -w 2 -q 1 -m 5 198.18.0.2 2>&1)
			if grep -q '^ 1  192.168.10.1 ' <<<"$out" && grep -q '^ 2  203.0.113.1 ' <<<"$out" &&
			   grep -q '^ 3  198.18.0.2 ' <<<"$out"; then
				pass "traceroute ${mode:-(UDP)} through the NAT lists the router, the next router and the destination"
			else
				fail "traceroute ${mode:-(UDP)} through the NAT lists the router, the next router and the destination"
				printf '%s\n' "$out" | sed 's/^/    /'
			fi
		done
	else
		skip "traceroute through the NAT: traceroute is not installed"
	fi
	in_ns "$far" iperf3 -s -B 198.18.0.2 -D -p 5402
	wait_for 3000 listening "$far" 5402 t
	if in_ns "$H3" timeout $((30 * SLOW)) iperf3 -c 198.18.0.2 -p 5402 -n 2M -J >"$WORK/pmtu.json" 2>&1 &&
	   [ "$(json_get "$(cat "$WORK/pmtu.json")" "'error' not in j and j['end']['sum_sent']['bytes'] >= 2000000 and j['end']['sum_received']['bytes'] >= 100000")" = True ]; then
		pass "path MTU discovery through the NAT: a TCP upload across a 1280-byte link completes"
	else
		fail "path MTU discovery through the NAT: a TCP upload across a 1280-byte link completes"
		detail "$WORK/pmtu.json"
	fi
}

# Path MTU discovery for a download through the NAT: the LAN side's MTU
# (1400 here) is below the internet's, so the server's full-size segments
# are too big for it. The fragmentation-needed must quote them as the
# server sent them (to the WAN address and port, which its stack knows the
# connection by); the kernel's own would quote them translated, to the LAN
# host's address, and the download would stall.
t_pmtu_download() {
	local p
	for p in lan1 lan2 lan3 lan4 lan5 br-lan; do ip -n "$RTR" link set "$p" mtu 1400; done
	in_ns "$INET" iperf3 -s -B 203.0.113.1 -D -p 5403
	wait_for 3000 listening "$INET" 5403 t
	if in_ns "$H3" timeout $((30 * SLOW)) iperf3 -R -c 203.0.113.1 -p 5403 -n 2M -J >"$WORK/pmtu-down.json" 2>&1 &&
	   [ "$(json_get "$(cat "$WORK/pmtu-down.json")" "'error' not in j and j['end']['sum_received']['bytes'] >= 1000000")" = True ]; then
		pass "path MTU discovery through the NAT: a TCP download onto a 1400-byte LAN completes"
	else
		fail "path MTU discovery through the NAT: a TCP download onto a 1400-byte LAN completes"
		detail "$WORK/pmtu-down.json"
	fi
	[ "$(json_get "$(rsluice stats --json -i 0)" "j['total']['drop_reasons']['nat-mtu'] > 0")" = True ] &&
		pass "... the router answered the too-big segments itself (nat-mtu)" ||
		fail "... the router answered the too-big segments itself (nat-mtu)"
	for p in br-lan lan1 lan2 lan3 lan4 lan5; do ip -n "$RTR" link set "$p" mtu 1500; done
}

# The server of t_masquerade on 203.0.113.1:7100 again, if it left (it
# ends after a minute without datagrams, stretched under emulation).
peer_7100() {
	listening "$INET" 7100 u && return
	udp_peer "$INET" 203.0.113.1 7100
	wait_for 3000 listening "$INET" 7100 u
}

# The range exhausted from one host (300 inside ports the router's own
# range keeps from being preserved, for 128 external ports): the rest are
# dropped as nat-no-port, never given a shared port, and another host's
# flow keeps working. Runs late: the mappings stay until the address
# changes (t_wan_address) or the daemon frees them.
t_exhaustion() {
	local out s
	udp_peer "$INET" 203.0.113.1 7600
	wait_for 3000 listening "$INET" 7600 u
	out=$(in_ns "$H5" /usr/bin/python3 - <<'EOF'
import errno, select, socket, time
socks = []
for p in range(33000, 33300):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("0.0.0.0", p))
    s.connect(("203.0.113.1", 7600))	# (so ICMP errors reach it)
    s.setblocking(False)
    s.send(b"x")
    socks.append(s)
seen, refused, end = set(), 0, time.time() + 3
while time.time() < end and socks:
    r, _, _ = select.select(socks, [], [], 0.5)
    for s in r:
        try:
            seen.add(s.recv(100).decode())
        except OSError as e:
            refused += e.errno == errno.EHOSTUNREACH
        socks.remove(s)
print(len(seen), len(set(a.split(":")[1] for a in seen)), refused)
EOF
)
	s=$(stats_json)
	set -- $out
	[ "${1:-0}" -ge 64 ] && [ "${1:-0}" -le 128 ] && [ "${1:-0}" = "${2:-}" ] &&
		[ "$(json_get "$s" "j['total']['drop_reasons']['nat-no-port'] > 0")" = True ] &&
		pass "300 ports from one host on a 128-port range: $1 answered on $2 distinct ports, the rest dropped as nat-no-port" ||
		fail "300 ports from one host on a 128-port range: answered, distinct ports: ${out:-none}; nat-no-port $(json_get "$s" "j['total']['drop_reasons']['nat-no-port']")"
	[ "${3:-0}" -ge 1 ] && [ "$(json_get "$s" "j['nat']['prohibited'] >= 1")" = True ] &&
		pass "exhaustion is answered with ICMP administratively prohibited, rate-limited (the host saw $3, host unreachable)" ||
		fail "exhaustion is answered with ICMP administratively prohibited ($out; sent $(json_get "$s" "j['nat']['prohibited']"); nat-no-port by port $(json_get "$s" "[(p['name'], p['drop_reasons']['nat-no-port'], p['tx']['packets']) for p in j['ports']]"))"
	peer_7100
	out=$(udp_seen "$H1" 20001 203.0.113.1 7100)
	[ "$out" = 203.0.113.2:20001 ] && pass "another host's existing flow keeps working ($out)" ||
		fail "another host's existing flow keeps working ($out)"
}

# old_flows_gone OLD NEW-REGEX WHAT: no flow is translated to OLD any more,
# and the daemon's log says "masquerade address OLD -> NEW"
old_flows_gone() {
	[ "$(json_get "$(ct_json)" "[f.get('nat_src') for f in j if f.get('nat_src') == '$1']")" = "[]" ] &&
		grep -Eq "masquerade address ${1//./\\.} -> $2" "$WORK/daemon.log" &&
		pass "$3, and the daemon says so" ||
		{ fail "$3, and the daemon says so"; detail "$WORK/daemon.log"; }
}

# The WAN address changes (a new DHCP lease) under the daemon: within a
# second or two the flows of the old address are gone and the same inside
# endpoint reaches the server from the new address, without a reload.
t_wan_address() {
	local out
	[ -n "$DAEMON_PID" ] || start_daemon || return
	peer_7100
	out=$(udp_seen "$H1" 20011 203.0.113.1 7100)
	ip -n "$RTR" addr del 203.0.113.2/24 dev wan0
	ip -n "$RTR" addr add 203.0.113.3/24 dev wan0
	ip -n "$RTR" route replace default via 203.0.113.1
	if wait_for 3000 eval "udp_seen \"\$H1\" 20011 203.0.113.1 7100 | grep -qx 203.0.113.3:20011"; then
		pass "the WAN address changes: the same endpoint comes from the new one within seconds, no reload (before: $out)"
	else
		fail "the WAN address changes: the same endpoint comes from the new one within seconds, no reload (before: $out, after: $(udp_seen "$H1" 20011 203.0.113.1 7100))"
		detail "$WORK/daemon.log"
	fi
	# (a slow daemon may see the moment with no address between the
	# two: it removes the old flows then)
	old_flows_gone 203.0.113.2 "(203.0.113.3|none)" "the old address's flows and mappings are removed"
}

# The WAN interface goes and another of the same name comes with another
# address, as ppp0 does when pppd dials again: the flows translated to the
# old one's address are removed, the same endpoint comes from the new one.
t_wan_replaced() {
	local out
	# (the daemon of the test before: a program load takes minutes in
	# the guests)
	[ -n "$DAEMON_PID" ] || start_daemon || return
	peer_7100
	out=$(udp_seen "$H1" 20012 203.0.113.1 7100)
	ip -n "$RTR" link del wan0
	ip -n "$RTR" link add wan0 type veth peer name eth0 netns "$INET"
	ip -n "$RTR" link set wan0 up
	[ -z "${SLUICE_TEST_PORT_MODE:-}" ] || ip netns exec "$RTR" ethtool -K wan0 gro on >/dev/null
	ip -n "$RTR" addr add 203.0.113.4/24 dev wan0
	ip -n "$RTR" route replace default via 203.0.113.1
	ip -n "$INET" link set eth0 up
	topo_wire "$INET" wan0
	ip -n "$INET" addr add 203.0.113.1/24 dev eth0
	peer_7100
	if wait_for 10000 eval "udp_seen \"\$H1\" 20012 203.0.113.1 7100 | grep -qx 203.0.113.4:20012"; then
		pass "a new WAN interface with another address (ppp0 after a re-dial): the same endpoint comes from it (before: $out)"
	else
		fail "a new WAN interface with another address (ppp0 after a re-dial): the same endpoint comes from it (before: $out, after: $(udp_seen "$H1" 20012 203.0.113.1 7100))"
		detail "$WORK/daemon.log"
	fi
	old_flows_gone 203.0.113.3 none "the old interface's flows and mappings are removed with it"
	stop_daemon
}

for t in t_up t_masquerade t_same_port t_eim t_filtering t_tcp_icmp t_counters t_port_forward t_mss t_fragments t_gre \
	 t_icmp_errors t_pmtu_download t_natdiscovery t_exhaustion t_frag_order t_wan_address t_wan_replaced; do
	start=$SECONDS
	$t
	echo "# $t: $((SECONDS - start)) s"
done
rsluice down >/dev/null 2>&1
