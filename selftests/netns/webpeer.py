#!/usr/bin/env python3
"""webpeer.py: peers that misuse the status page (sluice web), for
test_hosts.sh.

  webpeer.py hold ADDR PORT N SECONDS
      Keeps N connections to ADDR:PORT open and silent for SECONDS,
      opening again, twice a second, each one the server closes. Prints
      "holding N" once the first N are open, and at the end (or on
      SIGTERM) how many the server closed.
  webpeer.py half ADDR PORT SECONDS
      Connects, sends half a request, shuts its side down (a FIN) and
      keeps the socket for SECONDS. Prints "sent" once the FIN is out.
  webpeer.py slow ADDR PORT PATH
      Asks for PATH with a receive buffer as small as it gets, reads
      nothing for a second and closes: the server's send fills up."""
import selectors
import signal
import socket
import sys
import time


def conn(addr, port):
    s = socket.socket(socket.AF_INET6 if ":" in addr else socket.AF_INET)
    s.settimeout(5)
    s.connect((addr, port))
    s.setblocking(False)
    return s


def hold(addr, port, n, seconds):
    sel, closed, missing, stop = selectors.DefaultSelector(), 0, 0, []
    for _ in range(n):
        sel.register(conn(addr, port), selectors.EVENT_READ)
    print("holding %d" % n, flush=True)
    end = time.monotonic() + seconds
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    while time.monotonic() < end and not stop:
        for key, _ in sel.select(0.5):
            try:
                gone = key.fileobj.recv(4096) == b""
            except OSError:
                gone = True
            if gone:
                sel.unregister(key.fileobj)
                key.fileobj.close()
                closed += 1
                missing += 1
        while missing:	# (the attack renews what the server closed)
            try:
                sel.register(conn(addr, port), selectors.EVENT_READ)
            except OSError:
                break
            missing -= 1
        time.sleep(0.5)
    print("closed by the server: %d" % closed, flush=True)


def half(addr, port, seconds):
    s = conn(addr, port)
    s.sendall(b"GET /api/hosts HTTP/1.1\r\nHost: " + addr.encode())
    s.shutdown(socket.SHUT_WR)
    print("sent", flush=True)
    time.sleep(seconds)
    s.close()


def slow(addr, port, path):
    s = socket.socket(socket.AF_INET6 if ":" in addr else socket.AF_INET)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 256)
    s.settimeout(5)
    s.connect((addr, port))
    s.sendall(b"GET %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (path.encode(), addr.encode()))
    time.sleep(1)
    s.close()
    print("read nothing", flush=True)


if sys.argv[1] == "hold":
    hold(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5]))
elif sys.argv[1] == "slow":
    slow(sys.argv[2], int(sys.argv[3]), sys.argv[4])
else:
    half(sys.argv[2], int(sys.argv[3]), float(sys.argv[4]))
