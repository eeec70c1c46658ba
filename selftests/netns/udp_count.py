#!/usr/bin/python3
"""udp_count.py ADDR PORT FIRST IDLE: count the UDP datagrams to ADDR:PORT,
waiting up to FIRST seconds for the first and IDLE after each; print the
count."""
import socket
import sys

s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
s.bind((sys.argv[1], int(sys.argv[2])))
s.settimeout(float(sys.argv[3]))
n = 0
try:
    while True:
        s.recvfrom(2048)
        n += 1
        s.settimeout(float(sys.argv[4]))
except socket.timeout:
    pass
print(n, flush=True)
