"""The Internet checksum (RFC 1071), for the test scripts that build packets
by hand (frag_reverse.py, tunpeer.py)."""
import struct


def csum(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF
