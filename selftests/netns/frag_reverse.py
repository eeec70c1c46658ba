#!/usr/bin/python3
# UDP datagrams sent as IPv4 fragments in reverse order (the last first),
# from a raw socket: what RFC 4787 REQ-14 asks a NAT to carry.
#   frag_reverse.py client SRC SPORT DST DPORT SIZE   one datagram, prints the
#       answer's length (or "timeout")
#   frag_reverse.py server ADDR PORT SIZE             answers each datagram
#       with SIZE bytes, reversed too, for 20 s
import socket, struct, sys
from inetsum import csum  # (this folder: python puts it on the path)

MTU_PAYLOAD = 1480  # per fragment: 1500 - 20, a multiple of 8


def send_reversed(raw, src, sport, dst, dport, payload, ident):
    sa, da = socket.inet_aton(src), socket.inet_aton(dst)
    udp = struct.pack("!HHHH", sport, dport, 8 + len(payload), 0) + payload
    c = csum(sa + da + struct.pack("!BBH", 0, 17, len(udp)) + udp) or 0xFFFF
    udp = udp[:6] + struct.pack("!H", c) + udp[8:]
    frags = []
    for off in range(0, len(udp), MTU_PAYLOAD):
        part = udp[off:off + MTU_PAYLOAD]
        more = 0x2000 if off + MTU_PAYLOAD < len(udp) else 0
        h = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(part), ident,
                        more | (off // 8), 64, 17, 0, sa, da)
        h = h[:10] + struct.pack("!H", csum(h)) + h[12:]
        frags.append(h + part)
    for f in reversed(frags):
        raw.sendto(f, (dst, 0))


def main():
    raw = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
    if sys.argv[1] == "client":
        src, sport, dst, dport, size = sys.argv[2], int(sys.argv[3]), sys.argv[4], \
            int(sys.argv[5]), int(sys.argv[6])
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.bind((src, sport))
        s.settimeout(3)
        send_reversed(raw, src, sport, dst, dport, b"c" * size, 0x1234)
        try:
            print(len(s.recvfrom(65535)[0]))
        except socket.timeout:
            print("timeout")
    else:
        addr, port, size = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.bind((addr, port))
        s.settimeout(20)
        ident = 0x4321
        while True:
            try:
                _, peer = s.recvfrom(65535)
            except socket.timeout:
                return
            send_reversed(raw, addr, port, peer[0], peer[1], b"s" * size, ident)
            ident += 1


main()
