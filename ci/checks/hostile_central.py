#!/usr/bin/env python3
"""A hostile central (bleak): finds the device named NAME on ADAPTER,
connects, storms subscriptions on every characteristic that notifies or
indicates, then writes garbage to every writable characteristic: empty, one
byte, 512 bytes, invalid UTF-8, half a MethodSCRIPT, a script of 200 `var`
lines (in 240-byte writes, as a serial-port client sends it), a 400-digit
JSON number, E4 start commands of the wrong length. For each write it prints
how the device answered: accepted, refused with an ATT error (bleak's
message), and what it notified within 0.4 s (the firmware's own answer).

Then it checks the link is still up and a read still works. Exit status 0
when the device kept serving, 1 when it dropped the link or stopped
answering. Runs inside ci/lab.

usage: hostile_central.py ADAPTER NAME
"""
import asyncio
import sys

from bleak import BleakClient, BleakScanner
from bleak.exc import BleakError

PAYLOADS = [
    ("empty", [b""]),
    ("1 byte", [b"\x00"]),
    ("512 bytes", [bytes([0xA5]) * 512]),
    ("invalid UTF-8", [b"\xc3\x28\xa0\xa1\xff\xfe\n"]),
    ("half a MethodSCRIPT", [b"e\nvar c\nvar p\nset_pgstat_chan 0\nset_pgstat_mode 2\nset_max_ba"]),
    ("200 var lines", None),  # built below, sent in pieces
    ("400-digit JSON number", [b'{"n": ' + b"9" * 400 + b"}"]),
    ("E4 start, 3 bytes", [b"\x01\x00\x00"]),
    ("E4 start, 11 bytes", [b"\x01" + bytes(10)]),
]
script = b"e\n" + b"".join(b"var v%d\n" % i for i in range(200)) + b"\n"
PAYLOADS[5] = ("200 var lines", [script[i : i + 240] for i in range(0, len(script), 240)])


def show(data, limit=48):
    text = bytes(data[:limit])
    shown = text.decode("ascii") if all(32 <= b < 127 or b in (10, 13) for b in text) else text.hex()
    return repr(shown) + ("…" if len(data) > limit else "")


async def main(adapter, name):
    device = await BleakScanner.find_device_by_name(name, timeout=60.0, bluez={"adapter": adapter})
    if device is None:
        print(f"FAIL no device named {name!r} on {adapter} within 60 s")
        return 1
    client = BleakClient(device, bluez={"adapter": adapter}, timeout=30.0)
    try:
        await client.connect()  # one attempt (docs/lab.md, "Device1.Connected may never turn true")
    except BleakError as error:
        print(f"FAIL connect: {error}")
        return 1
    failed = 0
    try:
        # The device's own services: not bluetoothd's GAP (1800) and GATT (1801) services.
        own = [s for s in client.services if not s.uuid.startswith(("00001800-", "00001801-"))]
        characteristics = [c for s in own for c in s.characteristics]
        notifying = [c for c in characteristics if {"notify", "indicate"} & set(c.properties)]
        writable = [c for c in characteristics if {"write", "write-without-response"} & set(c.properties)]
        readable = [c for c in characteristics if "read" in c.properties]
        received = []
        for characteristic in notifying:  # the storm: on, off, on, … 20 times, then on for good
            for _ in range(20):
                await client.start_notify(characteristic, lambda c, data: received.append((c.uuid, bytes(data))))
                await client.stop_notify(characteristic)
            await client.start_notify(characteristic, lambda c, data: received.append((c.uuid, bytes(data))))
        print(f"subscription storm: 20× on and off on {len(notifying)} characteristic(s), then on")
        await asyncio.sleep(1.0)
        received.clear()
        for characteristic in writable:
            response = "write" in characteristic.properties
            if response and "write-without-response" in characteristic.properties:
                print(
                    f"note: {characteristic.uuid} also takes writes without response, so bluetoothd acknowledges"
                    " even a write request before the device answers (BlueZ's gatt-database); the device's"
                    " refusals reach the central only as its own replies"
                )
            for label, pieces in PAYLOADS:
                received.clear()
                outcome = "accepted"
                try:
                    for piece in pieces:
                        await client.write_gatt_char(characteristic, piece, response=response)
                except BleakError as error:
                    outcome = f"refused: {error}"
                if not client.is_connected:
                    print(f"FAIL the device dropped the link after {label} to {characteristic.uuid}")
                    return 1
                await asyncio.sleep(0.4)
                answers = [show(data) for _, data in received[:3]]
                more = f" (+{len(received) - 3})" if len(received) > 3 else ""
                print(
                    f"{characteristic.description or characteristic.uuid} ({'with' if response else 'without'} response)"
                    f" | {label} | {outcome} | {', '.join(answers) + more if answers else 'no notification'}"
                )
        if not client.is_connected:
            print("FAIL the link is down after the garbage")
            failed += 1
        for characteristic in readable:
            try:
                value = await client.read_gatt_char(characteristic)
                print(f"PASS after the garbage, {characteristic.description or characteristic.uuid} reads {show(value)}")
            except BleakError as error:
                print(f"FAIL after the garbage, reading {characteristic.uuid} failed: {error}")
                failed += 1
        print(f"{'PASS' if not failed else 'FAIL'} the device kept the link and kept serving")
    finally:
        try:
            await client.disconnect()
        except BleakError:
            pass
    return 1 if failed else 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    try:
        sys.exit(asyncio.run(main(sys.argv[1], sys.argv[2])))
    except Exception as error:  # the central itself failing is a failed check too
        print(f"FAIL hostile central: {type(error).__name__}: {error}")
        sys.exit(1)
