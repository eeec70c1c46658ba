#!/bin/sh
# The ISP's IPv6 on one link of its guest, as ISPs hand it out:
#   isp-ipv6.sh IFACE NAME ADDR/64 PREFIX/56 [VIA]
# its address ADDR on IFACE, router advertisements for ADDR's /64 (radvd),
# and the customer's PREFIX routed to the box (via VIA, its link-local
# address; a PPP link needs none). On an Ethernet link DHCPv6 (dhcpd)
# delegates PREFIX; on a PPP link it is routed statically, as ISPs that
# hand out a fixed prefix do: isc-dhcp-server cannot serve on a PPP device
# ("Unsupported device type 512"). NAME keeps each link's daemons apart; a
# second run for NAME (a new PPP session: pppd runs this from
# /etc/ppp/ipv6-up.local) takes over from the first.
PATH=/usr/sbin:/usr/bin:/sbin:/bin
iface=$1 name=$2 addr=$3 prefix=$4 via=${5:-}
for d in radvd dhcpd6; do
	[ -f "/tmp/$d-$name.pid" ] && kill "$(cat "/tmp/$d-$name.pid")" 2>/dev/null
done
sleep 1
net=$(python3 -c "import ipaddress, sys; print(ipaddress.ip_interface(sys.argv[1]).network)" "$addr")
ip -6 addr replace "$addr" dev "$iface" nodad
ip -6 route replace "$prefix" dev "$iface" ${via:+via "$via"}
ppp=0
[ "$(cat "/sys/class/net/$iface/type")" = 512 ] && ppp=1
managed=on
[ $ppp = 1 ] && managed=off
cat >"/tmp/radvd-$name.conf" <<RA
interface $iface {
	AdvSendAdvert on;
	MinRtrAdvInterval 3;
	MaxRtrAdvInterval 10;
	AdvManagedFlag $managed;
	prefix $net { AdvOnLink on; AdvAutonomous on; };
};
RA
radvd -C "/tmp/radvd-$name.conf" -p "/tmp/radvd-$name.pid" -m logfile -l "/tmp/radvd-$name.log"
[ $ppp = 1 ] && exit 0
start=${net%::/64}::100 end=${net%::/64}::1ff
cat >"/tmp/dhcpd6-$name.conf" <<D6
default-lease-time 600;
max-lease-time 1200;
subnet6 $net {
	range6 $start $end;
	prefix6 ${prefix%/*} ${prefix%/*} /${prefix#*/};
}
D6
touch "/tmp/dhcpd6-$name.leases"
dhcpd -6 -q -cf "/tmp/dhcpd6-$name.conf" -lf "/tmp/dhcpd6-$name.leases" -pf "/tmp/dhcpd6-$name.pid" \
	"$iface" >"/tmp/dhcpd6-$name.log" 2>&1
