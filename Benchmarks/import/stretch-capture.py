#!/usr/bin/env python3
"""Stretches a real btsnoop (monitor) capture into a long one for the import
benchmark: the records from the first to the last notification on HANDLE
(with whatever else the capture has between them: the other links' traffic
too) are repeated, in order and with their own spacing, with advancing
timestamps, until the file has the size asked for; the records after them
(the disconnections) follow, moved on by the same time.

    stretch-capture.py SOURCE DESTINATION MEGABYTES HANDLE
"""
import struct
import sys

source, destination, megabytes, handle = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4], 0)
data = open(source, "rb").read()
records = []
position = 16
while position < len(data):
    original, included, flags, drops, time = struct.unpack(">IIIIq", data[position:position + 24])
    records.append((flags, time, data[position + 24:position + 24 + included]))
    position += 24 + included


def notification(flags, body):
    """An ACL packet received on HANDLE that starts an ATT notification (single or multiple) or indication."""
    if flags & 0xFFFF != 5 or len(body) < 9:
        return False
    word, = struct.unpack("<H", body[:2])
    return word & 0x0FFF == handle and body[8] in (0x1B, 0x1D, 0x23)


marks = [i for i, (flags, _, body) in enumerate(records) if notification(flags, body)]
if not marks:
    sys.exit(f"no notifications on handle {handle:#x} in {source}")
first, last = marks[0], marks[-1]
block = records[first:last + 1]
period = block[-1][1] - block[0][1] + (block[-1][1] - block[-2][1] if len(block) > 1 else 10_000)
target = int(megabytes * 1_000_000)


def record(flags, time, body):
    return struct.pack(">IIIIq", len(body), len(body), flags, 0, time) + body


with open(destination, "wb") as out:
    out.write(data[:16])
    size = 16
    for flags, time, body in records[:first]:
        size += out.write(record(flags, time, body))
    shift = 0
    tail = sum(24 + len(body) for _, _, body in records[last + 1:])
    while size + tail < target:
        for flags, time, body in block:
            size += out.write(record(flags, time + shift, body))
        shift += period
    for flags, time, body in records[last + 1:]:
        size += out.write(record(flags, time + shift - period, body))
print(f"{destination}: {size / 1e6:.1f} MB, {shift / 1e6 / 60:.0f} min of the session's notifications")
