#!/usr/bin/env python3
"""How long bleak's disconnect() takes: each cycle scans for the device by
name, connects, subscribes, waits for the first notification, then times
disconnect() (which returns once BlueZ has said on D-Bus that the device is
no longer connected, and raises TimeoutError after 10 s without that).

usage: bleak_disconnect.py ADAPTER NAME NOTIFY_UUID CYCLES

Prints one line per cycle ("cycle N: disconnect S s ok|ERROR"), then
"disconnect_s S" for every cycle whose set-up succeeded. Exit status 1
when a set-up failed.
"""
import asyncio
import sys
import time

from bleak import BleakClient, BleakScanner


async def main(adapter, name, notify, cycles):
    status = 0
    for number in range(1, cycles + 1):
        device = await BleakScanner.find_device_by_name(name, timeout=20.0, bluez={"adapter": adapter})
        if device is None:
            print(f"cycle {number}: no advertisement named {name!r} within 20 s", flush=True)
            status = 1
            continue
        client = BleakClient(device, bluez={"adapter": adapter}, timeout=20.0)
        try:
            await client.connect()
            arrived = asyncio.Event()
            await client.start_notify(notify, lambda _, data: arrived.set())
            await asyncio.wait_for(arrived.wait(), timeout=10.0)
        except Exception as error:  # a set-up that failed times nothing
            print(f"cycle {number}: set-up failed: {type(error).__name__}: {error}", flush=True)
            status = 1
            try:
                await client.disconnect()
            except Exception:
                pass
            continue
        start = time.monotonic()
        try:
            await client.disconnect()
            outcome = "ok"
        except Exception as error:
            outcome = type(error).__name__
        seconds = time.monotonic() - start
        print(f"cycle {number}: disconnect {seconds:.2f} s {outcome}", flush=True)
        print(f"disconnect_s {seconds:.3f}", flush=True)
        await asyncio.sleep(0.5)
    return status


if __name__ == "__main__":
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    sys.exit(asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]))))
