#!/bin/bash
# Firewall rules on the reference topology with NAT: rules on
# live traffic, reject's answers, the log, per-rule counters, `rule add|del`
# cutting an open connection, a set fed with plain bpftool, `set add|del`,
# reloads under a counted packet stream, `reload --confirm` rolling back,
# and an nmap scan from the internet finding exactly what rules and port
# forwards open.
SUITE=rules
. "$(dirname "$0")/lib.sh"
require_root

TOPO_ROUTE_BACK=0 topo_suite
ip -n "$INET" addr add 198.51.100.1/32 dev lo	# a second server address
# IPv6 is routed, not translated: the internet knows the way back.
ip -n "$INET" -6 route add fd00:10::/64 via 2001:db8:113::2

CFG=$WORK/rules.conf
cat > "$CFG" <<EOF
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
port-forward wan tcp 8080 -> 192.168.10.13:80
set blocked { 192.0.2.99 }
rule lan -> wan src 192.168.10.15 drop comment "h5 is grounded"
rule wan -> router tcp dport 2222 accept
rule lan -> wan udp dport 5300 reject
rule lan -> wan tcp dport 5301 reject
rule any -> any dst @blocked drop
rule lan -> wan tcp dport 9000 accept log
rule lan -> wan dst 2001:db8:113::1 tcp dport 7300 drop
EOF
topo_modes "$CFG"
if ! rsluice up -c "$CFG" >"$WORK/up.log" 2>&1; then
	fail "sluice up with rules"; detail "$WORK/up.log"; exit 1
fi
pass "sluice up with 7 rules and a set"

# udp_answer NS DST PORT: "refused" when an ICMP port unreachable comes
# back within 2 s, "timeout" when nothing does, "answer" for a reply.
udp_answer() {
	in_ns "$1" /usr/bin/python3 - "$2" "$3" <<'PYEOF'
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(2)
s.connect((sys.argv[1], int(sys.argv[2])))
try:
    s.send(b"x")
    s.recv(100)
    print("answer")
except ConnectionRefusedError:
    print("refused")
except socket.timeout:
    print("timeout")
PYEOF
}

# tcp_listen NS ADDR PORT: accept and close connections for the whole
# suite (tcp_peer gives up after 60 s without a client; a slow guest's
# suite has such pauses).
tcp_listen() {
	in_ns "$1" /usr/bin/python3 - "$2" "$3" "$((900 * SLOW))" >/dev/null 2>&1 <<'PYEOF2' &
import socket, sys, time
s = socket.socket(socket.AF_INET6 if ":" in sys.argv[1] else socket.AF_INET)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], int(sys.argv[2])))
s.listen(16)
end = time.time() + int(sys.argv[3])
s.settimeout(5)
while time.time() < end:
    try:
        s.accept()[0].close()
    except socket.timeout:
        pass
PYEOF2
}

# Servers the tests connect to, on the internet's both addresses.
tcp_echo_server "$INET" 0.0.0.0 7000; PIDS+=($!)
tcp_peer "$INET" 0.0.0.0 9000; PIDS+=($!)
tcp_listen "$INET" 0.0.0.0 7100; PIDS+=($!)
udp_echo "$INET" 203.0.113.1 5302; PIDS+=($!)
in_ns "$INET" /usr/bin/python3 - >/dev/null 2>&1 <<'PYEOF' &
import socket
ss = []
for port in (7300, 7301):
    s = socket.socket(socket.AF_INET6)
    s.bind(("2001:db8:113::1", port))
    s.listen(8)
    ss.append(s)
import time
time.sleep(120)
PYEOF
PIDS+=($!)
wait_for 3000 listening "$INET" 7100 t || fail "servers start"

# ---- rules on live traffic ------------------------------------------------------------
t_live() {
	expect "h1 reaches the internet (no rule stops it)" \
		test "$(tcp_result "$H1" 203.0.113.1 7100)" = open
	expect "h5 does not: rule 1 drops its new connections" \
		test "$(tcp_result "$H5" 203.0.113.1 7100)" = timeout
	expect "reject answers UDP with a port unreachable" \
		test "$(udp_answer "$H1" 203.0.113.1 5300)" = refused
	expect "... and TCP with a RST" test "$(tcp_result "$H1" 203.0.113.1 5301)" = refused
	expect "a port next to the rejected one still answers" \
		test "$(udp_answer "$H1" 203.0.113.1 5302)" = answer
	expect "an IPv6 rule drops its port" \
		test "$(tcp_result "$H1" 2001:db8:113::1 7300)" = timeout
	expect "... and leaves the next one open" \
		test "$(tcp_result "$H1" 2001:db8:113::1 7301)" = open
}

# ---- counters, log -------------------------------------------------------------------
# list_get EXPR: EXPR over `rule list --json` as j (through a file: a large
# ruleset's list is longer than a command-line argument may be)
list_get() {
	rsluice rule list --json >"$WORK/list.json" 2>/dev/null
	/usr/bin/python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' \
		"$WORK/list.json" "$1"
}
rule_packets() { list_get "[r['packets'] for r in j['rules'] if r['rule'] == $1][0]"; }

t_counters_log() {
	local n
	n=$(rule_packets 1)
	expect "rule list counts the packets rule 1 dropped ($n)" test "${n:-0}" -ge 1
	expect "rule list shows each rule's config line" \
		grep -q 'dport 5300 reject' <<<"$(rsluice rule list)"
	rsluice log -n 1 >"$WORK/log.out" 2>&1 &
	local lp=$!
	sleep 0.3
	tcp_result "$H2" 203.0.113.1 9000 >/dev/null
	wait_for 3000 grep -q 'rule 6' "$WORK/log.out"
	kill "$lp" 2>/dev/null; wait "$lp" 2>/dev/null
	if grep -q 'rule 6 (line [0-9]*) accept tcp 192.168.10.12:[0-9]* -> 203.0.113.1:9000' "$WORK/log.out"; then
		pass "sluice log prints the logged connection (rule, line, verdict, tuple)"
	else
		fail "sluice log prints the logged connection (rule, line, verdict, tuple)"
		detail "$WORK/log.out"
	fi
	local rej
	rej=$(json_get "$(rsluice stats --json -i 0)" "j['rules']['rejected']")
	expect "stats count reject's answers ($rej)" test "${rej:-0}" -ge 2
}

# ---- an open connection cut by a new rule ------------------------------------------
# A client sends "a" and reads the echo, waits for $WORK/go, sends "b":
# prints "alive" when "b" comes back within 2 s, "cut" when it does not.
held_client() {
	in_ns "$H1" /usr/bin/python3 - "$WORK/go" <<'PYEOF'
import os, socket, sys, time
s = socket.create_connection(("203.0.113.1", 7000), timeout=3)
s.sendall(b"a")
assert s.recv(10) == b"a"
print("open", flush=True)
for _ in range(200):
    if os.path.exists(sys.argv[1]):
        break
    time.sleep(0.05)
s.settimeout(2)
try:
    s.sendall(b"b")
    print("alive" if s.recv(10) == b"b" else "cut")
except OSError:
    print("cut")
PYEOF
}

t_cut() {
	rm -f "$WORK/go"
	held_client >"$WORK/held.out" 2>&1 &
	local cp=$!
	wait_for 3000 grep -q open "$WORK/held.out" || { fail "a held TCP connection opens"; detail "$WORK/held.out"; }
	if rsluice rule add lan -\> wan tcp dport 7000 drop >"$WORK/add.log" 2>&1; then
		pass "rule add appends a rule and applies it ($(tail -n 1 "$WORK/add.log"))"
	else
		fail "rule add appends a rule and applies it"; detail "$WORK/add.log"
	fi
	touch "$WORK/go"
	wait "$cp"
	expect "a new drop rule cuts an established TCP connection" grep -q '^cut' "$WORK/held.out"
	expect "rule add wrote the rule into the config file" grep -q '^rule lan -> wan tcp dport 7000 drop$' "$CFG"
	local n
	n=$(list_get "len(j['rules'])")
	if rsluice rule del "$n" >"$WORK/del.log" 2>&1 &&
		! grep -q 'dport 7000 drop' "$CFG" && [ "$(tcp_result "$H1" 203.0.113.1 7000)" = open ]; then
		pass "rule del $n takes it out of the file and the datapath"
	else
		fail "rule del $n takes it out of the file and the datapath"; detail "$WORK/del.log"
	fi
	if ! rsluice rule add lan -\> wan tcp dport 70000 drop >"$WORK/bad.log" 2>&1 &&
		grep -q "rules.conf:$(($(wc -l <"$CFG") + 1)):" "$WORK/bad.log" && ! grep -q 70000 "$CFG"; then
		pass "a bad rule add is refused with FILE:LINE:COL and changes nothing ($(head -n 1 "$WORK/bad.log"))"
	else
		fail "a bad rule add is refused with FILE:LINE:COL and changes nothing"; detail "$WORK/bad.log"
	fi
}

# ---- sets: bpftool and the CLI -------------------------------------------------------------
t_sets() {
	expect "198.51.100.1 is reachable before it is in the set" \
		test "$(tcp_result "$H1" 198.51.100.1 7100)" = open
	# key: prefixlen (u32, host order) then the address; value: any byte but 1
	if bpftool map update pinned "$PIN/sluice_set4_blocked" key hex 20 00 00 00 c6 33 64 01 \
		value hex 02 >"$WORK/bpftool.log" 2>&1; then
		pass "bpftool map update adds 198.51.100.1/32 to the pinned set"
	else
		fail "bpftool map update adds 198.51.100.1/32 to the pinned set"; detail "$WORK/bpftool.log"
	fi
	expect "a new connection to an address added with bpftool is dropped at once" \
		test "$(tcp_result "$H1" 198.51.100.1 7100)" = timeout
	expect "set list shows it as a runtime entry" \
		grep -q '198.51.100.1/32  (runtime)' <<<"$(rsluice set list blocked)"
	expect "set del removes it" rsluice set del blocked 198.51.100.1/32
	expect "... and connections pass again" test "$(tcp_result "$H1" 198.51.100.1 7100)" = open
	rsluice reload >"$WORK/reload.log" 2>&1
	expect "set add blocks it again" rsluice set add blocked 198.51.100.1
	rsluice reload >>"$WORK/reload.log" 2>&1
	expect "... and a runtime entry survives a reload" \
		grep -q '198.51.100.1/32  (runtime)' <<<"$(rsluice set list blocked)"
	expect "... still blocking" test "$(tcp_result "$H1" 198.51.100.1 7100)" = timeout
	rsluice set del blocked 198.51.100.1/32 >/dev/null 2>&1
	expect "set add of a bad entry is refused" not rsluice set add blocked 300.1.1.1
}

# ---- reloads under a counted stream -----------------------------------------------------
RELOADS=${SLUICE_RULE_RELOADS:-$([ "$SLOW" -gt 1 ] && echo 20 || echo 100)}

t_reloads() {
	local i ok=1 why="" n first gaps
	ip netns exec "$H2" ping -i 0.005 -W 1 -w $((300 * SLOW)) 203.0.113.1 >"$WORK/ping.log" 2>&1 &
	local pp=$!
	wait_for 3000 grep -q 'icmp_seq=10 ' "$WORK/ping.log" || { ok=0; why="$why flood-never-answered"; }
	cp "$CFG" "$WORK/alt.conf"
	echo "rule lan -> wan udp dport 4444 drop" >>"$WORK/alt.conf"
	local start=$SECONDS
	for i in $(seq "$RELOADS"); do
		if ! rsluice reload -c "$([ $((i % 2)) = 1 ] && echo "$WORK/alt.conf" || echo "$CFG")" \
			>>"$WORK/reloads.log" 2>&1; then
			ok=0; why="$why reload-$i-failed"; break
		fi
	done
	local took=$((SECONDS - start))
	n=$(grep -c 'icmp_seq=' "$WORK/ping.log")
	wait_for 3000 bash -c "[ \$(grep -c icmp_seq= '$WORK/ping.log') -ge $((n + 50)) ]" || { ok=0; why="$why stalled"; }
	kill -INT "$pp" 2>/dev/null; wait "$pp" 2>/dev/null
	read -r n first gaps <<<"$(awk '/icmp_seq=/ { match($0, /icmp_seq=[0-9]+/); q = substr($0, RSTART + 9, RLENGTH - 9) + 0;
		if (!c++ || q < lo) lo = q; if (q > hi) hi = q; seen[q] = 1 }
		END { u = 0; for (k in seen) u++; print u, lo, hi - lo + 1 - u }' "$WORK/ping.log")"
	[ "$first" = 1 ] && [ "$gaps" = 0 ] || { ok=0; why="$why lost:first=$first,missing=$gaps"; }
	if [ $ok = 1 ]; then
		pass "$RELOADS rule reloads in ${took} s under a 200/s ping stream through NAT: $n replies, none lost"
	else
		fail "$RELOADS rule reloads under a ping stream lose nothing:$why"; detail "$WORK/reloads.log"
	fi
}

# ---- reload --confirm --------------------------------------------------------------------
not() { ! "$@"; }
opens_within() {	# SECONDS NS DST PORT: the port opens within SECONDS (times SLOW)
	local deadline=$((SECONDS + $1 * SLOW))
	while [ $SECONDS -lt $deadline ]; do
		[ "$(tcp_result "$2" "$3" "$4")" = open ] && return 0
		sleep 0.25
	done
	return 1
}

t_confirm() {
	cp "$CFG" "$WORK/good"
	rsluice reload >/dev/null 2>&1	# (records what is applied)
	echo "rule lan -> wan tcp dport 7100 drop" >>"$CFG"
	# (the window scales with the machine: in an emulated guest under
	# load, 2 s could pass before the 2-s connection attempt was over)
	if rsluice reload --confirm $((2 * SLOW)) >"$WORK/confirm.log" 2>&1 &&
		[ "$(tcp_result "$H1" 203.0.113.1 7100)" = timeout ]; then
		pass "reload --confirm applies the new rules at once"
	else
		fail "reload --confirm applies the new rules at once"; detail "$WORK/confirm.log"
	fi
	local why=""
	opens_within 10 "$H1" 203.0.113.1 7100 || why="$why port-still-closed"
	cmp -s "$CFG" "$WORK/good" || why="$why file-differs"
	grep -q 'dport 7100 drop' "$CFG.rejected" 2>/dev/null || why="$why no-rejected-copy"
	if [ -z "$why" ]; then
		pass "without confirm, the previous config comes back (file and datapath; the new one kept as .rejected)"
	else
		fail "without confirm, the previous config comes back:$why"; detail "$WORK/confirm.log"
		diff "$WORK/good" "$CFG" | head -5 | sed 's/^/    /'
		rsluice rule list 2>&1 | tail -4 | sed 's/^/    /'
	fi
	echo "rule lan -> wan tcp dport 7100 drop" >>"$CFG"
	rsluice reload --confirm 3 >/dev/null 2>&1
	expect "sluice confirm keeps it" rsluice confirm
	sleep 3.5
	expect "... past the deadline" test "$(tcp_result "$H1" 203.0.113.1 7100)" = timeout
	cp "$WORK/good" "$CFG"
	rsluice reload >/dev/null 2>&1
	expect "sluice confirm with nothing pending says so" not rsluice confirm
}

# ---- a ruleset of any size: no program load, the running rules carry over ----------------
prog_xdp_id() {
	local j
	j=$(bpftool -j prog show pinned "$PIN/prog_xdp" 2>/dev/null) && json_get "$j" "j['id']"
}

t_grow() {
	local before after again prog n
	before=$(rule_packets 1)
	prog=$(prog_xdp_id)
	cp "$CFG" "$WORK/big.conf"
	/usr/bin/python3 -c '
for i in range(5000):
    print("rule lan -> wan src 10.%d.%d.0/24 udp dport %d drop" % (i // 256, i % 256, 1000 + i))' >>"$WORK/big.conf"
	if ! rsluice reload -c "$WORK/big.conf" >"$WORK/big.log" 2>&1; then
		fail "a reload to 5007 rules"; detail "$WORK/big.log"
		return
	fi
	after=$(rule_packets 1)
	n=$(list_get "len(j['rules'])")
	if [ "$n" = 5007 ] && [ "${after:-0}" -ge "${before:-1}" ] &&
		[ "$(tcp_result "$H5" 203.0.113.1 7100)" = timeout ] &&
		[ "$(tcp_result "$H1" 203.0.113.1 7100)" = open ]; then
		pass "a reload to 5007 rules: rule 1 keeps its counters ($before -> $after) and its verdict"
	else
		fail "a reload to 5007 rules: $n rules, rule 1 counted $before -> $after"
		detail "$WORK/big.log"
	fi
	again=$(rule_packets 1)
	expect "... and counts what it decides after ($after -> $again)" \
		test "${again:-0}" -gt "${after:-0}"
	expect "... with the programs that ran before (no load: program $prog)" \
		test -n "$prog" -a "$(prog_xdp_id)" = "$prog"
	rsluice reload -c "$CFG" >>"$WORK/big.log" 2>&1
	expect "back to 7 rules: rule 1 still counted ($again -> $(rule_packets 1)), same programs" \
		test "$(rule_packets 1)" -ge "${again:-1}" -a "$(prog_xdp_id)" = "$prog"
}

# ---- what a scan from the internet finds ------------------------------------------------------
t_scan() {
	if ! command -v nmap >/dev/null; then
		skip "nmap scan: nmap is not installed (tools/deps.sh installs it)"
		return
	fi
	in_ns "$RTR" /usr/bin/python3 -c '
import socket, time
s = socket.socket(); s.bind(("0.0.0.0", 2222)); s.listen(4)
t = socket.socket(); t.bind(("0.0.0.0", 2223)); t.listen(4)
time.sleep(120)' >/dev/null 2>&1 &
	PIDS+=($!)
	tcp_peer "$H3" 192.168.10.13 80; PIDS+=($!)
	wait_for 3000 listening "$RTR" 2223 t
	in_ns "$INET" timeout $((120 * SLOW)) nmap -n -Pn -sS -T5 --max-retries 1 -p 1-3000,8080 \
		203.0.113.2 -oG "$WORK/nmap.txt" >"$WORK/nmap.log" 2>&1
	local open
	open=$(grep -o '[0-9]*/open' "$WORK/nmap.txt" | cut -d/ -f1 | sort -n | tr '\n' ' ')
	if [ "$open" = "2222 8080 " ]; then
		pass "nmap from the internet finds exactly 2222 (a rule) and 8080 (a port forward) open; 2223 listens but stays closed to it"
	else
		fail "nmap from the internet finds exactly 2222 and 8080 open (found: ${open:-none})"
		detail "$WORK/nmap.log"
	fi
}

t_live
t_counters_log
t_cut
t_sets
t_reloads
t_confirm
t_grow
t_scan
exit 0
