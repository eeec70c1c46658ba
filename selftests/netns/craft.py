#!/usr/bin/python3
# Crafted frames for the firewall's adversarial suite, built byte by byte
# (no scapy: its import takes minutes in the emulated guests).
#
#   craft.py send IFACE DST-MAC KIND SRC DST DPORT MARKER [SPORT]
#       one frame of KIND out of IFACE (an AF_PACKET socket): a TCP SYN
#       carrying MARKER as payload, or a UDP datagram for the fragment kinds
#   craft.py flood IFACE DST-MAC SRC DST COUNT
#       COUNT UDP datagrams, then COUNT bare TCP ACKs, from SRC to DST, each
#       from a source port of its own (new flows for a NAT to map); with
#       IPv6 addresses, COUNT UDP datagrams only (new flows to track)
#   craft.py hosts IFACE DST-MAC SRC-MAC FIRST N DST COUNT
#       COUNT UDP datagrams from ports 1024 on of each of N addresses from
#       FIRST up, all from one device: SRC-MAC ("own": IFACE's)
#   craft.py spoof IFACE DST-MAC DST DPORT SECONDS
#       UDP datagrams to DST:DPORT for SECONDS, as fast as they go, each
#       from a random source address (unicast, outside the test's own
#       prefixes) and port; prints how many it sent
#   craft.py sniff IFACE SECONDS OUT [GRACE UNTIL,...]
#       for SECONDS, every MARKER-like word ("SLX" + letters and digits) seen
#       in a frame received on IFACE, and "synack:SPORT" for every TCP
#       SYN-ACK, one per line into OUT (written when done); with UNTIL,
#       GRACE seconds after every marker listed there was seen
#       (a ready file OUT.ready says when it listens)
#
# KINDs: v4 (plain), v4-opts (IPv4 options), v4-frag-later (a non-first
# fragment), v4-vlan0 (an 802.1Q priority tag), v4-qinq (802.1ad over
# 802.1Q), v6 (plain), v6-hbh (one hop-by-hop header), v6-dst7 (seven
# destination options headers), v6-frag-later, v6-frag-atomic (a fragment
# header with offset 0 and no more fragments), v6-rthdr (a routing header,
# segments left 0), v6-vlan0; u4 and u6: a plain UDP datagram (MARKER its
# payload), for frames of any destination MAC; v4-lsrr and v6-srh: a SYN
# to the first hop with the rest of its way in a loose source route (IPv4
# option 131) or a segment routing header (IPv6 routing type 4, one segment
# left), DST given as FIRST-HOP,FINAL (the checksum is the final one's).
import re, socket, struct, sys, time
from inetsum import csum  # (this folder: python puts it on the path)


def mac(s):
    return bytes(int(x, 16) for x in s.split(":"))


def own_mac(iface):
    with open("/sys/class/net/%s/address" % iface) as f:
        return mac(f.read().strip())


def l4_sum(pseudo, seg):
    return csum(pseudo + seg) or 0xFFFF


def tcp_syn(sport, dport, payload, pseudo_fn):
    h = struct.pack("!HHIIBBHHH", sport, dport, 0x1000, 0, 5 << 4, 0x02, 64240, 0, 0)
    seg = h + payload
    c = l4_sum(pseudo_fn(len(seg), 6), seg)
    return seg[:16] + struct.pack("!H", c) + seg[18:]


def udp_dgram(sport, dport, payload, pseudo_fn):
    seg = struct.pack("!HHHH", sport, dport, 8 + len(payload), 0) + payload
    c = l4_sum(pseudo_fn(len(seg), 17), seg)
    return seg[:6] + struct.pack("!H", c) + seg[8:]


def ipv4(src, dst, proto, body, opts=b"", frag=0, ident=0x5151):
    ihl = 5 + len(opts) // 4
    h = struct.pack("!BBHHHBBH4s4s", 0x40 | ihl, 0, ihl * 4 + len(body), ident, frag, 64,
                    proto, 0, socket.inet_aton(src), socket.inet_aton(dst)) + opts
    h = h[:10] + struct.pack("!H", csum(h)) + h[12:]
    return h + body


def ipv6(src, dst, nexthdr, body):
    return struct.pack("!IHBB16s16s", 0x60000000, len(body), nexthdr, 64,
                       socket.inet_pton(socket.AF_INET6, src),
                       socket.inet_pton(socket.AF_INET6, dst)) + body


def opts_ext(nexthdr):
    # 8 bytes: next header, length 0, a PadN option filling the rest
    return struct.pack("!BBBB4s", nexthdr, 0, 1, 4, b"\0" * 4)


def frame(dmac, smac, ethertype, payload, tags=()):
    out = dmac + smac
    for tpid, tci in tags:
        out += struct.pack("!HH", tpid, tci)
    return out + struct.pack("!H", ethertype) + payload


def source_routed(kind, src, dst, dport, payload, sport):
    hop, final = dst.split(",")
    if kind == "v4-lsrr":
        sa, fa = socket.inet_aton(src), socket.inet_aton(final)
        seg = tcp_syn(sport, dport, payload, lambda n, p: sa + fa + struct.pack("!BBH", 0, p, n))
        opts = b"\x01" + struct.pack("!BBB", 131, 7, 4) + fa  # NOP, LSRR: the final hop
        return 0x0800, ipv4(src, hop, 6, seg, opts), ()
    sa = socket.inet_pton(socket.AF_INET6, src)
    fa = socket.inet_pton(socket.AF_INET6, final)
    ha = socket.inet_pton(socket.AF_INET6, hop)
    seg = tcp_syn(sport, dport, payload, lambda n, p: sa + fa + struct.pack("!IxxxB", n, p))
    # next header TCP, 2 segments (4 units), type 4, segments left 1, last
    # entry 1; the list in reverse: the final destination first
    srh = struct.pack("!BBBBBBH", 6, 4, 4, 1, 1, 0, 0) + fa + ha
    return 0x86dd, ipv6(src, hop, 43, srh + seg), ()


def build(kind, src, dst, dport, marker, sport):
    payload = marker.encode() + b" " * 8
    if kind in ("v4-lsrr", "v6-srh"):
        return source_routed(kind, src, dst, dport, payload, sport)
    if kind in ("u4", "u6"):
        fam = socket.AF_INET if kind == "u4" else socket.AF_INET6
        sa, da = socket.inet_pton(fam, src), socket.inet_pton(fam, dst)
        if kind == "u4":
            seg = udp_dgram(sport, dport, payload, lambda n, p: sa + da + struct.pack("!BBH", 0, p, n))
            return 0x0800, ipv4(src, dst, 17, seg), ()
        seg = udp_dgram(sport, dport, payload, lambda n, p: sa + da + struct.pack("!IxxxB", n, p))
        return 0x86dd, ipv6(src, dst, 17, seg), ()
    if kind.startswith("v4"):
        sa, da = socket.inet_aton(src), socket.inet_aton(dst)
        ph = lambda n, p: sa + da + struct.pack("!BBH", 0, p, n)
        if kind == "v4-frag-later":
            # offset 8 bytes in, no more fragments: payload only
            return 0x0800, ipv4(src, dst, 17, payload + b"x" * 16, frag=1), ()
        seg = tcp_syn(sport, dport, payload, ph)
        opts = b"\x01\x01\x01\x00" if kind == "v4-opts" else b""  # NOPs, end
        tags = {"v4-vlan0": ((0x8100, 0x6000),),
                "v4-qinq": ((0x88a8, 0), (0x8100, 0))}.get(kind, ())
        return 0x0800, ipv4(src, dst, 6, seg, opts), tags
    sa = socket.inet_pton(socket.AF_INET6, src)
    da = socket.inet_pton(socket.AF_INET6, dst)
    ph = lambda n, p: sa + da + struct.pack("!IxxxB", n, p)
    if kind == "v6-frag-later":
        fh = struct.pack("!BBHI", 17, 0, 8 << 3, 0x5151)  # offset 8, last
        return 0x86dd, ipv6(src, dst, 44, fh + payload + b"x" * 16), ()
    seg = tcp_syn(sport, dport, payload, ph)
    tags = ((0x8100, 0x6000),) if kind == "v6-vlan0" else ()
    if kind == "v6-hbh":
        return 0x86dd, ipv6(src, dst, 0, opts_ext(6) + seg), tags
    if kind == "v6-dst7":
        chain = b"".join(opts_ext(60) for _ in range(6)) + opts_ext(6)
        return 0x86dd, ipv6(src, dst, 60, chain + seg), tags
    if kind == "v6-frag-atomic":
        fh = struct.pack("!BBHI", 6, 0, 0, 0x5152)
        return 0x86dd, ipv6(src, dst, 44, fh + seg), tags
    if kind == "v6-rthdr":
        # type 4 (segment routing), segments left 0: the router is not asked
        # to route it anywhere else; the destination is the LAN host
        rh = struct.pack("!BBBBBBH16s", 6, 2, 4, 0, 0, 0, 0, da)
        return 0x86dd, ipv6(src, dst, 43, rh + seg), tags
    return 0x86dd, ipv6(src, dst, 6, seg), tags


def send(iface, dmac, kind, src, dst, dport, marker, sport=40000):
    ethertype, l3, tags = build(kind, src, dst, int(dport), marker, int(sport))
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((iface, 0))
    s.send(frame(mac(dmac), own_mac(iface), ethertype, l3, tags))


def flood(iface, dmac, src, dst, count):
    """COUNT UDP datagrams and COUNT bare TCP ACKs from SRC to DST, each
    from a port of its own (1024 on): new flows for a NAT to map."""
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((iface, 0))
    if ":" in src:
        head = mac(dmac) + own_mac(iface) + b"\x86\xdd"
        sa = socket.inet_pton(socket.AF_INET6, src)
        da = socket.inet_pton(socket.AF_INET6, dst)
        ph = lambda n, p: sa + da + struct.pack("!IxxxB", n, p)
        for i in range(int(count)):
            seg = udp_dgram(1024 + i % 64000, 9, b"SLXf", ph)
            s.send(head + ipv6(src, dst, 17, seg))
        return
    head = mac(dmac) + own_mac(iface) + b"\x08\x00"
    for proto, body in ((17, struct.pack("!HHHH", 0, 9, 8 + 4, 0) + b"SLXf"),
                        (6, struct.pack("!HHIIBBHHH", 0, 443, 1, 1, 5 << 4, 0x10, 512, 0, 0))):
        ip = ipv4(src, dst, proto, body)
        for i in range(int(count)):
            port = struct.pack("!H", 1024 + i % 64000)
            s.send(head + ip[:20] + port + ip[22:])


def hosts(iface, dmac, smac, first, n, dst, count):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((iface, 0))
    head = mac(dmac) + (own_mac(iface) if smac == "own" else mac(smac)) + b"\x08\x00"
    base = struct.unpack("!I", socket.inet_aton(first))[0]
    body = struct.pack("!HHHH", 0, 9, 8 + 4, 0) + b"SLXh"
    for a in range(int(n)):
        ip = ipv4(socket.inet_ntoa(struct.pack("!I", base + a)), dst, 17, body)
        for i in range(int(count)):
            s.send(head + ip[:20] + struct.pack("!H", 1024 + i) + ip[22:])


def spoof(iface, dmac, dst, dport, seconds):
    import random
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((iface, 0))
    head = mac(dmac) + own_mac(iface) + b"\x08\x00"
    body = struct.pack("!HHHH", 0, int(dport), 8 + 4, 0) + b"SLXs"
    ip = bytearray(ipv4("11.0.0.1", dst, 17, body))
    n, end = 0, time.time() + float(seconds)
    while time.time() < end:
        for _ in range(256):
            src = struct.pack("!BBBB", random.randint(11, 99), random.randint(0, 255),
                              random.randint(0, 255), random.randint(1, 254))
            ip[12:16] = src
            ip[10:12] = b"\0\0"
            ip[10:12] = struct.pack("!H", csum(bytes(ip[:20])))
            ip[20:22] = struct.pack("!H", random.randint(1024, 65535))
            try:
                s.send(head + bytes(ip))
                n += 1
            except OSError:
                pass    # (a full queue: the next one)
    print(n)


def sniff(iface, seconds, out, grace=0, until=""):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
    s.bind((iface, 0))
    s.settimeout(0.2)
    open(out + ".ready", "w").close()
    seen = set()
    wanted = set(x for x in until.split(",") if x)
    end = time.time() + float(seconds)
    while time.time() < end:
        if wanted and wanted <= seen:
            end = min(end, time.time() + float(grace))
            wanted = set()
        try:
            f = s.recv(65535)
        except socket.timeout:
            continue
        for m in re.findall(rb"SLX[A-Za-z0-9]+", f):
            seen.add(m.decode())
        # a SYN-ACK, IPv4 or IPv6 without extension headers
        if len(f) >= 14 + 20 + 20 and f[12:14] == b"\x08\x00" and f[23] == 6:
            t = 14 + (f[14] & 15) * 4
            if len(f) >= t + 14 and f[t + 13] & 0x12 == 0x12:
                seen.add("synack:%d" % struct.unpack("!H", f[t + 2:t + 4])[0])
        if len(f) >= 14 + 40 + 20 and f[12:14] == b"\x86\xdd" and f[20] == 6:
            t = 54
            if f[t + 13] & 0x12 == 0x12:
                seen.add("synack:%d" % struct.unpack("!H", f[t + 2:t + 4])[0])
    with open(out, "w") as f:
        f.write("".join(x + "\n" for x in sorted(seen)))


if __name__ == "__main__":
    if sys.argv[1] == "send":
        send(*sys.argv[2:])
    elif sys.argv[1] == "flood":
        flood(*sys.argv[2:])
    elif sys.argv[1] == "hosts":
        hosts(*sys.argv[2:])
    elif sys.argv[1] == "spoof":
        spoof(*sys.argv[2:])
    else:
        sniff(*sys.argv[2:])
