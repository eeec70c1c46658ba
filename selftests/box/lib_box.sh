# The box suite's Debian systems: a root made with debootstrap per release
# (kept in the cache like the other roots), with systemd, the stock kernel,
# systemd-networkd, ppp and what sluice depends on, and nothing of sluice:
# each run installs the package built from the tree into a copy.
# Source after selftests/lib.sh; sets DIST, DIST_NAME, ROOT, INCLUDE, MARKER
# for lib_debroot.sh from $1 (12 or 13).
box_release() {
	case $1 in
	12) DIST=bookworm DIST_NAME="Debian 12" libelf=libelf1 ;;
	13) DIST=trixie DIST_NAME="Debian 13" libelf=libelf1t64 ;;
	*) return 1 ;;
	esac
	CACHE=${SLUICE_CACHE:-/var/cache/sluice}
	ROOT=$CACHE/box-$DIST-root
	MARKER=.sluice-box-$DIST-root
	INCLUDE=systemd-sysv,udev,dbus,kmod,linux-image-amd64,initramfs-tools,iproute2,ethtool,nftables,ppp,procps,libbpf1,libmnl0,$libelf,zlib1g,iputils-ping,apt
}

# The box's NICs: a mini PC's onboard Intel port (e1000e: no native XDP,
# so tc) as the WAN and the first LAN port, virtio-net (native XDP) as the
# other two; named by MAC, as udev names a real box's ports by path.
BOX_NICS="wan0:e1000e:52:54:00:5c:00:01 lan1:e1000e:52:54:00:5c:00:11
lan2:virtio-net-pci:52:54:00:5c:00:12 lan3:virtio-net-pci:52:54:00:5c:00:13"

# box_files DIR: what the box has besides Debian and the package: its
# interface names, networkd's config (a DHCP WAN, br-lan over lan1..lan3),
# sluice's config, a persistent journal and the suite's agent.
box_files() {
	local r=$1 n name model mac
	for n in $BOX_NICS; do
		name=${n%%:*} mac=${n#*:*:}
		# (the permanent address: a VLAN device on the port has the same
		# MAC, and a MACAddress= match would rename it too)
		printf '[Match]\nPermanentMACAddress=%s\n\n[Link]\nName=%s\n' "$mac" "$name" \
			>"$r/etc/systemd/network/10-$name.link"
	done
	# (IPv6 as ISPs hand it out: router advertisements on the WAN, a
	# prefix delegated by DHCPv6 that the LAN gets by advertisements)
	cat >"$r/etc/systemd/network/20-wan0.network" <<'NET'
[Match]
Name=wan0

[Network]
DHCP=yes
IPv6AcceptRA=yes
VLAN=wan0.7

[DHCPv6]
PrefixDelegationHint=::/56
NET
	printf '[NetDev]\nName=br-lan\nKind=bridge\n' >"$r/etc/systemd/network/20-br-lan.netdev"
	printf '[Match]\nName=lan1 lan2 lan3\n\n[Network]\nBridge=br-lan\n' \
		>"$r/etc/systemd/network/21-lan.network"
	cat >"$r/etc/systemd/network/22-br-lan.network" <<'NET'
[Match]
Name=br-lan

[Network]
Address=192.168.10.1/24
ConfigureWithoutCarrier=yes
DHCPPrefixDelegation=yes
IPv6SendRA=yes

[DHCPPrefixDelegation]
UplinkInterface=wan0
SubnetId=1
NET
	cat >"$r/etc/sluice/sluice.conf" <<'CONF'
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
# (lan2 takes tc by itself: its NIC merges TCP segments, which XDP turns off)
port lan3 mode xdp
CONF
	# The other WANs ISPs deliver, not started until the suite says so:
	# PPPoE by pppd's plugin (a unit as a user would write one), and a
	# VLAN (7) with DHCP.
	cat >"$r/etc/ppp/peers/isp" <<'PPP'
plugin pppoe.so
nic-wan0
user box
noauth
noipdefault
persist
holdoff 1
maxfail 0
mtu 1492
mru 1492
lcp-echo-interval 2
lcp-echo-failure 3
+ipv6
PPP
	# (pppd keeps its addresses; networkd takes the ISP's RAs on ppp0)
	printf '[Match]\nName=ppp0\n\n[Network]\nKeepConfiguration=yes\nIPv6AcceptRA=yes\n' \
		>"$r/etc/systemd/network/20-ppp0.network"
	cat >"$r/etc/systemd/system/ppp-isp.service" <<'UNIT'
[Unit]
Description=PPPoE link to the ISP
After=network.target

[Service]
ExecStart=/usr/sbin/pppd call isp nodetach
Restart=always
UNIT
	printf '[NetDev]\nName=wan0.7\nKind=vlan\n\n[VLAN]\nId=7\n' \
		>"$r/etc/systemd/network/20-wan0.7.netdev"
	printf '[Match]\nName=wan0.7\n\n[Network]\nDHCP=yes\nIPv6AcceptRA=yes\n\n[DHCPv6]\nPrefixDelegationHint=::/56\n' \
		>"$r/etc/systemd/network/20-wan0.7.network"
	mkdir -p "$r/var/log/journal" "$r/mnt/share"
	echo box >"$r/etc/hostname"
	printf '/dev/vda / ext4 rw,errors=remount-ro 0 1\n' >"$r/etc/fstab"
	printf 'share /mnt/share 9p trans=virtio,version=9p2000.L,nofail 0 0\n' >>"$r/etc/fstab"
	install -m 755 "$TOP/selftests/box/agent.sh" "$r/usr/local/sbin/sluice-box-agent"
	install -m 644 "$TOP/selftests/box/sluice-box-agent.service" "$r/etc/systemd/system/"
	ln -sf /etc/systemd/system/sluice-box-agent.service \
		"$r/etc/systemd/system/sysinit.target.wants/sluice-box-agent.service"
	ln -sf /lib/systemd/system/systemd-networkd.service \
		"$r/etc/systemd/system/multi-user.target.wants/systemd-networkd.service"
	# (no login prompt on the console: the agent is the way in)
	ln -sf /dev/null "$r/etc/systemd/system/serial-getty@ttyS0.service"
}

# box_image DIR DEB: DIR/box.img, the cached root with DEB installed by
# apt and box_files, and DIR/vmlinuz and DIR/initrd.img from its /boot.
box_image() {
	local d=$1 deb=$2 r=$1/root
	rm -rf "$r"
	cp -a "$ROOT" "$r" || return 1
	cp "$deb" "$r/tmp/${deb##*/}"
	# (nothing starts in the chroot)
	printf '#!/bin/sh\nexit 101\n' >"$r/usr/sbin/policy-rc.d"
	chmod 755 "$r/usr/sbin/policy-rc.d"
	"${CLEAN_ENV[@]}" chroot "$r" apt-get install -y "/tmp/${deb##*/}" \
		>"$d/apt-install.log" 2>&1 || { tail -n 20 "$d/apt-install.log"; return 1; }
	rm -f "$r/usr/sbin/policy-rc.d" "$r/tmp/${deb##*/}"
	# (what `systemctl enable sluice` does, as the README says to once
	# the config is written)
	ln -sf /lib/systemd/system/sluice.service \
		"$r/etc/systemd/system/multi-user.target.wants/sluice.service"
	box_files "$r" || return 1
	cp "$r"/boot/vmlinuz-* "$d/vmlinuz" && cp "$r"/boot/initrd.img-* "$d/initrd.img" || return 1
	rm -f "$d/box.img"
	mkfs.ext4 -q -L box -d "$r" "$d/box.img" 3G || return 1
	rm -rf "$r"
}
