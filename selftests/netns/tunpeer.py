#!/usr/bin/python3
"""The far side of a TUN device (standing in for a WireGuard or PPP peer):
sends ICMP echo requests into the kernel through the device, as if they had
arrived on it, and counts the replies the kernel routes back out of it.

    tunpeer.py DEV SRC DST COUNT [TIMEOUT]   (in the device's namespace)

Prints "replies N" (and exits 0 when every request got its reply). The
device must exist (ip tuntap add dev DEV mode tun) and be up.
"""
import fcntl, os, select, socket, struct, sys, time
from inetsum import csum  # (this folder: python puts it on the path)

TUNSETIFF = 0x400454CA
IFF_TUN, IFF_NO_PI = 0x0001, 0x1000


def echo(src, dst, ident, seq):
    icmp = struct.pack("!BBHHH", 8, 0, 0, ident, seq) + b"sluice-tun" * 4
    icmp = icmp[:2] + struct.pack("!H", csum(icmp)) + icmp[4:]
    hdr = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(icmp), seq, 0, 64, 1, 0,
                      socket.inet_aton(src), socket.inet_aton(dst))
    hdr = hdr[:10] + struct.pack("!H", csum(hdr)) + hdr[12:]
    return hdr + icmp


def main():
    dev, src, dst, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    timeout = float(sys.argv[5]) if len(sys.argv) > 5 else 2.0
    fd = os.open("/dev/net/tun", os.O_RDWR)
    fcntl.ioctl(fd, TUNSETIFF, struct.pack("16sH", dev.encode(), IFF_TUN | IFF_NO_PI))
    ident, got = os.getpid() & 0xFFFF, set()

    def wait(until, want):
        while not want() and time.monotonic() < until:
            r, _, _ = select.select([fd], [], [], max(0.0, until - time.monotonic()))
            if not r:
                return
            pkt = os.read(fd, 65535)
            if len(pkt) < 28 or pkt[0] >> 4 != 4:
                continue
            ihl = (pkt[0] & 15) * 4
            icmp = pkt[ihl:]
            # an echo reply to us, from DST, with intact checksums
            if (pkt[9] == 1 and socket.inet_ntoa(pkt[12:16]) == dst and len(icmp) >= 8
                    and icmp[0] == 0 and struct.unpack("!H", icmp[4:6])[0] == ident
                    and csum(pkt[:ihl]) == 0 and csum(icmp) == 0):
                got.add(struct.unpack("!H", icmp[6:8])[0])

    for seq in range(1, count + 1):
        os.write(fd, echo(src, dst, ident, seq))
        wait(time.monotonic() + timeout, lambda: seq in got)
    # (a loaded machine: replies later than their wait still count)
    wait(time.monotonic() + timeout, lambda: len(got) == count)
    print("replies %d" % len(got))
    sys.exit(0 if len(got) == count else 1)


main()
