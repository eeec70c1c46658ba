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
. "$(dirname "$0")/../lib.sh"
. "$TOP/selftests/netns/topology.sh"
. "$TOP/selftests/netns/traffic.sh"
require_root
topo_suite

CRAFT="/usr/bin/python3 $TOP/selftests/netns/craft.py"
H1_4=192.168.10.11 H1_6=fd00:10::11 INET_4=203.0.113.1 INET_6=2001:db8:113::1
RTR_4=203.0.113.2 RTR_6=2001:db8:113::2
mac_of() { ip -n "$1" link show "$2" | awk '/link\/ether/ {print $2}'; }
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
	local label=$1 controls=$2 k m n=0 got
	in_ns "$H1" $CRAFT sniff eth0 $((4 * SLOW)) "$WORK/h1.seen" &
	local s1=$!
	in_ns "$INET" $CRAFT sniff eth0 $((4 * SLOW)) "$WORK/inet.seen" &
	local s2=$!
	sleep 0.5
	# controls: the policy lets these through
	in_ns "$INET" /usr/bin/python3 -c "
import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.sendto(b'SLXctl4', ('$RTR_4', 7000))
s=socket.socket(socket.AF_INET6, socket.SOCK_DGRAM); s.sendto(b'SLXctl6', ('$H1_6', 7000))"
	# ... bridged LAN traffic, which the policy does not judge, and the
	# router's own, which nothing filters
	in_ns "$H2" /usr/bin/python3 -c "
import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.sendto(b'SLXctlbr', ('$H1_4', 7000))"
	in_ns "$RTR" /usr/bin/python3 -c "
import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.sendto(b'SLXctlrtr', ('$H1_4', 7000))"
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
	wait "$s1" "$s2"
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

for mode in xdp tc; do
	if [ "$mode" = tc ]; then SLUICE_TEST_PORT_MODE=tc; else SLUICE_TEST_PORT_MODE=; fi
	write_cfg
	[ "$mode" = tc ] && rsluice down >/dev/null 2>&1
	if ! rsluice up -c "$WORK/ev.conf" >"$WORK/up.log" 2>&1; then
		fail "$mode: sluice up"; detail "$WORK/up.log"; continue
	fi
	round "$mode" "SLXctl4 SLXctl6 SLXctlbr SLXctlrtr"
done

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
