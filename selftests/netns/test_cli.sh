#!/bin/bash
# CLI tests: every subcommand, its success output and every error path.
# Runs in one namespace of its own with a veth pair as the only ports.
SUITE=cli
. "$(dirname "$0")/lib.sh"
require_root

TAG=$(unique_tag)
NS=$TAG-cli
PIN=/sys/fs/bpf/sluice-$TAG
WORK=$(mktemp -d /tmp/sluice-cli.XXXXXX)
DAEMON_PID=
cleanup() {
	[ -n "$DAEMON_PID" ] && kill "$DAEMON_PID" 2>/dev/null && wait "$DAEMON_PID" 2>/dev/null
	ip netns del "$NS" 2>/dev/null
	rm -rf "$PIN" "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

ip netns add "$NS"
ip -n "$NS" link add p0 type veth peer name p1
ip -n "$NS" link set p0 up
ip -n "$NS" link set p1 up
nsluice() { nsenter --net="/run/netns/$NS" "$SLUICE" -p "$PIN" "$@"; }
printf 'zone lan {\n    interfaces p0\n}\n' >"$WORK/ok.conf"
printf '# one port\nzone lan {\n    interfaces nosuch0\n}\n' >"$WORK/missing.conf"
printf 'zone lan {\n    interfaces p0\n    input allow\n}\n' >"$WORK/bad.conf"
sed 's/\beth5\b/p1/g; s/\bbr-lan\b/p0/g' "$TOP/loader/sluice.conf.example" >"$WORK/example.conf"

# t DESC RC REGEX CMD...: CMD exits with RC and its stdout+stderr matches
# the extended REGEX (an empty REGEX demands empty output).
t() {
	local desc=$1 want_rc=$2 re=$3 out rc
	shift 3
	out=$("$@" 2>&1)
	rc=$?
	if [ "$rc" = "$want_rc" ] && { [ -z "$re" ] && [ -z "$out" ] || [ -n "$re" ] && grep -Eq -- "$re" <<<"$out"; }; then
		pass "$desc"
	else
		fail "$desc (exit $rc, expected $want_rc; expected output /$re/)"
		printf '%s\n' "$out" | head -n 15 | sed 's/^/    /'
	fi
}
generation() { nsluice status --json | json_get "$(cat)" "j['generation']"; }

# ---- usage and argument errors --------------------------------------------
t "no arguments prints usage, exit 2" 2 '^usage: sluice COMMAND' "$SLUICE"
out=$("$SLUICE" --help)
miss=""
for c in up run reload down status stats check; do grep -q "^  $c " <<<"$out" || miss="$miss $c"; done
[ -z "$miss" ] && pass "--help lists every command" || fail "--help lists every command (missing:$miss)"
t "up --help lists its options" 0 '-c, --config FILE' "$SLUICE" up --help
t "stats --help lists --watch" 0 '-w, --watch' "$SLUICE" stats --help
t "stats --help lists --prometheus" 0 '-m, --prometheus' "$SLUICE" stats --help
t "--prometheus with --json is a usage error" 2 'stats: --prometheus and --json exclude each other' \
	"$SLUICE" stats --prometheus --json
t "--prometheus with --watch is a usage error" 2 'stats: --prometheus and --watch exclude each other' \
	"$SLUICE" stats -w --prometheus
t "unknown command" 2 '^sluice: unknown command "frob"' "$SLUICE" frob
t "unknown option names it" 2 'stats: unknown option --bogus' "$SLUICE" stats --bogus
t "bad option value" 2 '--interval: invalid value "x"' "$SLUICE" stats -i x
t "missing option value" 2 'option -c needs a value' "$SLUICE" up -c
t "unexpected argument" 2 'unexpected argument "extra"' "$SLUICE" status extra

# ---- non-root -----------------------------------------------------------------
for c in up run reload down status stats; do
	out=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$SLUICE" $c 2>&1)
	rc=$?
	if [ $rc = 1 ] && [ "$(wc -l <<<"$out")" = 1 ] && grep -q "^sluice: $c needs root" <<<"$out"; then
		pass "$c as non-root: one line, exit 1"
	else
		fail "$c as non-root: one line, exit 1 (exit $rc)"; printf '%s\n' "$out" | sed 's/^/    /'
	fi
done
cp "$WORK/example.conf" /tmp/sluice-cli-$TAG.conf && chmod 644 /tmp/sluice-cli-$TAG.conf
t "check works as non-root" 0 'ok \(2 zones, 3 rules, 1 sets, 1 shaped zones; [0-9]+ classifier keys' \
	setpriv --reuid=65534 --regid=65534 --clear-groups "$SLUICE" check -c /tmp/sluice-cli-$TAG.conf
rm -f /tmp/sluice-cli-$TAG.conf

# ---- check ------------------------------------------------------------------------
t "check sums up the example" 0 'example.conf: ok \(2 zones, 3 rules, 1 sets, 1 shaped zones; ' \
	"$SLUICE" check -c "$WORK/example.conf"
t "check: syntax error as FILE:LINE:COL" 1 "^$WORK/bad.conf:3:11: " "$SLUICE" check -c "$WORK/bad.conf"
t "check: unreadable file" 1 "^$WORK/nofile.conf: No such file or directory" \
	"$SLUICE" check -c "$WORK/nofile.conf"
# (a reader that blocks on the FIFO or eats /dev/zero would hang or fill
# the memory: bounded in time and address space, it fails instead)
mkfifo "$WORK/fifo.conf"
t "check: /dev/zero is no config, refused at once" 1 "^/dev/zero: not a regular file$" \
	timeout 10 prlimit --as=$((1 << 30)) "$SLUICE" check -c /dev/zero
t "check: a FIFO is no config, refused at once" 1 "^$WORK/fifo.conf: not a regular file$" \
	timeout 10 prlimit --as=$((1 << 30)) "$SLUICE" check -c "$WORK/fifo.conf"
t "check notes a missing interface, still ok" 0 'missing.conf:3:16: interface nosuch0 does not exist here' \
	nsenter --net="/run/netns/$NS" "$SLUICE" check -c "$WORK/missing.conf"

# ---- nothing loaded yet ---------------------------------------------------------------
t "status when not loaded: exit 3" 3 'sluice is not loaded' nsluice status
t "stats when not loaded" 1 'sluice is not loaded' nsluice stats
t "stats --prometheus when not loaded" 1 'sluice is not loaded' nsluice stats --prometheus
t "reload when not loaded" 1 'no running instance to reload' nsluice reload
t "down when not loaded" 1 'sluice is not loaded' nsluice down
t "up with a missing interface names it with FILE:LINE:COL" 1 \
	"missing.conf:3:16: interface nosuch0 of zone lan does not exist" nsluice up -c "$WORK/missing.conf"
[ ! -e "$PIN" ] && pass "a failed first up leaves no pin folder" || fail "a failed first up leaves no pin folder"
t "up with a bad config changes nothing" 1 "bad.conf:3:11: " nsluice up -c "$WORK/bad.conf"
t "a pin folder outside bpffs is refused" 1 'not on a bpf filesystem' \
	nsenter --net="/run/netns/$NS" "$SLUICE" -p "$WORK/pins" up -c "$WORK/ok.conf"

# ---- loaded -----------------------------------------------------------------------------
t "up succeeds silently" 0 '' nsluice up -c "$WORK/ok.conf"
t "status shows the port" 0 '^p0 +[0-9]+ +lan +- +tc +up .*a veth or tap' nsluice status
t "status shows the config file" 0 "config +$WORK/ok.conf" nsluice status
t "status --json" 0 '"ports":\[\{"name":"p0"' nsluice status --json
t "stats shows totals" 0 '^p0 +lan +[0-9]+ +0 +0 +0$' nsluice stats -i 0
t "stats shows rates" 0 'RX RATE' nsluice stats -i 0.2
t "stats --json is JSON" 0 '' sh -c "nsenter --net=/run/netns/$NS $SLUICE -p $PIN stats --json -i 0.1 | /usr/bin/python3 -c 'import json,sys; j=json.load(sys.stdin); assert j[\"ports\"][0][\"name\"]==\"p0\" and \"rate\" in j[\"ports\"][0]'"
out=$(nsluice stats --watch -i 0.2 -n 3 2>&1)
[ "$(grep -c '^PORT' <<<"$out")" = 3 ] && pass "stats --watch refreshes (3 times with -n 3)" ||
	{ fail "stats --watch refreshes"; printf '%s\n' "$out" | sed 's/^/    /'; }

# ---- stats --prometheus ------------------------------------------------------------------
PROMCHECK=$TOP/selftests/netns/promcheck.py
# The checker first: what it must refuse, and a valid exposition with every
# escape that it must take.
H=$'# HELP a_total A.\n# TYPE a_total counter\n'
G=$'# HELP g G.\n# TYPE g gauge\n'
pc_bad=(
	"duplicate series|${H}a_total{l=\"x\"} 1"$'\n'"a_total{l=\"x\"} 2"$'\n'
	"an empty label value equal to its absence|${H}a_total{l=\"\"} 1"$'\n'"a_total 2"$'\n'
	"HELP twice|${H}# HELP a_total again"$'\n'"a_total 1"$'\n'
	"TYPE after a sample|# HELP a_total A."$'\n'"a_total 1"$'\n'"# TYPE a_total counter"$'\n'
	"samples not together|${H}a_total{l=\"x\"} 1"$'\n'"${G}g 1"$'\n'"a_total{l=\"y\"} 1"$'\n'
	"no HELP|# TYPE a_total counter"$'\n'"a_total 1"$'\n'
	"no TYPE|# HELP a_total A."$'\n'"a_total 1"$'\n'
	"a counter without _total|# HELP a A."$'\n'"# TYPE a counter"$'\n'"a 1"$'\n'
	"a gauge with _total|# HELP g_total G."$'\n'"# TYPE g_total gauge"$'\n'"g_total 1"$'\n'
	"a negative counter|${H}a_total -1"$'\n'
	"an invalid value|${H}a_total 1,5"$'\n'
	"an invalid escape|${H}a_total{l=\"a\\tb\"} 1"$'\n'
	"an unescaped quote|${H}a_total{l=\"a\"b\"} 1"$'\n'
	"an invalid metric name|# HELP 1a A."$'\n'"# TYPE 1a gauge"$'\n'"1a 1"$'\n'
	"an invalid label name|${H}a_total{1l=\"x\"} 1"$'\n'
	"a reserved label name|${H}a_total{__l=\"x\"} 1"$'\n'
	"a label twice|${H}a_total{l=\"x\",l=\"y\"} 1"$'\n'
	"label names differing in a family|${H}a_total{l=\"x\"} 1"$'\n'"a_total{m=\"x\"} 1"$'\n'
	"bits, not a base unit|# HELP r_bits_per_second R."$'\n'"# TYPE r_bits_per_second gauge"$'\n'"r_bits_per_second 1"$'\n'
	"no newline at the end|${H}a_total 1"
)
pc_good="${H}a_total{l=\"q\\\"b\\\\s\\nn\",m=\"\"} 1"$'\n'"a_total{l=\"x\",m=\"y\",} 2.5e3"$'\n'"${G}g -Inf"$'\n'"# a comment"$'\n'
miss=""
for c in "${pc_bad[@]}"; do
	printf '%s' "${c#*|}" | /usr/bin/python3 "$PROMCHECK" >/dev/null 2>&1 && miss="$miss; ${c%%|*}"
done
[ -z "$miss" ] && pass "promcheck refuses ${#pc_bad[@]} kinds of broken exposition" ||
	fail "promcheck refuses broken expositions (took:${miss#;})"
out=$(printf '%s' "$pc_good" | /usr/bin/python3 "$PROMCHECK" --json 2>&1)
[ "$(json_get "$out" "j['samples'][0][1]['l']")" = $'q"b\\s\nn' ] 2>/dev/null &&
	pass "promcheck takes a valid exposition and undoes its escapes" ||
	{ fail "promcheck takes a valid exposition and undoes its escapes"; printf '%s\n' "$out" | sed 's/^/    /'; }

# The reference box's config (loader/sluice.conf.example) on p0 and a
# bridge (lan) and p1 (wan), applied by a reload: the programs stay, no
# verifier run. The bridge's member has a quote and a backslash in its
# name, which label values must escape.
QP='q"\1'
ip -n "$NS" link add "$QP" type veth peer name q2
ip -n "$NS" link add brq type bridge
ip -n "$NS" link set "$QP" master brq
for d in "$QP" q2 brq; do ip -n "$NS" link set "$d" up; done
cat >"$WORK/prom.conf" <<'EOF'
zone lan {
    interfaces p0 brq
    input accept
}
zone wan {
    interfaces p1
    input drop
    masquerade
}
forward lan -> wan
port-forward wan tcp 8443 -> 192.168.10.20:443
set blocked { 198.51.100.0/24, 2001:db8:bad::/48 }
rule wan -> router tcp dport 22 src 203.0.113.0/24 accept
rule lan -> wan src 192.168.10.66 drop
rule any -> any src @blocked drop
shape wan upload 20mbit download 300mbit overhead ethernet
EOF
SHAPED=1
if ! nsluice reload -c "$WORK/prom.conf" >"$WORK/reload.log" 2>&1 &&
   grep -q "no sch_fq" "$WORK/reload.log"; then
	SHAPED=0	# (the Debian guests' kernels have it)
	sed -i '/^shape /d' "$WORK/prom.conf"
	nsluice reload -c "$WORK/prom.conf" >"$WORK/reload.log" 2>&1
fi
[ "$(json_get "$(nsluice status --json)" "len(j['ports'])")" = 3 ] &&
	pass "reload onto p0, p1 and $QP" || { fail "reload onto p0, p1 and $QP"; detail "$WORK/reload.log"; }

# FRAMES IF KIND COUNT: COUNT broadcast frames out of IF (so into its peer):
# ipv4 has ihl 4 (malformed-ipv4), ipv6 a payload beyond the frame
# (malformed-ipv6), udp is a valid IPv4/UDP datagram.
frames() {
	nsenter --net="/run/netns/$NS" /usr/bin/python3 - "$@" <<'PY'
import socket, struct, sys
ifname, kind, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
eth = b"\xff" * 6 + b"\x02\x00\x00\x00\x00\x01"
a, b = socket.inet_aton("192.0.2.1"), socket.inet_aton("192.0.2.2")
if kind == "ipv6":
    frame = eth + b"\x86\xdd" + struct.pack("!IHBB", 6 << 28, 1000, 17, 64) + bytes(40)
else:
    ihl = 0x44 if kind == "ipv4" else 0x45
    frame = eth + b"\x08\x00" + struct.pack("!BBHHHBBH4s4s", ihl, 0, 28, 1, 0, 64, 17, 0, a, b) + \
        struct.pack("!HHHH", 1234, 9, 8, 0) + bytes(18)
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((ifname, 0))
for _ in range(count):
    s.send(frame)
PY
}
# the frames below, counted (XDP counts them as they arrive)
counted() {
	nsluice stats --json -i 0 | /usr/bin/python3 -c '
import json, sys
d = {p["name"]: p["drop_reasons"] for p in json.load(sys.stdin)["ports"]}
sys.exit(not (d["p0"]["malformed-ipv4"] >= 7 and d[sys.argv[1]]["malformed-ipv6"] >= 5))' "$QP"
}
{ frames p1 ipv4 7 && frames q2 ipv6 5 && frames p0 udp 4 && frames q2 udp 3; } >"$WORK/frames.log" 2>&1
wait_for 3000 counted || { fail "the frames for stats --prometheus were counted"; detail "$WORK/frames.log"; }

nsluice stats --prometheus >"$WORK/prom.txt" 2>"$WORK/prom.err"
rc=$?
if [ $rc = 0 ] && /usr/bin/python3 "$PROMCHECK" "$WORK/prom.txt" >"$WORK/promcheck.log" 2>&1; then
	pass "stats --prometheus after traffic: valid text exposition 0.0.4 ($(grep -c '^# TYPE' "$WORK/prom.txt") families, $(grep -vc '^#' "$WORK/prom.txt") series)"
else
	fail "stats --prometheus after traffic: valid text exposition 0.0.4 (exit $rc)"
	detail "$WORK/prom.err" "$WORK/promcheck.log"
fi
# (tools/deps.sh unpacks promtool from Debian's prometheus package)
PROMTOOL=$(command -v promtool || echo /var/cache/sluice/promtool/promtool)
if [ -x "$PROMTOOL" ]; then
	expect "promtool check metrics takes it" sh -c "'$PROMTOOL' check metrics <'$WORK/prom.txt'"
else
	skip "promtool check metrics: no promtool (tools/deps.sh could not fetch Debian's prometheus package)"
fi
start=$(date +%s%N)
nsluice stats --prometheus -i 30 >/dev/null 2>&1
ms=$(( ($(date +%s%N) - start) / 1000000 ))
[ $ms -lt $((10000 * SLOW)) ] && pass "stats --prometheus does not wait for the interval (-i 30: $ms ms)" ||
	fail "stats --prometheus does not wait for the interval (-i 30: $ms ms)"

# Every counter and gauge of stats --json against its series, from a
# --prometheus reading between two equal --json ones (the kernel's own
# IPv6 chatter may move a counter in between: then read again).
/usr/bin/python3 - "$PROMCHECK" "$QP" "$SHAPED" nsenter --net="/run/netns/$NS" "$SLUICE" -p "$PIN" \
	>"$WORK/compare.log" 2>&1 <<'PY'
import json, os, subprocess, sys
sys.path.insert(0, os.path.dirname(sys.argv[1]))
import promcheck
qp, shaped, cmd = sys.argv[2], sys.argv[3] == "1", sys.argv[4:]

def stats(*a):
    return subprocess.run(cmd + ["stats"] + list(a), check=True, capture_output=True,
                          text=True).stdout

VOLATILE = ("delivered", "backlog_ns", "hosts", "flows")    # shape: of the moment

def stable(j):
    j = json.loads(json.dumps(j))
    for s in j["shape"]:
        for k in VOLATILE:
            s.pop(k)
    return j

for _ in range(20):
    j1 = json.loads(stats("--json", "-i", "0"))
    text = stats("--prometheus")
    j2 = json.loads(stats("--json", "-i", "0"))
    if stable(j1) == stable(j2):
        break
else:
    print("no|every --json counter has its series|the counters never stood still")
    sys.exit()
c = promcheck.Checker()
if not c.check(text):
    print("no|every --json counter has its series|" + "; ".join(c.problems[:5]))
    sys.exit()
series = {}
for name, labels, value in c.samples:
    series[(name, frozenset(labels.items()))] = value
problems, used = [], set()

def prom(name, **labels):
    v = series.get((name, frozenset(labels.items())))
    if v is None:
        problems.append("no series %s%s" % (name, labels))
    return v

def leaf(path):
    v = j1
    for p in path:
        v = v[p]
    used.add(path)
    return v

def same(path, name, scale=1, **labels):
    want, got = leaf(path), prom(name, **labels)
    if got is not None and got * scale != want:
        problems.append("%s%s is %s, --json %s says %s" % (name, labels, got, "/".join(map(str, path)), want))

def present(path, name, **labels):
    leaf(path)
    prom(name, **labels)

def port_leaves(p):
    for verdict in ("pass", "redirect", "tx", "drop"):
        yield (verdict, "packets"), "sluice_packets_total", {"verdict": verdict}
        yield (verdict, "bytes"), "sluice_bytes_total", {"verdict": verdict}
    for r in p["drop_reasons"]:
        yield ("drop_reasons", r), "sluice_drops_total", {"reason": r}
    for r in p["pass_reasons"]:
        yield ("pass_reasons", r), "sluice_passes_total", {"reason": r}
    yield ("fast_tx", "packets"), "sluice_fast_path_out_packets_total", {}
    yield ("fast_tx", "bytes"), "sluice_fast_path_out_bytes_total", {}

names = []
for i, p in enumerate(j1["ports"]):
    names.append(p["name"])
    leaf(("ports", i, "ifindex"))
    for sub, name, labels in port_leaves(p):
        same(("ports", i) + sub, name, port=p["name"], **labels)
    if not any(n == "sluice_port_info" and dict(l).get("port") == p["name"] and
               dict(l).get("zone") == p["zone"] for n, l in series):
        problems.append("no sluice_port_info for %s in zone %s" % (p["name"], p["zone"]))
leaf(("unknown", "ifindex"))
for sub, name, labels in port_leaves(j1["unknown"]):
    same(("unknown",) + sub, name, port="", **labels)
leaf(("total", "ifindex"))
for sub, name, labels in port_leaves(j1["total"]):    # the sum over ports
    got = sum(v for (n, l), v in series.items() if n == name and
              all(x in l for x in labels.items()))
    if got != leaf(("total",) + sub):
        problems.append("sum of %s%s is %s, --json total %s" % (name, labels, got, leaf(("total",) + sub)))
leaf(("interval",))

for k, name in (("entries", "sluice_fdb_entries"), ("size", "sluice_fdb_entries_limit"),
                ("learn", "sluice_fdb_learned_total"), ("move", "sluice_fdb_moved_total"),
                ("full", "sluice_fdb_table_full_total")):
    same(("fdb", k), name)
ct = j1["conntrack"]
for k, state in (("flows", "confirmed"), ("unconfirmed", "unconfirmed")):
    got = sum(v for (n, l), v in series.items() if n == "sluice_conntrack_flows" and
              ("state", state) in l)
    if got != leaf(("conntrack", k)):
        problems.append("sluice_conntrack_flows{state=%s} sums to %s, --json %s" % (state, got, ct[k]))
same(("conntrack", "size"), "sluice_conntrack_flows_limit", family="ipv4", state="confirmed")
same(("conntrack", "unconfirmed_size"), "sluice_conntrack_flows_limit", family="ipv4",
     state="unconfirmed")
for k, name in (("new", "created_total"), ("confirmed", "confirmed_total"),
                ("expired", "expired_total"), ("evicted", "evicted_flows"),
                ("orphans", "orphans_total"), ("full", "table_full_total")):
    same(("conntrack", k), "sluice_conntrack_" + name)
same(("conntrack", "host_flows"), "sluice_host_flows")
for i, h in enumerate(j1["conntrack"]["hosts_limited"]):
    for k in ("addr", "kind", "zone", "flows"):
        leaf(("conntrack", "hosts_limited", i, k))
    same(("conntrack", "hosts_limited", i, "refused"), "sluice_host_flows_refused_total",
         host=h["addr"], kind=h["kind"], zone=h["zone"])
for k, name in (("mappings", "nat_mappings"), ("size", "nat_mappings_limit"),
                ("ports", "nat_ports_per_address"), ("mapped", "nat_mappings_created_total"),
                ("preserved", "nat_port_preserved_total"), ("reused", "nat_mappings_reused_total"),
                ("taken_over", "nat_mappings_taken_over_total"),
                ("forward_ports", "nat_port_forward_ports"),
                ("forwarded", "nat_port_forward_connections_total"),
                ("hairpin", "nat_hairpin_connections_total"),
                ("inbound", "nat_inbound_connections_total"),
                ("mss_clamped", "tcp_mss_clamped_total"), ("fragments", "nat_fragments_total"),
                ("fragments_held", "nat_fragments_held_total"),
                ("fragments_replayed", "nat_fragments_replayed_total"),
                ("prohibited", "nat_icmp_prohibited_total"),
                ("host_ports", "nat_host_ports")):
    same(("nat", k), "sluice_" + name)
for i, h in enumerate(j1["nat"]["hosts_limited"]):
    for k in ("host", "mac", "addr", "addrs", "zone"):
        leaf(("nat", "hosts_limited", i, k))
    same(("nat", "hosts_limited", i, "refused"), "sluice_nat_host_refused_total",
         host=h["host"], zone=h["zone"])
    same(("nat", "hosts_limited", i, "ports"), "sluice_nat_host_ports_held",
         host=h["host"], zone=h["zone"])
same(("rules", "rules"), "sluice_rules")
same(("rules", "shapes_ipv4"), "sluice_rule_shapes", family="ipv4")
same(("rules", "shapes_ipv6"), "sluice_rule_shapes", family="ipv6")
same(("rules", "policy_gen"), "sluice_policy_generation")
same(("rules", "rejected"), "sluice_rule_rejects_total")
for i, s in enumerate(j1["shape"]):
    zd = {"zone": s["zone"], "direction": s["direction"]}
    same(("shape", i, "rate"), "sluice_shape_rate_bytes_per_second", 8, **zd)
    present(("shape", i, "delivered"), "sluice_shape_delivered_bytes_per_second", **zd)
    present(("shape", i, "backlog_ns"), "sluice_shape_backlog_seconds", **zd)
    present(("shape", i, "hosts"), "sluice_shape_active_hosts", **zd)
    present(("shape", i, "flows"), "sluice_shape_active_flows", **zd)
    for k, name in (("packets", "packets_total"), ("bytes", "bytes_total"),
                    ("marks", "ecn_marks_total")):
        same(("shape", i, k), "sluice_shape_" + name, **zd)
    for r in s["drops"]:
        same(("shape", i, "drops", r), "sluice_shape_drops_total", reason=r, **zd)

def leaves(v, path=()):
    if isinstance(v, dict):
        for k, x in v.items():
            yield from leaves(x, path + (k,))
    elif isinstance(v, list):
        for i, x in enumerate(v):
            yield from leaves(x, path + (i,))
    elif isinstance(v, (int, float)) and not isinstance(v, bool):
        yield path
missing = [p for p in leaves(j1) if p not in used]
if missing:
    problems.append("--json numbers without a series: " + ", ".join("/".join(map(str, p)) for p in missing))

want = ["p0", "p1", qp]
print(("ok" if sorted(names) == sorted(want) and not problems else "no") +
      "|every --json counter has its series with the same value (ports %s)" % ", ".join(names) +
      ("|" + "; ".join(problems[:8]) if problems else ""))
print(("ok" if prom("sluice_drops_total", port="p0", reason="malformed-ipv4") >= 7 and
       prom("sluice_drops_total", port=qp, reason="malformed-ipv6") >= 5 else "no") +
      "|drops by reason: malformed-ipv4 on p0 and malformed-ipv6 on %s, label escaped" % qp)
rules = json.loads(subprocess.run(cmd + ["rule", "list", "--json"], check=True,
                                  capture_output=True, text=True).stdout)["rules"]
bad = []
for r in rules:    # (the action label against the rule's text)
    for name, k in (("sluice_rule_packets_total", "packets"), ("sluice_rule_bytes_total", "bytes")):
        hits = [(dict(l), v) for (n, l), v in series.items() if n == name and
                ("rule", str(r["rule"])) in l]
        if len(hits) != 1 or hits[0][1] != r[k] or " %s" % hits[0][0]["action"] not in r["text"]:
            bad.append(r["rule"])
print(("ok" if len(rules) == 3 and not bad else "no") +
      "|rule counters as rule list --json has them (%d rules)" % len(rules) +
      ("|rules %s differ" % bad if bad else ""))
if shaped:
    print(("ok" if prom("sluice_shape_rate_bytes_per_second", zone="wan", direction="upload") ==
           20e6 / 8 else "no") + "|shape series per direction (wan upload 20mbit: 2500000 bytes/s)")
PY
while IFS='|' read -r ok desc why; do
	case $ok in
	ok) pass "stats --prometheus: $desc" ;;
	no) fail "stats --prometheus: $desc"; [ -n "$why" ] && printf '    %s\n' "$why" ;;
	*) fail "stats --prometheus: the comparison failed"; printf '    %s\n' "$ok $desc $why" ;;
	esac
done <"$WORK/compare.log"
[ -s "$WORK/compare.log" ] || fail "stats --prometheus: the comparison printed nothing"
[ $SHAPED = 1 ] || skip "stats --prometheus shape series: this kernel has no sch_fq (the Debian guests run it)"
t "reload back to p0 alone" 0 '' nsluice reload -c "$WORK/ok.conf"

g=$(generation)
t "up on a running instance replaces it" 0 '' nsluice up -c "$WORK/ok.conf"
t "reload with a bad config is refused" 1 "bad.conf:3:11: " nsluice reload -c "$WORK/bad.conf"
[ "$(generation)" = $((g + 1)) ] && pass "a refused reload leaves the running config" ||
	fail "a refused reload leaves the running config"
t "reload takes the running config file" 0 '' nsluice reload
cp "$WORK/ok.conf" "$WORK/my \"box\".conf"
t "reload with a config path holding quotes" 0 '' nsluice reload -c "$WORK/my \"box\".conf"
t "status --json escapes it" 0 'my "box".conf$' sh -c "nsenter --net=/run/netns/$NS $SLUICE -p $PIN status --json | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)[\"config\"])'"
t "reload back" 0 '' nsluice reload -c "$WORK/ok.conf"
printf 'zone lan {\n    interfaces p0\n}\nport nosuch9 mode tc\n' >"$WORK/stray.conf"
t "reload warns of a mode line for no zone's port, at FILE:LINE:COL" 0 \
	"^sluice: warning: .*stray.conf:4:1: port nosuch9 is not a port of any zone" nsluice reload -c "$WORK/stray.conf"
t "reload back" 0 '' nsluice reload -c "$WORK/ok.conf"

# exec'd by nsenter in the background job, so $! is the daemon's pid
nsenter --net="/run/netns/$NS" "$SLUICE" -p "$PIN" run -c "$WORK/ok.conf" >"$WORK/daemon.log" 2>&1 &
DAEMON_PID=$!
wait_for 15000 sh -c "nsenter --net=/run/netns/$NS $SLUICE -p $PIN status | grep -q 'running (pid $DAEMON_PID)'" ||
	fail "run: daemon shows in status"
t "a second run is refused" 1 "already followed by sluice run \(pid $DAEMON_PID\)" nsluice run -c "$WORK/ok.conf"
# A killed daemon leaves its pid in the maps; the lock tells the truth.
kill -9 "$DAEMON_PID"; wait "$DAEMON_PID" 2>/dev/null
t "a killed daemon shows as not running" 0 'daemon +not running' nsluice status
nsenter --net="/run/netns/$NS" "$SLUICE" -p "$PIN" run -c "$WORK/stray.conf" >"$WORK/daemon.log" 2>&1 &
DAEMON_PID=$!
wait_for 15000 sh -c "nsenter --net=/run/netns/$NS $SLUICE -p $PIN status | grep -q 'running (pid $DAEMON_PID)'" &&
	pass "run starts again after a killed daemon" || fail "run starts again after a killed daemon"
# (at boot a bridge's members join after the daemon starts)
wait_for 15000 grep -q "stray.conf:4:1: port nosuch9 is no zone's port yet" "$WORK/daemon.log" &&
	! grep -q 'warning:' "$WORK/daemon.log" &&
	pass "run only notes a mode line for no zone's port yet" ||
	{ fail "run only notes a mode line for no zone's port yet"; detail "$WORK/daemon.log"; }
t "down stops the daemon and removes everything, silently" 0 '' nsluice down
kill -0 "$DAEMON_PID" 2>/dev/null && fail "daemon still running after down" || pass "daemon exited on down"
wait "$DAEMON_PID" 2>/dev/null; DAEMON_PID=
[ ! -e "$PIN" ] && [ -z "$(ip -n "$NS" link show p0 | grep xdp)" ] &&
	pass "nothing left after down" || fail "nothing left after down"

# ---- install ------------------------------------------------------------------------------
if make -s -C "$TOP" install DESTDIR="$WORK/inst" PREFIX=/usr >"$WORK/install.log" 2>&1 &&
   [ -x "$WORK/inst/usr/sbin/sluice" ] && [ -f "$WORK/inst/usr/share/doc/sluice/sluice.conf.example" ] &&
   "$WORK/inst/usr/sbin/sluice" check -c "$WORK/inst/usr/share/doc/sluice/sluice.conf.example" >/dev/null 2>&1; then
	pass "make install honours DESTDIR and PREFIX"
else
	fail "make install honours DESTDIR and PREFIX"; detail "$WORK/install.log"
fi
