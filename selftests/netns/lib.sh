# The prologue of every netns suite. Set SUITE, then
#
#   . "$(dirname "$0")/lib.sh"
#
# It brings in selftests/lib.sh (PASS/FAIL/SKIP lines, expect, wait_for,
# json_get), the reference box (topology.sh: topo_*, rsluice), the traffic
# peers (traffic.sh: in_ns, listening, the python servers and clients) and
# the helpers below, which read the router's sluice through rsluice: its
# namespace is $RTR and its pins $PIN (topo_up sets both; a suite with a
# topology of its own sets them itself). traffic.sh stays a file of its
# own: the box suite and the container's VM use it without a router
# namespace.

# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
# shellcheck source=topology.sh
. "$TOP/selftests/netns/topology.sh"
# shellcheck source=traffic.sh
. "$TOP/selftests/netns/traffic.sh"

stats_json() { rsluice stats --json -i 0; }
fdb_json() { rsluice fdb --json; }
ct_json() { rsluice conntrack --json "$@"; }

# st JSON PORT EXPR: a field of a port in stats JSON (p is the port)
st() { json_get "$1" "[p for p in j['ports'] if p['name']=='$2'][0]$3"; }

# port_is PORT FIELD VALUE: the port's FIELD in `sluice status --json` is
# VALUE
port_is() { rsluice status --json | json_get "$(cat)" "[p['$2'] for p in j['ports'] if p['name']=='$1'][0]" | grep -qx "$3"; }

# kernel_rx PORT: the packets the router's kernel counted in on PORT
kernel_rx() { ip -n "$RTR" -s -j link show "$1" | json_get "$(cat)" "j[0]['stats64']['rx']['packets']"; }

# mac_of NS DEV: DEV's MAC address in namespace NS
mac_of() { ip -n "$1" link show "$2" | awk '/link\/ether/ {print $2}'; }

# A suite with a topology of its own: own_topo NAME sets TAG, RTR (its
# router namespace), PIN and WORK, and on exit stops $DAEMON_PID and removes
# every namespace named $TAG-*, the pins and WORK (topology.sh topo_down).
own_topo() {
	TAG=$(unique_tag)
	RTR=$TAG-rtr
	PIN=/sys/fs/bpf/sluice-$TAG
	WORK=$(mktemp -d "/tmp/sluice-$1.XXXXXX")
	DAEMON_PID=
	trap own_topo_down EXIT
	trap 'exit 130' INT TERM
}
own_topo_down() { topo_down; rm -rf "$WORK"; }
