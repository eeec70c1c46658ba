#!/bin/bash
# The VM on the router box of test_container.sh, run by run-in-guest.sh: a
# stock Debian kernel whose virtio-net NIC is a tap in the router's br-lan,
# with the offloads virtio negotiates left on (partial checksums and TSO out
# of the guest, as any VM's). It serves the host's checks (bulk TCP on 5010,
# a UDP stream on 6010), makes its own (bulk TCP to a LAN host, through NAT
# to the internet, routed IPv6), and prints one line per result:
#   OFFLOADS <tx-checksumming> <tcp-segmentation-offload>
#   RESULT <what> <ok|why>
#   UDP <datagrams received>
# It ends when the UDP stream is over or after LIMIT seconds without one.
LIMIT=${1:-300}
TOP=$(cd "$(dirname "$0")/../.." && pwd)
SLOW=5	# (bulk and its servers: timeouts for an emulated machine)
# shellcheck source=traffic.sh
. "$TOP/selftests/netns/traffic.sh"
in_ns() { shift; "$@"; }	# the guest is one host: no namespaces here

modprobe virtio_net 2>/dev/null
for _ in $(seq 100); do [ -e /sys/class/net/eth0 ] && break; sleep 0.1; done
ip link set eth0 up
ip addr add 192.168.10.40/24 dev eth0
ip addr add fd00:10::40/64 dev eth0 nodad
ip route add default via 192.168.10.1
ip -6 route add default via fd00:10::1
echo "OFFLOADS $(ethtool -k eth0 | awk '/^tx-checksumming:|^tcp-segmentation-offload:/ {printf "%s ", $2}')"

bulk_server vm 0.0.0.0 5010 >/dev/null
echo "UDP $(python3 "$TOP/selftests/netns/udp_count.py" 192.168.10.40 6010 "$LIMIT" 3)" &
udp=$!

# the LAN host's and the internet's servers answer once the router forwards:
# the first check waits for ARP and the bridge to learn the VM
for _ in $(seq 30); do ping -c1 -W1 192.168.10.11 >/dev/null 2>&1 && break; done
echo "RESULT bridged,_the_VM_to_a_LAN_host $(bulk x 192.168.10.11 5011)"
echo "RESULT through_NAT,_the_VM_to_the_internet $(bulk x 203.0.113.1 5014)"
echo "RESULT routed_IPv6,_the_VM_to_the_internet $(bulk x 2001:db8:113::1 5015)"
wait "$udp"
