#!/usr/bin/env python3
"""A bleak central for an Empatica E4 that logs every notification it
receives, for ci/checks/capture-replay: the same central runs against the
emulated E4 and against the device `doppel import` made from the capture of
that run, and the two logs are compared (ci/checks/compare_notification_logs.py).

It finds the wristband by name (DOPPEL_DEVICE_NAME, as `doppel test` sets it)
on ADAPTER, connects, subscribes to every sensor stream, writes the start command
with a fixed clock (so both runs write the same bytes), and logs until the
link drops; then it connects again, as an app does, streams SECONDS_AFTER
more (2 s unless told) and disconnects.

usage: bleak_e4_log.py ADAPTER OUT.csv [SECONDS_AFTER]
OUT.csv: connection,time,characteristic,value — time in seconds on the
monotonic clock at the callback, characteristic the 16-bit UUID, value hex;
a row with characteristic "lost" marks the link dropping.
Exit status 0 when the first link dropped and a second one streamed, 1 otherwise.
"""
import asyncio
import os
import struct
import sys
import time

from bleak import BleakClient, BleakScanner
from bleak.exc import BleakError

SENSORS = "00003ea0-0000-1000-8000-00805f9b34fb"
# BVP, acceleration, temperature, EDA and IBI: every sensor stream.
SENSOR_STREAMS = [f"00003e{short}-0000-1000-8000-00805f9b34fb" for short in ("a1", "a3", "a6", "a8", "aa")]
COMMAND = "00003e71-0000-1000-8000-00805f9b34fb"
# 0x01 + uint32 Unix seconds (2023-11-14 22:13:20 UTC): a fixed clock, so the
# replayed device sees the same write as the original did.
START = bytes([0x01]) + struct.pack("<I", 1_700_000_000)
BEGIN = time.monotonic()


def say(what):
    print(f"{time.monotonic() - BEGIN:7.2f} s  {what}", flush=True)


async def find(adapter, name, timeout):
    return await BleakScanner.find_device_by_filter(
        lambda device, adv: (adv.local_name or device.name or "").startswith(name),
        timeout=timeout,
        bluez={"adapter": adapter},
    )


async def connect(adapter, device, attempts=3):
    # BlueZ sometimes drops a fresh link while services resolve; an app retries.
    for attempt in range(1, attempts + 1):
        lost = asyncio.Event()
        client = BleakClient(
            device, bluez={"adapter": adapter}, timeout=30.0, disconnected_callback=lambda _, lost=lost: lost.set()
        )
        try:
            await client.connect()
            return client, lost
        except (BleakError, asyncio.TimeoutError) as error:
            say(f"connect attempt {attempt} failed: {error}")
            if attempt == attempts:
                raise
            await asyncio.sleep(1)


async def main(adapter, out, seconds_after):
    name = os.environ.get("DOPPEL_DEVICE_NAME", "Empatica E4")
    rows = []
    dropped = False
    for number in (1, 2):
        device = await find(adapter, name, timeout=30.0)
        if device is None:
            say(f"connection {number}: no device named {name!r} within 30 s")
            break
        client, lost = await connect(adapter, device)
        say(f"connection {number}: connected to {device.address}")

        def received(characteristic, data, number=number):
            rows.append((number, time.monotonic(), characteristic.uuid[4:8], bytes(data).hex()))

        for stream in SENSOR_STREAMS:
            await client.start_notify(stream, received)
        await client.write_gatt_char(COMMAND, START, response=True)
        say(f"connection {number}: subscribed, start command written")
        if number == 1:
            try:
                await asyncio.wait_for(lost.wait(), timeout=60.0)
            except asyncio.TimeoutError:
                say("connection 1: the link did not drop within 60 s")
                await client.disconnect()
                break
            rows.append((1, time.monotonic(), "lost", ""))
            dropped = True
            write(out, list(rows))
            say(f"connection 1: link lost after {sum(1 for r in rows if r[0] == 1) - 1} notifications")
        else:
            await asyncio.sleep(seconds_after)
            streamed = sum(1 for r in rows if r[0] == 2)
            say(f"connection 2: {streamed} notifications in {seconds_after:g} s")
            write(out, list(rows))
            await client.disconnect()
            return 0 if dropped and streamed > 0 else 1
    write(out, rows)
    return 1


def write(out, rows):
    """Writes the log (before the last disconnect, which a scenario's end may cut short)."""
    with open(out, "w") as file:
        file.write("connection,time,characteristic,value\n")
        for number, at, characteristic, value in rows:
            file.write(f"{number},{at:.6f},{characteristic},{value}\n")


if __name__ == "__main__":
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    sys.exit(asyncio.run(main(sys.argv[1], sys.argv[2], float(sys.argv[3]) if len(sys.argv) == 4 else 2.0)))
