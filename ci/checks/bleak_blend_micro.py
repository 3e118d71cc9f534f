#!/usr/bin/env python3
"""Cross-check with an independent central: bleak on one adapter finds the
emulated Blend Micro that `doppel advertise` hosts on another, reads its GATT
profile and receives notifications. Runs inside ci/lab.

usage: bleak_blend_micro.py CENTRAL_ADAPTER [NOTIFICATIONS]
"""
import asyncio
import sys

from bleak import BleakClient, BleakScanner
from bleak.exc import BleakError

UART = "713d0000-503e-4c75-ba94-3148f18d941e"
TX = "713d0002-503e-4c75-ba94-3148f18d941e"
RX = "713d0003-503e-4c75-ba94-3148f18d941e"
HARDWARE_REVISION = "00002a27-0000-1000-8000-00805f9b34fb"

passed = 0
failed = 0


def check(ok, what):
    global passed, failed
    print(("PASS " if ok else "FAIL ") + what, flush=True)
    if ok:
        passed += 1
    else:
        failed += 1


async def main(adapter, wanted):
    device = await BleakScanner.find_device_by_filter(
        lambda d, adv: UART in [u.lower() for u in adv.service_uuids],
        timeout=60.0,
        bluez={"adapter": adapter},
    )
    check(device is not None, f"bleak on {adapter} sees an advertisement with the UART service")
    if device is None:
        return
    print(f"found {device.address} name={device.name!r}", flush=True)
    # One attempt, as a user's script makes: the lab's bluetoothd signals
    # every connection (docs/lab.md, "Device1.Connected may never turn true").
    client = BleakClient(device, bluez={"adapter": adapter}, timeout=60.0)
    try:
        await client.connect()
    except BleakError as error:
        check(False, f"bleak connects at the first attempt ({error})")
        return
    check(True, "bleak connects at the first attempt")
    try:
        uuids = {c.uuid: c for s in client.services for c in s.characteristics}
        check(TX in uuids and "notify" in uuids[TX].properties, "UART TX is there and notifies")
        check(RX in uuids and "write-without-response" in uuids[RX].properties, "UART RX takes writes without response")
        revision = await client.read_gatt_char(HARDWARE_REVISION)
        check(revision == b"Blend Micro 1.0", f"hardware revision reads {revision!r}")
        values = []
        done = asyncio.Event()

        def received(_, data):
            values.append(bytes(data))
            if len(values) >= wanted:
                done.set()

        await client.start_notify(TX, received)
        await asyncio.wait_for(done.wait(), timeout=60.0)
        await client.stop_notify(TX)
        check(len(values) >= wanted, f"{len(values)} notifications received")
        def is_number(v):
            try:
                float(v.decode("ascii"))
                return len(v) <= 20
            except (UnicodeDecodeError, ValueError):
                return False
        bad = [v for v in values if not is_number(v)]
        check(not bad, f"every notification is an ASCII decimal of at most 20 bytes (bad: {bad[:3]})")
        await client.write_gatt_char(RX, b"hello", response=False)
        check(True, "a write without response to UART RX was accepted")
    finally:
        await client.disconnect()


if __name__ == "__main__":
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    try:
        asyncio.run(main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 100))
    except Exception as error:  # any failure of the central is a failed check
        check(False, f"bleak failed: {type(error).__name__}: {error}")
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)
