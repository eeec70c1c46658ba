#!/usr/bin/python3
"""The internet's side of the box suite where no namespace of the suite can
be (the ISP's guest): small servers (IPv4 and IPv6) that run until killed or idle
for an hour.

  peer.py seen PORT            tell every TCP client the address and port it
                               came from ("ADDR:PORT")
  peer.py echo PORT            echo every byte of every TCP connection back
  peer.py synmss IFACE PORT READY
                               print the MSS option of the first SYN to PORT
                               seen on IFACE (an L3 device: ppp0), then end;
                               creates the file READY once it captures
  peer.py sink PORT            count the bytes of one TCP connection (waiting
                               up to 120 s for it), print "MBIT/S BYTES" over
                               its first to last byte when it ends
"""
import socket
import struct
import sys
import threading
import time

IDLE = 3600


def listener(port):
    s = socket.socket(socket.AF_INET6)
    s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("::", int(port)))
    s.listen(16)
    s.settimeout(IDLE)
    return s


def seen(port):
    s = listener(port)
    while True:
        c, a = s.accept()
        c.sendall(("%s:%d" % (a[0].removeprefix("::ffff:"), a[1])).encode())
        c.close()


def echo_one(c):
    c.settimeout(IDLE)
    try:
        while True:
            d = c.recv(65536)
            if not d:
                break
            c.sendall(d)
    except OSError:
        pass
    c.close()


def echo(port):
    s = listener(port)
    while True:
        c, _ = s.accept()
        threading.Thread(target=echo_one, args=(c,), daemon=True).start()


def sink(port):
    s = listener(port)
    s.settimeout(120)
    c, _ = s.accept()
    c.settimeout(30)
    n, t0 = 0, None
    try:
        while True:
            d = c.recv(1 << 16)
            if not d:
                break
            t0 = t0 or time.monotonic()
            n += len(d)
    except OSError:
        pass
    t = time.monotonic() - (t0 or time.monotonic())
    print("%.1f %d" % (n * 8 / 1e6 / t if t > 0 else 0, n))


def synmss(iface, port, ready):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_DGRAM, socket.htons(0x0800))
    s.bind((iface, 0))
    open(ready, "w").close()
    while True:
        ip = s.recv(2048)
        t = ip[(ip[0] & 15) * 4:]
        if ip[9] != 6 or len(t) < 20 or struct.unpack("!H", t[2:4])[0] != int(port) \
                or not t[13] & 2:
            continue
        o, end = 20, (t[12] >> 4) * 4
        while o < min(end, len(t)):
            if t[o] == 2:
                print(struct.unpack("!H", t[o + 2:o + 4])[0])
                return
            o += 1 if t[o] < 2 else t[o + 1]
        print("none")
        return


if __name__ == "__main__":
    try:
        if sys.argv[1] == "seen":
            seen(sys.argv[2])
        elif sys.argv[1] == "echo":
            echo(sys.argv[2])
        elif sys.argv[1] == "sink":
            sink(sys.argv[2])
        elif sys.argv[1] == "synmss":
            synmss(sys.argv[2], sys.argv[3], sys.argv[4])
        else:
            raise IndexError
    except IndexError:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    except socket.timeout:
        pass
