#!/bin/bash
# The ISP of the box suite's PPPoE and VLAN WANs, in a guest of its own
# (run-in-guest.sh: a stock Debian kernel with the host's root; the build
# machine's kernel has neither PPP nor VLAN devices). Its NIC is the other
# end of the box's WAN; the suite configures it through the agent, as the
# box (pppoe-server, a VLAN device, dnsmasq, servers).
modprobe -a virtio_console virtio_net pppoe 8021q 2>/dev/null
for i in $(seq 200); do
	for d in /sys/class/virtio-ports/*; do
		[ "$(cat "$d/name" 2>/dev/null)" = sluice.agent ] && [ -e "/dev/${d##*/}" ] && break 2
	done
	sleep 0.1
done
ip link set lo up
exec bash "$(dirname "$0")/agent.sh"
