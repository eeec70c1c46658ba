#!/usr/bin/python3
"""The internet's side of the box suite where no namespace of the suite can
be (the ISP's guest): small servers that run until killed or idle for an
hour.

  peer.py seen PORT            tell every TCP client the address and port it
                               came from ("ADDR:PORT")
  peer.py echo PORT            echo every byte of every TCP connection back
  peer.py synmss IFACE PORT    print the MSS option of the first SYN to PORT
                               seen on IFACE (an L3 device: ppp0), then end
"""
import socket
import struct
import sys
import threading

IDLE = 3600


def listener(port):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("0.0.0.0", int(port)))
    s.listen(16)
    s.settimeout(IDLE)
    return s


def seen(port):
    s = listener(port)
    while True:
        c, a = s.accept()
        c.sendall(("%s:%d" % a).encode())
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


def synmss(iface, port):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_DGRAM, socket.htons(0x0800))
    s.bind((iface, 0))
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
        elif sys.argv[1] == "synmss":
            synmss(sys.argv[2], sys.argv[3])
        else:
            raise IndexError
    except IndexError:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    except socket.timeout:
        pass
