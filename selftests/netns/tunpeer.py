#!/usr/bin/python3
"""The far side of a TUN device (standing in for a WireGuard or PPP peer).

    tunpeer.py DEV SRC DST COUNT [TIMEOUT]
        sends ICMP echo requests from SRC to DST into the kernel through the
        device, as if they had arrived on it, and counts the replies the
        kernel routes back out of it. Prints "replies N" (exit 0 when every
        request got its reply).
    tunpeer.py DEV --answer ADDR SECONDS
        plays the host ADDR beyond the device: answers the echo requests
        routed to it for SECONDS. Prints "ready" once it listens, then
        "answered N from SRC[,SRC...]".

Run it in the device's namespace. The device must exist (ip tuntap add dev
DEV mode tun) and be up.
"""
import fcntl, os, select, socket, struct, subprocess, sys, time
from inetsum import csum  # (this folder: python puts it on the path)

TUNSETIFF = 0x400454CA
IFF_TUN, IFF_NO_PI = 0x0001, 0x1000


def ipv4(src, dst, ident, payload):
    hdr = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(payload), ident, 0, 64, 1, 0,
                      socket.inet_aton(src), socket.inet_aton(dst))
    return hdr[:10] + struct.pack("!H", csum(hdr)) + hdr[12:] + payload


def echo(kind, ident, seq, data):
    icmp = struct.pack("!BBHHH", kind, 0, 0, ident, seq) + data
    return icmp[:2] + struct.pack("!H", csum(icmp)) + icmp[4:]


def icmp_of(pkt):
    """(src, dst, icmp) of an intact IPv4 ICMP packet, else None."""
    if len(pkt) < 28 or pkt[0] >> 4 != 4 or pkt[9] != 1:
        return None
    ihl = (pkt[0] & 15) * 4
    if csum(pkt[:ihl]) or len(pkt) < ihl + 8 or csum(pkt[ihl:]):
        return None
    return socket.inet_ntoa(pkt[12:16]), socket.inet_ntoa(pkt[16:20]), pkt[ihl:]


def attach(dev):
    fd = os.open("/dev/net/tun", os.O_RDWR)
    fcntl.ioctl(fd, TUNSETIFF, struct.pack("16sH", dev.encode(), IFF_TUN | IFF_NO_PI))
    # Attaching turns the carrier on, but the kernel's link watch
    # activates the device's queue only later (up to a second): until
    # then what the kernel sends out of it is dropped. The operational
    # state changes in the same step.
    until = time.monotonic() + 10
    while time.monotonic() < until:
        out = subprocess.run(["ip", "-o", "link", "show", "dev", dev],
                             capture_output=True, text=True).stdout
        if " state DOWN " not in out and " state LOWERLAYERDOWN " not in out:
            break
        time.sleep(0.05)
    return fd


def packets(fd, until):
    while time.monotonic() < until:
        r, _, _ = select.select([fd], [], [], max(0.0, until - time.monotonic()))
        if not r:
            return
        yield os.read(fd, 65535)


def ping(fd, src, dst, count, timeout):
    ident, got = os.getpid() & 0xFFFF, set()

    def wait(until, done):
        if done():
            return
        for pkt in packets(fd, until):
            p = icmp_of(pkt)
            # an echo reply to us, from DST
            if p and p[0] == dst and p[2][0] == 0 and struct.unpack("!H", p[2][4:6])[0] == ident:
                got.add(struct.unpack("!H", p[2][6:8])[0])
            if done():
                return

    for seq in range(1, count + 1):
        os.write(fd, ipv4(src, dst, seq, echo(8, ident, seq, b"sluice-tun" * 4)))
        wait(time.monotonic() + timeout, lambda: seq in got)
    # (a loaded machine: replies later than their wait still count)
    wait(time.monotonic() + timeout, lambda: len(got) == count)
    print("replies %d" % len(got))
    return 0 if len(got) == count else 1


def answer(fd, addr, seconds):
    n, sources = 0, []
    print("ready", flush=True)
    for pkt in packets(fd, time.monotonic() + seconds):
        p = icmp_of(pkt)
        if p and p[1] == addr and p[2][0] == 8:
            icmp = p[2]
            os.write(fd, ipv4(addr, p[0], n, echo(0, *struct.unpack("!HH", icmp[4:8]), icmp[8:])))
            n += 1
            if p[0] not in sources:
                sources.append(p[0])
    print("answered %d from %s" % (n, ",".join(sources) or "-"))
    return 0


def main():
    fd = attach(sys.argv[1])
    if sys.argv[2] == "--answer":
        return answer(fd, sys.argv[3], float(sys.argv[4]))
    return ping(fd, sys.argv[2], sys.argv[3], int(sys.argv[4]),
                float(sys.argv[5]) if len(sys.argv) > 5 else 2.0)


sys.exit(main())
