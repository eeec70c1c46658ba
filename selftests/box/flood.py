#!/usr/bin/python3
"""What the internet throws at a box while it boots, and what gets through.

  flood.py send IFACE DSTMAC SRC WAN LAN SECONDS STOP
                                                   frames out of IFACE (to DSTMAC,
                                                   the box's WAN port) from SRC:
                                                   SYNs to the box's WAN address
                                                   WAN on closed ports, and TCP,
                                                   UDP and ping to the LAN host
                                                   LAN, ~100 frames/s, until
                                                   SECONDS pass or file STOP exists
  flood.py from IFACE SRC PORT SECONDS            count the UDP datagrams to PORT
                                                   on IFACE ("any": every interface,
                                                   PPP ones too) from SRC, and from
                                                   others
  flood.py watch IFACE SECONDS OUT                 count, until SECONDS pass or
                                                   OUT.stop exists, the frames on
                                                   IFACE that carry the flood's
                                                   mark ("lan") and the box's
                                                   answers to its SYNs ("answers":
                                                   SYN-ACK, RST, ICMP unreachable);
                                                   written to OUT as JSON

Run in the namespace that has IFACE. Plain sockets, no scapy (its import takes
minutes under emulation).
"""
import json
import os
import socket
import struct
import sys
import time

MARK = b"SLUICE-BOX-FLOOD"
ROUTER_PORTS = (22, 53, 80, 443, 2222)


def csum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def ipv4(src, dst, proto, l4):
    h = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(l4), 0, 0x4000, 64, proto, 0,
                    socket.inet_aton(src), socket.inet_aton(dst))
    return h[:10] + struct.pack("!H", csum(h)) + h[12:] + l4


def l4sum(src, dst, proto, l4):
    ph = socket.inet_aton(src) + socket.inet_aton(dst) + struct.pack("!BBH", 0, proto, len(l4))
    return csum(ph + l4)


def tcp(src, dst, sport, dport, payload=b""):
    t = struct.pack("!HHIIBBHHH", sport, dport, 1000, 0, 5 << 4, 0x02, 64240, 0, 0) + payload
    return t[:16] + struct.pack("!H", l4sum(src, dst, 6, t)) + t[18:]


def udp(src, dst, sport, dport, payload):
    u = struct.pack("!HHHH", sport, dport, 8 + len(payload), 0) + payload
    return u[:6] + struct.pack("!H", l4sum(src, dst, 17, u) or 0xFFFF) + u[8:]


def echo(ident, seq, payload):
    i = struct.pack("!BBHHH", 8, 0, 0, ident, seq) + payload
    return i[:2] + struct.pack("!H", csum(i)) + i[4:]


def send(iface, dstmac, src, wan, lan, seconds, stop):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((iface, 0))
    eth = bytes.fromhex(dstmac.replace(":", "")) + s.getsockname()[4][:6] + b"\x08\x00"
    end = time.monotonic() + float(seconds)
    n = 0
    while time.monotonic() < end and not os.path.exists(stop):
        sport = 20000 + n % 20000
        frames = [ipv4(src, wan, 6, tcp(src, wan, sport, p)) for p in ROUTER_PORTS]
        frames += [ipv4(src, lan, 6, tcp(src, lan, sport, 5001, MARK)),
                   ipv4(src, lan, 17, udp(src, lan, sport, 6000, MARK)),
                   ipv4(src, lan, 1, echo(0x5b0c, n & 0xFFFF, MARK))]
        for f in frames:
            try:
                s.send(eth + f)
            except OSError:
                pass	# (the tap has no reader yet: the box is not up)
        n += 1
        time.sleep(0.08)
    print(n)


def watch(iface, seconds, out):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0003))
    s.bind((iface, 0))
    s.settimeout(0.5)
    end = time.monotonic() + float(seconds)
    got = {"lan": 0, "answers": 0, "frames": 0}
    while time.monotonic() < end and not os.path.exists(out + ".stop"):
        try:
            f, addr = s.recvfrom(65535)
        except socket.timeout:
            continue
        if addr[2] == socket.PACKET_OUTGOING:
            continue
        got["frames"] += 1
        if f[12:14] != b"\x08\x00" or len(f) < 34:
            continue
        ip = f[14:]
        hl = (ip[0] & 15) * 4
        proto, l4 = ip[9], ip[hl:]
        if MARK in ip:
            got["lan"] += 1
        elif proto == 6 and len(l4) >= 14 and struct.unpack("!H", l4[0:2])[0] in ROUTER_PORTS \
                and l4[13] & 0x14:	# RST, or ACK (a SYN-ACK)
            got["answers"] += 1
        elif proto == 1 and len(l4) >= 36 and l4[0] == 3:
            q = l4[8:]
            qhl = (q[0] & 15) * 4
            if q[9] == 6 and struct.unpack("!H", q[qhl + 2:qhl + 4])[0] in ROUTER_PORTS:
                got["answers"] += 1
    with open(out, "w") as f:
        json.dump(got, f)


def sources(iface, src, port, seconds):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0800))
    if iface != "any":
        s.bind((iface, 0))
    s.settimeout(0.5)
    end = time.monotonic() + float(seconds)
    same = other = 0
    while time.monotonic() < end:
        try:
            f, addr = s.recvfrom(65535)
        except socket.timeout:
            continue
        # (a PPP device's frames start with the IP header: ARPHRD_PPP)
        ip = f if addr[3] == 512 else f[14:]
        hl = (ip[0] & 15) * 4
        if addr[2] == socket.PACKET_OUTGOING or ip[9] != 17 or \
                struct.unpack("!H", ip[hl + 2:hl + 4])[0] != int(port):
            continue
        if ip[12:16] == socket.inet_aton(src):
            same += 1
        else:
            other += 1
    print(same, other)


if __name__ == "__main__":
    if len(sys.argv) == 9 and sys.argv[1] == "send":
        send(*sys.argv[2:9])
    elif len(sys.argv) == 6 and sys.argv[1] == "from":
        sources(*sys.argv[2:6])
    elif len(sys.argv) == 5 and sys.argv[1] == "watch":
        watch(*sys.argv[2:5])
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
