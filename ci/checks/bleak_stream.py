#!/usr/bin/env python3
"""bleak on ADAPTER finds the emulated Blend Micro (an advertisement with the
UART service), connects, subscribes to UART TX and counts COUNT
notifications. Prints when each step was done, in seconds from the start, so
a caller can hold the times to a bound. Runs inside ci/lab.

usage: bleak_stream.py ADAPTER COUNT [FIND_TIMEOUT_S]
Exit status 0 when COUNT notifications arrived, 1 otherwise.
"""
import asyncio
import sys
import time

from bleak import BleakClient, BleakScanner
from bleak.exc import BleakError

UART = "713d0000-503e-4c75-ba94-3148f18d941e"
TX = "713d0002-503e-4c75-ba94-3148f18d941e"
START = time.monotonic()


def say(what):
    print(f"{time.monotonic() - START:7.2f} s  {what}", flush=True)


async def main(adapter, wanted, find_timeout):
    device = await BleakScanner.find_device_by_filter(
        lambda d, adv: UART in [u.lower() for u in adv.service_uuids],
        timeout=find_timeout,
        bluez={"adapter": adapter},
    )
    if device is None:
        say(f"not found within {find_timeout} s")
        return 1
    say(f"found {device.address}")
    # One attempt, as a user's script makes (docs/lab.md, "Device1.Connected
    # may never turn true": the lab's bluetoothd signals every connection).
    client = BleakClient(device, bluez={"adapter": adapter}, timeout=30.0)
    try:
        await client.connect()
    except BleakError as error:
        say(f"connect failed: {error}")
        return 1
    say("connected")
    count = 0
    done = asyncio.Event()

    def received(_, data):
        nonlocal count
        count += 1
        if count == 1:
            say("first notification")
        if count >= wanted:
            done.set()

    try:
        await client.start_notify(TX, received)
        await asyncio.wait_for(done.wait(), timeout=60.0)
        say(f"{count} notifications")
    finally:
        try:
            await client.disconnect()
        except BleakError:
            pass
    return 0


if __name__ == "__main__":
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    try:
        sys.exit(asyncio.run(main(sys.argv[1], int(sys.argv[2]), float(sys.argv[3]) if len(sys.argv) > 3 else 60.0)))
    except Exception as error:  # any failure of the central is a failed run
        say(f"bleak failed: {type(error).__name__}: {error}")
        sys.exit(1)
