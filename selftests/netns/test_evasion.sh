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
WAN_MAC=$(mac_of "$RTR" wan0) BR_MAC=$(mac_of "$RTR" br-lan) H1_MAC=$(mac_of "$H1" eth0)

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

# A container on the box ($GST, 10.98.0.2 behind the router's gst0, in a
# zone of its own that reaches the router only) whose root runs its own
# XDP program: the forger of forged_meta.
GST=$TAG-gst
ip netns add "$GST"
ip -n "$GST" link set lo up
ip -n "$RTR" link add gst0 type veth peer name eth0 netns "$GST"
ip -n "$RTR" addr add 10.98.0.1/24 dev gst0
ip -n "$RTR" link set gst0 up
ip -n "$GST" link set eth0 up
ip -n "$GST" addr add 10.98.0.2/24 dev eth0
ip -n "$GST" route add default via 10.98.0.1
ip -n "$GST" link add fa type veth peer name fb
ip -n "$GST" link set fa up
ip -n "$GST" link set fb up

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
rule lan -> router udp dport 7126 drop
rule wan -> router tcp dport 2223 accept
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

# A rule towards the router binds the datagram whatever frame carries it:
# UDP from H2 to the router's port 7126, which a rule drops, in a unicast
# frame, an Ethernet broadcast frame and (IPv6) a multicast frame reaches
# no socket; the same frames to the open port 7127 do (the controls).
in_ns "$RTR" /usr/bin/python3 -c "
import select, socket, sys
ss = []
for fam, a in ((socket.AF_INET, '0.0.0.0'), (socket.AF_INET6, '::')):
    for port in (7126, 7127):
        s = socket.socket(fam, socket.SOCK_DGRAM)
        if fam == socket.AF_INET6: s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        s.bind((a, port)); ss.append(s)
while True:
    for s in select.select(ss, [], [], 600)[0] or exit():
        d = s.recv(100).split()[0].decode()
        with open('$WORK/rtr.udp', 'a') as f: f.write(d + '\\n')" &
PIDS+=($!)
frame_word() { case ${1:5} in uc) echo unicast ;; bc) echo broadcast ;; mc) echo multicast ;; esac; }
lan_frames() {
	local label=$1 k m got H2_MAC=$(mac_of "$H2" eth0) BR=$(mac_of "$RTR" br-lan)
	rm -f "$WORK/rtr.udp"
	for k in "$BR:uc" "ff:ff:ff:ff:ff:ff:bc"; do
		m=${k##*:}
		in_ns "$H2" $CRAFT send eth0 "${k%:*}" u4 192.168.10.12 192.168.10.1 7126 "SLXr4$m"
		in_ns "$H2" $CRAFT send eth0 "${k%:*}" u4 192.168.10.12 192.168.10.1 7127 "SLXo4$m"
	done
	for k in "$BR:uc" "33:33:00:00:00:01:mc"; do
		m=${k##*:}
		in_ns "$H2" $CRAFT send eth0 "${k%:*}" u6 fd00:10::12 fd00:10::1 7126 "SLXr6$m"
		in_ns "$H2" $CRAFT send eth0 "${k%:*}" u6 fd00:10::12 fd00:10::1 7127 "SLXo6$m"
	done
	wait_for $((5000 * SLOW)) test "$(sort -u "$WORK/rtr.udp" 2>/dev/null | grep -c '^SLXo')" -ge 4
	sleep 1	# (the refused ones were sent first; a moment for any straggler)
	got=$(sort -u "$WORK/rtr.udp" 2>/dev/null | tr '\n' ' ')
	for m in SLXo4uc SLXo4bc SLXo6uc SLXo6mc; do
		grep -qx "$m" "$WORK/rtr.udp" 2>/dev/null &&
			pass "$label: UDP to the router's open port in a $(frame_word "$m") frame (IPv${m:4:1}) reaches its socket" ||
			{ fail "$label: UDP to the router's open port in a $(frame_word "$m") frame (IPv${m:4:1}) reaches its socket"; echo "    the router got: $got"; }
	done
	for m in SLXr4uc SLXr4bc SLXr6uc SLXr6mc; do
		grep -qx "$m" "$WORK/rtr.udp" 2>/dev/null &&
			{ fail "$label: UDP to the port a rule towards the router drops, in a $(frame_word "$m") frame (IPv${m:4:1}), reaches no socket"; echo "    the router got: $got"; } ||
			pass "$label: UDP to the port a rule towards the router drops, in a $(frame_word "$m") frame (IPv${m:4:1}), reaches no socket"
	done
}

# A LAN host's address from the WAN, to the router's own service: H1 talks
# with the router's UDP service (port 7128, its LAN addresses), then the
# internet sends datagrams as H1, from H1's address and port, to the same
# service and address (conntrack pairs them with H1's conversation,
# whatever the interface). Only H1's own reach the socket.
in_ns "$RTR" /usr/bin/python3 -c "
import select, socket
ss = []
for fam, a in ((socket.AF_INET, '0.0.0.0'), (socket.AF_INET6, '::')):
    s = socket.socket(fam, socket.SOCK_DGRAM)
    if fam == socket.AF_INET6: s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
    s.bind((a, 7128)); ss.append(s)
while True:
    for s in select.select(ss, [], [], 600)[0] or exit():
        d, p = s.recvfrom(100)
        with open('$WORK/rtr.conv', 'a') as f: f.write(d.split()[0].decode() + '\\n')
        s.sendto(b'echo', p)" &
PIDS+=($!)
spoofed_lan_src() {
	local label=$1 r m got
	rm -f "$WORK/rtr.conv"
	r=$(in_ns "$H1" /usr/bin/python3 - "$SLOW" <<'EOF2'
import socket, sys
out = []
for fam, a, m in ((socket.AF_INET, '192.168.10.1', b'SLXconvfour'), (socket.AF_INET6, 'fd00:10::1', b'SLXconvsix')):
    s = socket.socket(fam, socket.SOCK_DGRAM)
    s.bind(('', 41128)); s.settimeout(2 * int(sys.argv[1]))
    s.sendto(m, (a, 7128))
    try: out.append(s.recv(100).decode())
    except OSError: out.append('none')
print(' '.join(out))
EOF2
)
	[ "$r" = "echo echo" ] && pass "$label: H1 talks with the router's UDP service (IPv4, IPv6)" ||
		fail "$label: H1 talks with the router's UDP service (IPv4, IPv6) ($r)"
	for i in 1 2 3; do
		in_ns "$INET" $CRAFT send eth0 "$WAN_MAC" u4 "$H1_4" 192.168.10.1 7128 SLXsp4 41128
		in_ns "$INET" $CRAFT send eth0 "$WAN_MAC" u6 "$H1_6" fd00:10::1 7128 SLXsp6 41128
	done
	in_ns "$H1" /usr/bin/python3 -c "
import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(('', 41128))
s.sendto(b'SLXlast', ('192.168.10.1', 7128))"
	wait_for $((5000 * SLOW)) grep -qx SLXlast "$WORK/rtr.conv"
	got=$(sort -u "$WORK/rtr.conv" 2>/dev/null | tr '\n' ' ')
	for m in 4 6; do
		grep -qx "SLXsp$m" "$WORK/rtr.conv" &&
			{ fail "$label: datagrams from the internet with H1's address and port (IPv$m) do not reach the router's service H1 talks with"; echo "    the service got: $got"; } ||
			pass "$label: datagrams from the internet with H1's address and port (IPv$m) do not reach the router's service H1 talks with"
	done
}

# What was let in for the router is never forwarded: with IPv4 source
# routing and SRv6 enabled on the WAN, a SYN to a router port the WAN may
# open (2223), whose loose source route or segment routing header names H1
# as the next hop, does not reach H1 (the kernel would forward it there).
rerouted() {
	local label=$1 got k
	in_ns "$RTR" sysctl -qw net.ipv4.conf.all.accept_source_route=1 net.ipv4.conf.wan0.accept_source_route=1
	in_ns "$RTR" sysctl -qw net.ipv6.conf.all.seg6_enabled=1 net.ipv6.conf.wan0.seg6_enabled=1 2>/dev/null
	rm -f "$WORK"/rr.seen*
	in_ns "$H1" $CRAFT sniff eth0 $((10 * SLOW)) "$WORK/rr.seen" 2 SLXctlrr &
	local s1=$!
	wait_for 5000 test -e "$WORK/rr.seen.ready"
	in_ns "$INET" $CRAFT send eth0 "$WAN_MAC" v4-lsrr "$INET_4" "$RTR_4,$H1_4" 2223 SLXlsrr
	in_ns "$INET" $CRAFT send eth0 "$WAN_MAC" v6-srh "$INET_6" "$RTR_6,$H1_6" 2223 SLXsrh
	in_ns "$INET" /usr/bin/python3 -c "
import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.sendto(b'SLXctlrr', ('$RTR_4', 7000))"
	wait "$s1"
	in_ns "$RTR" sysctl -qw net.ipv4.conf.all.accept_source_route=0 net.ipv4.conf.wan0.accept_source_route=0
	in_ns "$RTR" sysctl -qw net.ipv6.conf.all.seg6_enabled=0 net.ipv6.conf.wan0.seg6_enabled=0 2>/dev/null
	got=$(tr '\n' ' ' < "$WORK/rr.seen")
	grep -qx SLXctlrr "$WORK/rr.seen" && pass "$label: source routes: the control reaches H1" ||
		{ fail "$label: source routes: the control reaches H1"; echo "    H1 got: $got"; }
	for k in lsrr:"a loose source route (IPv4)" srh:"a segment routing header (IPv6)"; do
		grep -qx "SLX${k%%:*}" "$WORK/rr.seen" &&
			{ fail "$label: a SYN let in for the router with ${k#*:} naming H1 is not forwarded to H1"; echo "    H1 got: $got"; } ||
			pass "$label: a SYN let in for the router with ${k#*:} naming H1 is not forwarded to H1"
	done
}

# dhcp_lease NS DEV NAME CLIENT...: whether a DHCP client in NS gets a
# lease on DEV: dhclient (which reads from a packet socket of every
# protocol, before tc), or busybox's udhcpc (one of IPv4 only, as
# systemd-networkd's, after tc); udhcpc -B asks for broadcast answers. Its
# own lease and pid files and a script that only notes the address, so the
# machine's files and NS's addresses stay as they are. The address, or
# "none".
dhcp_lease() {
	local ns=$1 dev=$2 name=$3
	shift 3
	rm -f "$WORK/$name.bound" "$WORK/$name.lease" "$WORK/$name.pid"
	case $1 in
	dhclient)
		printf '#!/bin/sh\n[ "$reason" = BOUND ] && echo "$new_ip_address" >> %s\nexit 0\n' \
			"$WORK/$name.bound" > "$WORK/$name.sh"
		printf 'timeout %d;\nretry 1;\n' $((20 * SLOW)) > "$WORK/$name.conf"
		chmod +x "$WORK/$name.sh"
		in_ns "$ns" timeout $((40 * SLOW)) dhclient -4 -1 -cf "$WORK/$name.conf" \
			-sf "$WORK/$name.sh" -lf "$WORK/$name.lease" -pf "$WORK/$name.pid" "$dev" \
			>"$WORK/$name.log" 2>&1
		[ -s "$WORK/$name.pid" ] && kill "$(cat "$WORK/$name.pid")" 2>/dev/null ;;
	udhcpc)
		printf '#!/bin/sh\n[ "$1" = bound ] && echo "$ip" >> %s\nexit 0\n' \
			"$WORK/$name.bound" > "$WORK/$name.sh"
		chmod +x "$WORK/$name.sh"
		shift
		in_ns "$ns" timeout $((40 * SLOW)) busybox udhcpc -f -q -n -t 6 -T $((2 * SLOW)) "$@" \
			-i "$dev" -s "$WORK/$name.sh" >"$WORK/$name.log" 2>&1 ;;
	esac
	head -n 1 "$WORK/$name.bound" 2>/dev/null || echo none
}

# DHCP at both ends, with real clients (dhclient reads from a packet socket,
# after XDP and tc): the router's WAN with no address and so no route yet
# (a box before its first lease) takes its ISP's offer, whose source no
# route reaches; a LAN host's broadcast discovery reaches the router's DHCP
# server (dnsmasq), its copy judged by the LAN's input policy.
dhcp_both_ends() {
	local label=$1 got dflt c
	in_ns "$INET" dnsmasq --conf-file=/dev/null --interface=eth0 --bind-interfaces --port=0 \
		--dhcp-range=203.0.113.2,203.0.113.2,255.255.255.0,2m --dhcp-authoritative \
		--dhcp-leasefile="$WORK/isp.leases" --pid-file="$WORK/isp-dnsmasq.pid"
	dflt=$(ip -n "$RTR" -4 route show default)
	for c in "udhcpc:udhcpc" "udhcpc -B:udhcpc, broadcast answers" "dhclient:dhclient"; do
		ip -n "$RTR" addr del 203.0.113.2/24 dev wan0
		got=$(dhcp_lease "$RTR" wan0 wan-dhcp ${c%%:*})
		ip -n "$RTR" addr replace 203.0.113.2/24 dev wan0
		ip -n "$RTR" route replace $dflt
		[ "$got" = 203.0.113.2 ] &&
			pass "$label: the router's WAN, no address nor route yet, takes its ISP's DHCP lease (${c#*:}: $got)" ||
			{ fail "$label: the router's WAN, no address nor route yet, takes its ISP's DHCP lease (${c#*:}: $got)"
			  detail "$WORK/wan-dhcp.log"; }
	done
	kill "$(cat "$WORK/isp-dnsmasq.pid")" 2>/dev/null
	in_ns "$RTR" dnsmasq --conf-file=/dev/null --interface=br-lan --bind-interfaces --port=0 \
		--dhcp-range=192.168.10.200,192.168.10.200,255.255.255.0,2m --dhcp-authoritative \
		--dhcp-leasefile="$WORK/lan.leases" --pid-file="$WORK/lan-dnsmasq.pid"
	got=$(dhcp_lease "$H1" eth0 lan-dhcp dhclient)
	kill "$(cat "$WORK/lan-dnsmasq.pid")" 2>/dev/null
	[ "$got" = 192.168.10.200 ] &&
		pass "$label: a LAN host's DHCP discovery reaches the router's DHCP server, and its lease the host ($got)" ||
		{ fail "$label: a LAN host's DHCP discovery reaches the router's DHCP server, and its lease the host ($got)"
		  detail "$WORK/lan-dhcp.log"; }
}

# A container forging sluice's XDP -> tc handoff: its XDP program
# (build/xdp_forge.bpf.o, on a veth pair of its own, fa and fb) puts "XDP
# judged: accept" in front of a SYN from the container to H1, and a whole
# XDP decision "out of lan1 to H1's MAC" in front of another and of a
# frame XDP passes to the kernel (of no IP type), and redirects them into
# its veth towards the router (an XDP frame lands in the router's end
# while that end runs XDP, or GRO: at tc, gro on, a setting a user may
# make). The guest zone may not reach the
# LAN: none reaches H1, while the container's datagram to the router does,
# and a datagram from the router to H1 marks the end.
forged_meta() {
	local label=$1 lan1 h1mac brmac before after got
	printf 'zone guest {\n\tinterfaces gst0\n\tinput accept\n}\n' >>"$WORK/ev.conf"
	[ "$label" = xdp ] && echo "port gst0 mode xdp" >>"$WORK/ev.conf"
	if ! rsluice reload -c "$WORK/ev.conf" >"$WORK/reload.log" 2>&1; then
		fail "$label: forged handoff: reload with the guest zone"; detail "$WORK/reload.log"; return
	fi
	# (a kernel that refuses bpf_xdp_adjust_meta() to every XDP program,
	# as this machine's may, lets no container put metadata in front)
	if ! ip -n "$GST" link set fb xdpdrv obj "$TOP/build/xdp_forge.bpf.o" sec xdp >"$WORK/forge.log" 2>&1; then
		if grep -q "cannot use helper bpf_xdp_adjust_meta" "$WORK/forge.log"; then
			skip "$label: forged handoff: this kernel refuses XDP metadata to every program: no container can forge it (the Debian guests run it)"
		else
			fail "$label: forged handoff: the forger's XDP program on fb"; detail "$WORK/forge.log"
		fi
		write_cfg
		rsluice reload -c "$WORK/ev.conf" >"$WORK/reload.log" 2>&1 || detail "$WORK/reload.log"
		return
	fi
	[ "$label" = tc ] && in_ns "$RTR" ethtool -K gst0 gro on >/dev/null 2>&1
	ip -n "$GST" link set eth0 xdpdrv obj "$TOP/build/xdp_pass.bpf.o" sec xdp
	lan1=$(in_ns "$RTR" cat /sys/class/net/lan1/ifindex)
	h1mac=$(mac_of "$H1" eth0) brmac=$(mac_of "$RTR" br-lan)
	before=$(in_ns "$GST" ethtool -S fb | awk '/xdp_redirect:/ {n += $2} END {print n + 0}')
	rm -f "$WORK"/fg.seen* "$WORK/fg.rtr"
	in_ns "$H1" $CRAFT sniff eth0 $((10 * SLOW)) "$WORK/fg.seen" 2 SLXfgend &
	local s1=$!
	in_ns "$RTR" /usr/bin/python3 -c "
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(('10.98.0.1', 7132)); s.settimeout(10 * $SLOW)
try: open('$WORK/fg.rtr', 'w').write(s.recv(100).decode())
except OSError: pass" &
	local s2=$!
	wait_for 5000 test -e "$WORK/fg.seen.ready"
	wait_for 5000 listening "$RTR" 7132 u
	in_ns "$GST" /usr/bin/python3 - "$(mac_of "$GST" eth0)" "$(mac_of "$RTR" gst0)" "$H1_4" \
		"$h1mac" "$brmac" "$lan1" "$TOP/selftests/netns" "$(in_ns "$GST" cat /sys/class/net/eth0/ifindex)" <<'EOF2'
import socket, struct, sys, time
sys.path.insert(0, sys.argv[7])
import craft
cmac, gmac, h1, h1mac, brmac, lan1 = craft.mac(sys.argv[1]), craft.mac(sys.argv[2]), sys.argv[3], \
    craft.mac(sys.argv[4]), craft.mac(sys.argv[5]), int(sys.argv[6])
to = int(sys.argv[8])
src = "10.98.0.2"
sa, da = socket.inet_aton(src), socket.inet_aton(h1)
ph = lambda n, p: sa + da + struct.pack("!BBH", 0, p, n)
def syn(marker, dmac):
    return craft.frame(dmac, cmac, 0x0800, craft.ipv4(src, h1, 6, craft.tcp_syn(41132, 7777, marker, ph)))
def wrap(meta, inner):	# (xdp_forge.bpf.c's wrapper: into eth0, ifindex to)
    return craft.frame(b"\x02" * 6, b"\x02" * 6, 0x88b5,
                       bytes([len(meta), 0]) + struct.pack("<H", to) + meta.ljust(32, b"\0") + inner)
judged = struct.pack("<HBB", 0x51c8, 1, 0)			# sluice_pass_meta: accept
hop = struct.pack("<I6s6sHBB", lan1, h1mac, brmac, 0, 0, 0)	# out of lan1, bridged as it is
handoff = struct.pack("<HHI", 0x51ca, 0, 0) + hop + struct.pack("<BBH", 0, 0, 0)
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW); s.bind(("fa", 0))
for i in range(20):
    s.send(wrap(judged, syn(b"SLXfgjudged", gmac)))
    s.send(wrap(handoff, syn(b"SLXfghandoff", h1mac)))
    # (a frame XDP passes to the kernel: sluice's own word no longer fits)
    s.send(wrap(handoff, craft.frame(h1mac, cmac, 0x88b6, b"SLXfgother".ljust(46, b"\0"))))
    time.sleep(0.01)
EOF2
	# (the container's own datagram, sent by its stack: a veth end
	# without XDP takes the XDP frames in its ring at its next skb)
	in_ns "$GST" /usr/bin/python3 -c "
import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.sendto(b'SLXfgrtr', ('10.98.0.1', 7132))"
	wait "$s2"
	in_ns "$RTR" /usr/bin/python3 -c "
import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.sendto(b'SLXfgend', ('$H1_4', 7133))"
	wait "$s1"
	after=$(in_ns "$GST" ethtool -S fb | awk '/xdp_redirect:/ {n += $2} END {print n + 0}')
	got=$(tr '\n' ' ' < "$WORK/fg.seen")
	ip -n "$GST" link set fb xdpdrv off
	ip -n "$GST" link set eth0 xdpdrv off
	in_ns "$RTR" ethtool -K gst0 gro off >/dev/null 2>&1
	if [ $((after - before)) -ge 60 ] && [ "$(cat "$WORK/fg.rtr" 2>/dev/null)" = SLXfgrtr ] &&
	   [[ " $got " == *" SLXfgend "* ]] && [[ " $got " != *SLXfg[jho]* ]]; then
		pass "$label: a container's XDP program forging 'XDP judged: accept' and a whole handoff in front of its frames to H1: judged as without (none of $((after - before)) reach H1; the router gets its datagram)"
	else
		fail "$label: a container's XDP program forging the handoff: H1 got: $got; the forger sent $((after - before)) frames (want 60); the router got: $(cat "$WORK/fg.rtr" 2>/dev/null)"
	fi
	write_cfg
	rsluice reload -c "$WORK/ev.conf" >"$WORK/reload.log" 2>&1 || detail "$WORK/reload.log"
}

# A flood of source MACs from one LAN port: 9000 frames from H1, each from
# a MAC of its own. lan1 learns its share of the bridge table (a quarter)
# and no more; a device never seen before behind another port (H3 with a
# new MAC) is learned and reaches the router and the internet, and so does
# one behind the flooding port itself, unlearned.
mac_flood() {
	local label=$1 fdb n1 size new3 new1 ok3 ok1 old3 old1
	in_ns "$H1" /usr/bin/python3 - "$(mac_of "$RTR" br-lan)" <<'EOF2'
import os, socket, sys
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW); s.bind(("eth0", 0))
dst = bytes.fromhex(sys.argv[1].replace(":", ""))
for i in range(9000):
    s.send(dst + b"\x02" + os.urandom(5) + b"\x88\xb5" + b"SLXmacflood".ljust(46, b"\0"))
EOF2
	old3=$(mac_of "$H3" eth0) old1=$(mac_of "$H1" eth0)
	new3=02:5e:00:00:03:01 new1=02:5e:00:00:01:01
	ip -n "$H3" link set eth0 address "$new3"
	ip -n "$H1" link set eth0 address "$new1"
	in_ns "$H3" ping -c1 -W$((2 * SLOW)) 192.168.10.1 >/dev/null 2>&1
	in_ns "$H3" ping -c2 -W$((2 * SLOW)) 192.168.10.1 >/dev/null 2>&1 &&
		in_ns "$H3" ping -c2 -W$((2 * SLOW)) "$INET_4" >/dev/null 2>&1 && ok3=yes || ok3=no
	in_ns "$H1" ping -c1 -W$((2 * SLOW)) 192.168.10.1 >/dev/null 2>&1
	in_ns "$H1" ping -c2 -W$((2 * SLOW)) 192.168.10.1 >/dev/null 2>&1 && ok1=yes || ok1=no
	# (the table is too large for one argument: json_get is not for it)
	# (and the guests have no /dev/fd for a process substitution)
	rsluice fdb --json | /usr/bin/python3 -c "
import json, sys
j = json.load(sys.stdin)
print(len([e for e in j['entries'] if e['port'] == 'lan1' and e['type'] == 'learned']), j['size'],
      ','.join(e['port'] for e in j['entries'] if e['mac'] == '$new3') or '-')" >"$WORK/fdb.n"
	read -r n1 size fdb <"$WORK/fdb.n"
	if [ "$ok3" = yes ] && [ "$ok1" = yes ] && [ "${n1:-0}" -le $((size / 4)) ] &&
	   [ "${n1:-0}" -ge $((size / 8)) ] && [ "$fdb" = lan3 ]; then
		pass "$label: 9000 source MACs from lan1: it learns $n1 of $size entries (a quarter at most); a new device behind lan3 is learned and reaches the router and the internet, one behind lan1 the router"
	else
		fail "$label: 9000 source MACs from lan1: it learns $n1 of $size entries (want a quarter at most); a new device behind lan3 reaches the router and the internet: $ok3, learned on: $fdb; behind lan1 the router: $ok1"
	fi
	ip -n "$H3" link set eth0 address "$old3"
	ip -n "$H1" link set eth0 address "$old1"
	in_ns "$H3" ping -c1 -W$((2 * SLOW)) 192.168.10.1 >/dev/null 2>&1
	in_ns "$H1" ping -c1 -W$((2 * SLOW)) 192.168.10.1 >/dev/null 2>&1
}

for mode in xdp tc; do
	if [ "$mode" = tc ]; then SLUICE_TEST_PORT_MODE=tc; else SLUICE_TEST_PORT_MODE=; fi
	write_cfg
	[ "$mode" = tc ] && rsluice down >/dev/null 2>&1
	if ! rsluice up -c "$WORK/ev.conf" >"$WORK/up.log" 2>&1; then
		fail "$mode: sluice up"; detail "$WORK/up.log"; continue
	fi
	round "$mode" "SLXctl4 SLXctl6 SLXctlbr SLXctlrtr"
	lan_frames "$mode"
	spoofed_lan_src "$mode"
	rerouted "$mode"
	dhcp_both_ends "$mode"
	forged_meta "$mode"
	[ "$KERNEL" = host ] && mac_flood "$mode"	# (the bridge stage's code is the same on every kernel)
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

# udp_exchanges NS ADDR PORT N: how many of N UDP exchanges with the echo
# at ADDR:PORT are answered (each from a socket, so a port, of its own)
udp_exchanges() {
	in_ns "$1" /usr/bin/python3 - "$2" "$3" "$4" "$SLOW" <<'EOF2'
import socket, sys
n = 0
for i in range(int(sys.argv[3])):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(2 * int(sys.argv[4]))
    s.sendto(b"x", (sys.argv[1], int(sys.argv[2])))
    try:
        s.recvfrom(100)
        n += 1
    except OSError:
        pass
print(n)
EOF2
}

# One LAN host cannot take NAT away from the others: H1 sends UDP and bare
# TCP ACKs from tens of thousands of ports to an address that never
# answers; H2 still opens TCP connections and UDP exchanges through NAT.
t_exhaust() {
	local n=50000 r ok=0 i
	in_ns "$H1" $CRAFT flood eth0 "$(mac_of "$RTR" br-lan)" "$H1_4" 198.51.100.1 $n
	for i in 1 2 3 4 5; do
		[ "$(tcp_result "$H2" "$INET_4" 7130)" = open ] && ok=$((ok + 1))
	done
	r=$(udp_exchanges "$H2" "$INET_4" 7123 3)
	[ "$ok" = 5 ] && [ "$r" = 3 ] &&
		pass "after $n UDP datagrams and $n bare ACKs from H1's own ports to a silent address, H2 opens 5 of 5 TCP connections and 3 of 3 UDP exchanges through NAT" ||
		fail "after $n UDP datagrams and $n bare ACKs from H1, H2 opens TCP $ok of 5, UDP $r of 3"
	r=$(rsluice stats --json -i 0)
	json_get "$r" "[h for h in j['nat']['hosts_limited'] if h['mac'] == '$H1_MAC' and h['addr'] == '$H1_4' and h['addrs'] == 1 and h['refused'] > 0 and h['ports'] <= j['nat']['host_ports']] != []" | grep -qx True &&
		pass "... H1 was held to its nat-host-ports, and sluice stats names it (its MAC, its address)" ||
		fail "... H1 was held to its nat-host-ports, and sluice stats names it ($(json_get "$r" "j['nat']['hosts_limited']"))"
	rsluice stats --prometheus -i 0 | grep -q "^sluice_nat_host_refused_total{host=\"$H1_MAC\",zone=\"lan\"} [1-9]" &&
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

# restart [LINES]: sluice down, then up with the suite's config and LINES
# after it; 1 when up fails (said)
restart() {
	write_cfg
	[ -z "${1:-}" ] || printf '%s\n' "$1" >> "$WORK/ev.conf"
	rsluice down >/dev/null 2>&1
	rsluice up -c "$WORK/ev.conf" >"$WORK/up.log" 2>&1 && return 0
	fail "sluice up${1:+ (${1//$'\n'/; })}"
	detail "$WORK/up.log"
	return 1
}

# One host cannot take the connection table from the others, whatever it
# opens (here untranslated IPv6 flows, which need no NAT port): in a table
# of 4096 connections (a host-flows of 256), H1 sends UDP from 5000 ports;
# it keeps 256 of them, and H2 still opens connections.
t_host_flows() {
	local r ok=0 i
	restart "conntrack { size 4096 }" || return
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
	rsluice stats --prometheus -i 0 | grep -q "^sluice_host_flows_refused_total{host=\"$H1_6\",kind=\"host\",zone=\"lan\"} [1-9]" &&
		pass "... and so does its Prometheus series" ||
		fail "... and so does its Prometheus series ($(rsluice stats --prometheus -i 0 | grep host_flows))"
	restart
}
t_host_flows

# One device cannot take NAT with many addresses of its subnet: in a range
# of 4096 ports (its reserve: 23584-24095) with nat-host-ports 1024, H1
# sends UDP from 1024 ports of each of 12 addresses to a silent address;
# it holds 1024 ports, and H2 still gets its UDP exchanges through. Then
# five more devices (MACs of their own, from H4's port) take 1024 each,
# more than the rest of the range holds: H2 and H3 still get theirs, from
# the reserve, which no big device took much of.
t_nat_hosts() {
	local r i res
	restart "nat-ports 20000-24095
nat-host-ports 1024" || return
	in_ns "$H1" $CRAFT hosts eth0 "$BR_MAC" own 192.168.10.100 12 198.51.100.1 1024
	r=$(udp_exchanges "$H2" "$INET_4" 7123 3)
	[ "$r" = 3 ] && pass "after UDP from 1024 ports of each of 12 of H1's addresses, H2 gets 3 of 3 UDP exchanges through NAT" ||
		fail "after UDP from 1024 ports of each of 12 of H1's addresses, H2 gets 3 of 3 UDP exchanges through NAT ($r)"
	r=$(rsluice stats --json -i 0)
	json_get "$r" "[h for h in j['nat']['hosts_limited'] if h['host'] == '$H1_MAC' and h['ports'] <= 1024 and h['refused'] >= 10000 and h['addrs'] >= 1 and h['addr'] == '192.168.10.100'] != []" | grep -qx True &&
		pass "... H1's device holds at most 1024 ports over all its addresses (the rest of its 12288 refused), and sluice stats names its MAC" ||
		fail "... H1's device holds at most 1024 ports over all its addresses ($(json_get "$r" "j['nat']"))"
	for i in 1 2 3 4 5; do
		in_ns "$H4" $CRAFT hosts eth0 "$BR_MAC" "02:5e:00:00:00:0$i" "192.168.10.$((120 + 4 * i))" 4 198.51.100.1 512
	done
	r="$(udp_exchanges "$H2" "$INET_4" 7123 3) $(udp_exchanges "$H3" "$INET_4" 7123 3)"
	[ "$r" = "3 3" ] && pass "... after five more devices took 1024 ports each, H2 and H3 get 3 of 3 UDP exchanges each" ||
		fail "... after five more devices took 1024 ports each, H2 and H3 get 3 of 3 UDP exchanges each ($r)"
	res=$(bpftool -j map dump pinned "$PIN/sluice_nat4_ext" | python3 -c '
import json, socket, sys, collections
m = json.load(sys.stdin)
held = collections.Counter()
rest = res = 0
for e in m:
    k, v = e.get("formatted", e)["key"], e.get("formatted", e)["value"]
    p = socket.ntohs(k["port"])
    if 20000 <= p < 23584:
        rest += 1
    elif 23584 <= p <= 24095:
        res += 1
        held[":".join("%02x" % b for b in v["host"]["id"])] += 1
print(rest, res, max(held.values() or [0]))')
	r=($res)
	# (a device is small until it holds 64: it may take that much there)
	[ "${r[0]:-0}" -ge 3500 ] && [ "${r[1]:-512}" -lt 512 ] && [ "${r[2]:-99}" -le 65 ] &&
		pass "... the range outside its reserve taken (${r[0]} of 3584), the reserve used by ${r[1]} of 512, at most ${r[2]} by one device" ||
		fail "... the range outside its reserve taken, the reserve not full, at most 65 of it by one device (rest, reserve, most by one: $res)"
	restart
}
t_nat_hosts

# Spoofed UDP from the internet to a forwarded service that answers (each
# datagram from a new source, so each answered: a flow with a reply)
# cannot take the connection tables from the LAN. In a table of 4096
# connections, over a path with 300 ms of delay, for 15 s as fast as
# python sends: H2's idle connections from before carry on, the TCP
# connections and UDP exchanges it opens meanwhile work, the forward is
# held to its host-flows, and the confirmed table keeps room.
t_inbound_flood() {
	local r d=$WORK/inflood cp fp
	rm -rf "$d"; mkdir -p "$d"
	restart "port-forward wan udp 7002 -> $H1_4:7002
conntrack { size 4096 }" || return
	in_ns "$H1" /usr/bin/python3 -c "
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(('0.0.0.0', 7002)); s.settimeout(120)
while True:
    d, a = s.recvfrom(100); s.sendto(b'answer', a)" &
	PIDS+=($!)
	tcp_echo_server "$INET" "$INET_4" 7150
	PIDS+=($!)
	wait_for 5000 listening "$INET" 7150 t
	wait_for 5000 listening "$H1" 7002 u
	in_ns "$INET" tc qdisc add dev eth0 root netem delay 300ms limit 200000
	in_ns "$H2" /usr/bin/python3 - "$INET_4" "$d" "$SLOW" >"$d/client.log" 2>&1 <<'EOF2' &
import os, socket, sys, time
dst, d, slow = sys.argv[1], sys.argv[2], int(sys.argv[3])
def conn():
    c = socket.create_connection((dst, 7150), timeout=5 * slow)
    c.settimeout(5 * slow)
    return c
def echo(c, m):
    try:
        c.sendall(m)
        return c.recv(100) == m
    except OSError:
        return False
idle = [conn() for i in range(3)]
ok = sum(echo(c, b"before") for c in idle)
open(d + "/ready", "w").close()
for i in range(200):
    if os.path.exists(d + "/flooding"):
        break
    time.sleep(0.1)
time.sleep(1)
new = 0
for i in range(5):
    try:
        c = conn()
    except OSError:
        continue
    n = 0
    for k in range(3):
        n += echo(c, b"new%d" % k)
        time.sleep(0.3)
    new += n == 3
udp = 0
for i in range(3):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(5 * slow)
    s.sendto(b"x", (dst, 7123))
    try:
        s.recvfrom(100)
        udp += 1
    except OSError:
        pass
print("before", ok, "idle", sum(echo(c, b"after") for c in idle), "new", new, "udp", udp)
EOF2
	cp=$!
	wait_for $((20000 * SLOW)) test -e "$d/ready"
	in_ns "$INET" $CRAFT spoof eth0 "$WAN_MAC" "$RTR_4" 7002 $((15 * SLOW)) >"$d/sent" 2>&1 &
	fp=$!
	touch "$d/flooding"
	wait "$cp"
	r=$(rsluice stats --json -i 0)
	wait "$fp"
	in_ns "$INET" tc qdisc del dev eth0 root
	case "$(cat "$d/client.log")" in
	"before 3 idle 3 new 5 udp 3")
		pass "$(cat "$d/sent") spoofed datagrams in 15 s to a forwarded UDP service that answers: H2's 3 idle connections carry on, 5 of 5 new TCP connections and 3 of 3 UDP exchanges work (300 ms RTT)" ;;
	*)	fail "spoofed datagrams to a forwarded UDP service that answers: H2's idle connections carry on, its new TCP connections and UDP exchanges work ($(cat "$d/client.log"); $(cat "$d/sent") sent)" ;;
	esac
	json_get "$r" "[h for h in j['conntrack']['hosts_limited'] if h['kind'] == 'target' and h['addr'] == '$RTR_4:7002/udp' and h['refused'] > 0 and h['flows'] <= j['conntrack']['host_flows']] != [] and j['conntrack']['flows'] < j['conntrack']['size']" | grep -qx True &&
		pass "... the forward was held to host-flows ($(json_get "$r" "[h['refused'] for h in j['conntrack']['hosts_limited'] if h['kind'] == 'target'][0]") refused), the confirmed table kept room ($(json_get "$r" "j['conntrack']['flows']") of $(json_get "$r" "j['conntrack']['size']"))" ||
		fail "... the forward was held to host-flows, the confirmed table kept room ($(json_get "$r" "j['conntrack']"))"
	restart
}
t_inbound_flood

# The daemon's events do not wait behind its sweep of a flooded table
# (host only: the loader's loop is the same on every kernel, and a guest's
# flood would take minutes). 200,000 SYNs from spoofed sources at a
# forwarded port fill the unconfirmed table; then an address comes and
# goes on wan0 every 150 ms (a secondary one: the masquerade address, and
# the flood's flows, stay). The daemon's log, stamped as it is written,
# gives each sweep's end and length, the applies it made room for, and
# each apply's time: applies are made during sweeps, and a change that
# came while a sweep ran, half a second or more before its end (the
# debounce and the apply's own time), is applied before that end.
t_sweep_events() {
	local ts=$WORK/ts.py i
	rm -f "$WORK/sweep.changes"
	cat >"$ts" <<'EOF2'
import sys, time
for line in sys.stdin:
    sys.stdout.write("%.3f %s" % (time.time(), line)); sys.stdout.flush()
EOF2
	write_cfg
	echo "port-forward wan tcp 7001 -> $H1_4:7001" >>"$WORK/ev.conf"
	rsluice reload -c "$WORK/ev.conf" >"$WORK/reload.log" 2>&1 || { fail "sweep events: reload"; detail "$WORK/reload.log"; return; }
	nsenter --net="/run/netns/$RTR" "$SLUICE" -p "$PIN" run -v -c "$WORK/ev.conf" \
		> >(/usr/bin/python3 "$ts" >"$WORK/sweep.log") 2>&1 &
	local dpid=$!
	wait_for 15000 grep -q "following interface changes" "$WORK/sweep.log"
	in_ns "$INET" /usr/bin/python3 - "$WAN_MAC" "$RTR_4" "$TOP/selftests/netns" <<'EOF2'
import random, socket, struct, sys
sys.path.insert(0, sys.argv[3])
import craft
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW); s.bind(("eth0", 0))
wan, own, da = craft.mac(sys.argv[1]), craft.own_mac("eth0"), socket.inet_aton(sys.argv[2])
for i in range(200000):
    src = "45.%d.%d.%d" % ((i >> 16) & 255, (i >> 8) & 255, 1 + (i & 127))
    sa = socket.inet_aton(src)
    seg = craft.tcp_syn(1024 + i % 60000, 7001, b"", lambda n, p: sa + da + struct.pack("!BBH", 0, p, n))
    s.send(craft.frame(wan, own, 0x0800, craft.ipv4(src, sys.argv[2], 6, seg)))
EOF2
	echo "$(date +%s.%N) flood sent" >>"$WORK/sweep.changes"
	for i in $(seq 1 200); do
		if [ $((i % 2)) = 1 ]; then ip -n "$RTR" addr add 198.51.100.77/32 dev wan0
		else ip -n "$RTR" addr del 198.51.100.77/32 dev wan0; fi
		echo "$(date +%s.%N) change" >>"$WORK/sweep.changes"
		sleep 0.15
		# (enough once three changes fell inside sweeps)
		[ $((i % 20)) = 0 ] && [ "$(sweep_overlaps | cut -d' ' -f1)" -ge 3 ] &&
			[ "$(sweep_overlaps | cut -d' ' -f7)" -ge 2 ] && break
	done
	sleep 2
	kill "$dpid"; wait "$dpid" 2>/dev/null
	ip -n "$RTR" addr del 198.51.100.77/32 dev wan0 2>/dev/null
	set -- $(sweep_overlaps)
	if [ "${1:-0}" -ge 1 ] && [ "${2:-1}" = 0 ] && [ "${7:-0}" -ge 1 ]; then
		pass "after 200000 spoofed SYNs at a forwarded port: sweeps (up to ${4} ms, ${5} flows) made room for $7 applies; of $1 address changes that came during one, none early enough waited for its end (the longest wait ${3} ms; $6 changes in all)"
	else
		fail "address changes during the daemon's sweeps of a flooded table: ${1:-0} came during a sweep, ${2:-?} waited for its end (the longest wait ${3:-?} ms; sweeps up to ${4:-?} ms, ${5:-?} flows; ${7:-0} applies made during sweeps)"
		detail "$WORK/sweep.log"
	fi
}
# sweep_overlaps: of the address changes that came while a sweep ran, how
# many, how many came half a second or more before its end and were
# applied only after it, the longest wait (ms); the longest sweep (ms),
# the most flows swept, all changes, the applies the sweeps made room for
sweep_overlaps() {
	/usr/bin/python3 - "$WORK/sweep.log" "$WORK/sweep.changes" <<'EOF2'
import re, sys
sweeps, applies, changes, meanwhile = [], [], [], 0
for line in open(sys.argv[1]):
    t, _, msg = line.partition(" ")
    m = re.search(r"(\d+) flows; swept in (\d+) ms, (\d+) interface changes", msg)
    if m:
        sweeps.append((float(t) - int(m.group(2)) / 1000, float(t), int(m.group(1))))
        meanwhile += int(m.group(3))
    elif "interface changes applied" in msg:
        applies.append(float(t))
for line in open(sys.argv[2]):
    t, what = line.split(" ", 1)
    if what.strip() == "change":
        changes.append(float(t))
inside = late = 0
wait = 0.0
for c in changes:
    for a, b, _ in sweeps:
        if a <= c < b:
            inside += 1
            done = [x for x in applies if x >= c]
            if (not done or done[0] > b) and c <= b - 0.5:
                late += 1
            if done:
                wait = max(wait, done[0] - c)
print(inside, late, int(wait * 1000), max([int((b - a) * 1000) for a, b, _ in sweeps] or [0]),
      max([n for _, _, n in sweeps] or [0]), len(changes), meanwhile)
EOF2
}
[ "$KERNEL" = host ] && t_sweep_events

# The backstop stays in place: `nft flush ruleset` (what a restart of
# nftables.service does) takes it away, and the daemon puts it back.
write_cfg
rsluice reload -c "$WORK/ev.conf" >/dev/null 2>&1
nsenter --net="/run/netns/$RTR" "$SLUICE" -p "$PIN" run -c "$WORK/ev.conf" >"$WORK/run.log" 2>&1 &
DAEMON_PID=$!
wait_for 15000 grep -q "following interface changes" "$WORK/run.log"	# (the first apply loads the programs)
in_ns "$RTR" nft add table inet admin
wait_for 5000 in_ns "$RTR" nft list table inet sluice_keep >/dev/null
in_ns "$RTR" nft flush ruleset
in_ns "$RTR" nft list table inet sluice_keep >/dev/null 2>&1 &&
	pass "the backstop's owned copy (inet sluice_keep) survives nft flush ruleset" ||
	fail "the backstop's owned copy (inet sluice_keep) survives nft flush ruleset"
in_ns "$RTR" nft delete table inet sluice_keep >/dev/null 2>&1 &&
	fail "... and no other process can delete it" || pass "... and no other process can delete it"
if wait_for 15000 in_ns "$RTR" nft list table inet sluice; then
	pass "the daemon puts the backstop back after nft flush ruleset ($WAITED_MS ms)"
else
	fail "the daemon puts the backstop back after nft flush ruleset"; detail "$WORK/run.log"
fi
rsluice status | grep -q "backstop  *nftables table inet sluice;" &&
	pass "sluice status shows the backstop" || fail "sluice status shows the backstop"
# While nftables is restarted again and again (what nftables.service does:
# a file that starts with flush ruleset), nothing the policy refuses gets
# in: SYNs to H1 behind three priority tags, and UDP from the internet to
# the router's UDP service (7125), which the WAN's input drops; each
# flushes the daemon's table, never its owned copy.
printf 'flush ruleset\ntable inet admin {\n\tchain input {\n\t\ttype filter hook input priority 0; policy accept;\n\t}\n}\n' >"$WORK/nftables.conf"
rm -f "$WORK"/fl.seen*
in_ns "$H1" $CRAFT sniff eth0 $((15 * SLOW)) "$WORK/fl.seen" 2 SLXctlfl &
FL_SNIFF=$!
wait_for 5000 test -e "$WORK/fl.seen.ready"
in_ns "$RTR" /usr/bin/python3 -c "
import socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(('0.0.0.0', 7129)); s.settimeout(1)
n, end = 0, time.time() + 8 * $SLOW
while time.time() < end:
    try: s.recv(100); n += 1
    except OSError: pass
open('$WORK/fl.udp', 'w').write(str(n))" &
FL_UDP=$!
in_ns "$INET" /usr/bin/python3 - "$WAN_MAC" "$INET_4" "$H1_4" "$RTR_4" "$TOP/selftests/netns" <<'EOF2' &
import socket, struct, sys, time
sys.path.insert(0, sys.argv[5])
import craft
wan, src, h1, rtr = sys.argv[1:5]
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW); s.bind(("eth0", 0))
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
own = craft.own_mac("eth0")
sa, da = socket.inet_aton(src), socket.inet_aton(h1)
seg = craft.tcp_syn(41999, 7777, b"SLXflvlan ", lambda n, p: sa + da + struct.pack("!BBH", 0, p, n))
f = craft.frame(craft.mac(wan), own, 0x0800, craft.ipv4(src, h1, 6, seg),
                ((0x8100, 0), (0x8100, 0), (0x8100, 0)))
end = time.time() + 6
while time.time() < end:
    s.send(f); u.sendto(b"SLXflu", (rtr, 7129)); time.sleep(0.002)
EOF2
FL_SEND=$!
for i in 1 2 3 4 5; do in_ns "$RTR" nft -f "$WORK/nftables.conf"; sleep 1; done
wait "$FL_SEND"
in_ns "$INET" /usr/bin/python3 -c "
import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.sendto(b'SLXctlfl', ('$RTR_4', 7000))"
wait "$FL_SNIFF" "$FL_UDP"
grep -q SLXflvlan "$WORK/fl.seen" &&
	fail "nft -f with flush ruleset five times under a stream: SYNs behind three priority tags reach H1" ||
	pass "nft -f with flush ruleset five times under a stream: no SYN behind three priority tags reaches H1"
grep -qx SLXctlfl "$WORK/fl.seen" && pass "... the control reaches H1" ||
	fail "... the control reaches H1 ($(tr '\n' ' ' < "$WORK/fl.seen"))"
[ "$(cat "$WORK/fl.udp" 2>/dev/null)" = 0 ] &&
	pass "... and no datagram from the internet reaches the router's UDP service (input drop)" ||
	fail "... and no datagram from the internet reaches the router's UDP service (input drop): $(cat "$WORK/fl.udp" 2>/dev/null)"
wait_for 15000 in_ns "$RTR" nft list table inet sluice >/dev/null &&
	pass "... the daemon's table is back after the restarts" ||
	fail "... the daemon's table is back after the restarts"
in_ns "$RTR" nft add table inet admin
kill "$DAEMON_PID"; wait "$DAEMON_PID" 2>/dev/null; DAEMON_PID=
! in_ns "$RTR" nft list table inet sluice_keep >/dev/null 2>&1 &&
	pass "the owned copy goes with the daemon" || fail "the owned copy goes with the daemon"
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
