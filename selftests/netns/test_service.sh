#!/bin/bash
# The daemon as systemd runs it (debian/sluice.service: Type=notify,
# ExecReload=kill -HUP, SIGTERM to stop): READY=1 once the config is
# applied; a reload under a 200 pps ping loses nothing; a stop with the
# default on-stop keep leaves the datapath forwarding and a restart (an
# upgrade's) loses nothing either; the next start finds the same counters
# and rules; on-stop down removes everything; a start on an empty bpffs
# (a reboot) brings the rules back; under the journal (JOURNAL_STREAM)
# messages carry syslog levels.
# Two hosts and a router, each in a namespace of its own.
SUITE=service
. "$(dirname "$0")/lib.sh"
require_root

TAG=$(unique_tag)
R=$TAG-r A=$TAG-a B=$TAG-b
RTR=$R	# the router, where rsluice (topology.sh) runs sluice
PIN=/sys/fs/bpf/sluice-$TAG
WORK=$(mktemp -d /tmp/sluice-svc.XXXXXX)
DPID= LPID=
cleanup() {
	[ -n "$DPID" ] && kill "$DPID" 2>/dev/null && wait "$DPID" 2>/dev/null
	[ -n "$LPID" ] && kill "$LPID" 2>/dev/null && wait "$LPID" 2>/dev/null
	[ -e "$PIN" ] && nsenter --net="/run/netns/$R" "$SLUICE" -p "$PIN" down >/dev/null 2>&1
	for n in $R $A $B; do ip netns del "$n" 2>/dev/null; done
	rm -rf "$PIN" "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

for n in $R $A $B; do ip netns add "$n"; ip -n "$n" link set lo up; done
ip -n "$R" link add lan0 type veth peer name eth0 netns "$A"
ip -n "$R" link add wan0 type veth peer name eth0 netns "$B"
ip -n "$R" addr add 192.168.50.1/24 dev lan0
ip -n "$R" addr add 203.0.113.1/24 dev wan0
ip -n "$A" addr add 192.168.50.2/24 dev eth0
ip -n "$B" addr add 203.0.113.2/24 dev eth0
for n in $R $A $B; do
	for d in $(ip -n "$n" -o link show | awk -F': ' '$2 != "lo" {sub(/@.*/, "", $2); print $2}'); do
		ip -n "$n" link set "$d" up
	done
done
# (veths with their defaults: without a mode in the config sluice runs tc
# on them, as on a container's)
ip -n "$A" route add default via 192.168.50.1
ip -n "$B" route add default via 203.0.113.1
in_ns "$R" sysctl -qw net.ipv4.ip_forward=1
CFG=$WORK/sluice.conf
cat > "$CFG" <<'CONF'
zone lan {
	interfaces lan0
	input accept
}
zone wan {
	interfaces wan0
	input drop
}
forward lan -> wan
rule lan -> wan udp dport 9 drop
CONF

# The service manager's side of sd_notify: every datagram, one per line.
NOTIFY=$WORK/notify.sock
/usr/bin/python3 - "$NOTIFY" "$WORK/notify.log" <<'PY' &
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
with open(sys.argv[2], "a", buffering=1) as log:
    while True:
        log.write(s.recv(4096).decode().replace("\n", " ") + "\n")
PY
LPID=$!
wait_for 5000 test -S "$NOTIFY"
notified() { [ "$(grep -c -- "$1" "$WORK/notify.log" 2>/dev/null)" -ge "$2" ]; }

# start [LOG]: `sluice run` as the unit does, stderr to LOG
start() {
	NOTIFY_SOCKET=$NOTIFY nsenter --net="/run/netns/$R" "$SLUICE" -p "$PIN" run -c "$CFG" \
		2>>"${1:-$WORK/daemon.log}" &
	DPID=$!
}
# stop: SIGTERM, then the daemon's exit status
stop() {
	kill -TERM "$DPID"
	wait "$DPID"
	local rc=$?
	DPID=
	return $rc
}
packets() {	# the lan port's packets, every verdict
	rsluice stats --json -i 0 | /usr/bin/python3 -c '
import json, sys
p = [p for p in json.load(sys.stdin)["ports"] if p["name"] == "lan0"][0]
print(sum(v["packets"] for v in p.values() if isinstance(v, dict) and "packets" in v and v is not p.get("fast_tx")))'
}

start
if wait_for 30000 notified READY=1 1; then
	pass "run tells the service manager READY=1 once the config is applied ($WAITED_MS ms)"
else
	fail "run tells the service manager READY=1 once the config is applied"
	detail "$WORK/daemon.log" "$WORK/notify.log"
	exit 1
fi
expect "ping through the router" in_ns "$A" ping -c 2 -W 2 203.0.113.2

# reload under traffic: 200 pps for the whole reload, not one lost
in_ns "$A" ping -q -i 0.005 -c 3000 -W 1 203.0.113.2 > "$WORK/ping.log" 2>&1 &
pp=$!
sleep 2
kill -HUP "$DPID"
wait_for 60000 notified READY=1 2
reloaded=$?
sleep 2
wait $pp
loss=$(sed -n 's/.* \([0-9.]*\)% packet loss.*/\1/p' "$WORK/ping.log")
[ $reloaded = 0 ] && grep -q RELOADING=1 "$WORK/notify.log" &&
	pass "SIGHUP: RELOADING=1, then READY=1 once the new programs run" ||
	{ fail "SIGHUP: RELOADING=1, then READY=1 once the new programs run"; detail "$WORK/notify.log" "$WORK/daemon.log"; }
[ "$loss" = 0 ] && pass "reload under a 200 pps ping: $(grep -o '[0-9]* received' "$WORK/ping.log"), none lost" ||
	{ fail "reload under a 200 pps ping: ${loss:-?}% lost"; detail "$WORK/ping.log"; }
grep -q "reloaded $CFG" "$WORK/daemon.log" &&
	pass "the daemon logs the reload" || { fail "the daemon logs the reload"; detail "$WORK/daemon.log"; }

# A restart (what an upgrade of the package does: stop, then the new
# binary's start) under a 200 pps ping: with on-stop keep (the default)
# the programs go on forwarding while no daemon runs, and the new one
# swaps its programs in atomically. ping is interrupted once the new
# daemon is ready: the one request in flight then may lack its reply.
rsluice rule list > "$WORK/rules.before" 2>&1
before=$(packets)
ip netns exec "$A" ping -q -i 0.005 -W 1 -w $((120 * SLOW)) 203.0.113.2 > "$WORK/ping2.log" 2>&1 &	# (no function: SIGINT must reach ping)
pp=$!
sleep 1
stop; rc=$?
[ $rc = 0 ] && grep -q STOPPING=1 "$WORK/notify.log" && grep -q "on-stop keep" "$WORK/daemon.log" &&
	pass "SIGTERM: exit 0, STOPPING=1, 'on-stop keep' logged" ||
	{ fail "SIGTERM: exit 0, STOPPING=1, 'on-stop keep' logged (exit $rc)"; detail "$WORK/daemon.log"; }
sleep 1
mid=$(packets)
/usr/bin/python3 -c "import sys; sys.exit(not ($mid > $before))" &&
	pass "stopped: sluice's programs still forward (lan0 packets $before -> $mid)" ||
	fail "stopped: sluice's programs still forward (lan0 packets $before -> $mid)"
start
wait_for 30000 notified READY=1 3
sleep 1
kill -INT $pp
wait $pp
sent=$(sed -n 's/^\([0-9]*\) packets transmitted.*/\1/p' "$WORK/ping2.log")
got=$(sed -n 's/.* \([0-9]*\) received.*/\1/p' "$WORK/ping2.log")
[ -n "$sent" ] && [ "${got:-0}" -gt 100 ] && [ $((sent - got)) -le 1 ] &&
	pass "restart under a 200 pps ping: $got of $sent answered (at most the last in flight lost)" ||
	{ fail "restart under a 200 pps ping: ${got:-?} of ${sent:-?} answered"; detail "$WORK/ping2.log"; }
after=$(packets)
rsluice rule list > "$WORK/rules.after" 2>&1
/usr/bin/python3 -c "import sys; sys.exit(not ($after >= $mid > 0))" &&
	pass "start again: counters kept ($mid -> $after)" ||
	fail "start again: counters kept ($mid -> $after)"
# (the counters' columns may move; files, not <(): a guest has no /dev/fd)
same_rules() {
	for f in before "$1"; do awk '{ $3 = $4 = $5 = ""; print }' "$WORK/rules.$f" > "$WORK/r.$f"; done
	cmp -s "$WORK/r.before" "$WORK/r.$1" && grep -q "udp dport 9" "$WORK/rules.$1"
}
same_rules after && pass "... and the same rules" ||
	{ fail "... and the same rules"; detail "$WORK/rules.before" "$WORK/rules.after"; }

# on-stop down, picked up by a reload: the stop removes everything
echo "on-stop down" >> "$CFG"
kill -HUP "$DPID"
wait_for 60000 notified READY=1 4
stop; rc=$?
rsluice status > "$WORK/status.log" 2>&1
src=$?
[ $rc = 0 ] && [ $src = 3 ] && [ ! -e "$PIN" ] &&
	pass "on-stop down: SIGTERM removes the datapath (status exit 3, no pins)" ||
	{ fail "on-stop down: SIGTERM removes the datapath (exit $rc, status $src)"; detail "$WORK/daemon.log" "$WORK/status.log"; }
rsluice down > "$WORK/down.log" 2>&1
[ $? = 1 ] && grep -q "not loaded" "$WORK/down.log" &&
	pass "... after which down says it is not loaded" || fail "... after which down says it is not loaded"

# A reboot finds bpffs empty, as on-stop down left it: the unit's start
# brings back the same zones and rules from the config, counters from
# zero. Under the journal: syslog levels instead of the "sluice: " prefix.
sed -i '/^on-stop/d' "$CFG"
: > "$WORK/journal.log"
JOURNAL_STREAM=$(stat -c '%d:%i' "$WORK/journal.log") start "$WORK/journal.log"
wait_for 30000 notified READY=1 5
rsluice rule list > "$WORK/rules.boot" 2>&1
boot=$(packets)
same_rules boot && [ "$boot" -lt "$mid" ] &&
	pass "after a 'reboot' (empty bpffs): the same rules from the config, counters from zero ($boot)" ||
	{ fail "after a 'reboot' (empty bpffs): the same rules, counters from zero ($boot)"; detail "$WORK/rules.boot"; }
stop
if grep -q '^<5>.*following interface changes' "$WORK/journal.log" &&
   ! grep -q '^sluice: ' "$WORK/journal.log"; then
	pass "under the journal, lines carry levels (<5> notice)"
else
	fail "under the journal, lines carry levels (<5> notice)"; detail "$WORK/journal.log"
fi
