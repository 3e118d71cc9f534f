"""A small Empatica E4 central on bleak, written the way an app's BLE layer
is: find the wristband, connect, write the start command, subscribe to the
sensors, decode BVP, and — unless told not to — connect again and start
over when the link drops.

Doppel's `doppel test` runs it against an emulated E4 and tells it where to
look through the environment (DOPPEL_CENTRAL_ADAPTER, DOPPEL_DEVICE_NAME).
The byte layouts are those of Doppel's E4 profile (Peripherals/E4/README.md).
"""
import asyncio
import os
import struct
import time

from bleak import BleakClient, BleakScanner
from bleak.exc import BleakError

SENSORS = "00003ea0-0000-1000-8000-00805f9b34fb"
BVP = "00003ea1-0000-1000-8000-00805f9b34fb"
EDA = "00003ea8-0000-1000-8000-00805f9b34fb"
COMMAND = "00003e71-0000-1000-8000-00805f9b34fb"


def decode_bvp(data):
    """BVP packet: uint32 index of the first sample, then int16 samples in 1/16 units."""
    if len(data) < 6 or (len(data) - 4) % 2:
        raise ValueError(f"a BVP packet of {len(data)} bytes")
    index = struct.unpack_from("<I", data, 0)[0]
    count = (len(data) - 4) // 2
    samples = struct.unpack_from(f"<{count}h", data, 4)
    return index, [s / 16 for s in samples]


def log(message):
    """A line of progress, with the wall clock's time (to line up with doppel's log)."""
    print(f"{time.time():.3f} {message}", flush=True)


def start_command(unix_seconds=None):
    """0x01 + uint32 Unix seconds: starts streaming and sets the device clock."""
    return bytes([0x01]) + struct.pack("<I", int(unix_seconds if unix_seconds is not None else time.time()))


class E4Session:
    """Streams from one wristband for a while; counts what arrives per connection."""

    def __init__(self, adapter, name, reconnect=True, restart=True):
        self.adapter = adapter
        self.name = name
        self.reconnect = reconnect
        # Whether to write the start command again after reconnecting: the
        # wristband stops streaming when the link drops.
        self.restart = restart
        self.connections = 0
        self.disconnections = 0
        self.bvp = []  # (connection number, session index, value)
        self.eda_packets = 0
        self.malformed = 0

    async def find(self, timeout):
        return await BleakScanner.find_device_by_filter(
            lambda device, adv: (adv.local_name or device.name or "").startswith(self.name)
            and SENSORS in [u.lower() for u in adv.service_uuids],
            timeout=timeout,
            bluez={"adapter": self.adapter},
        )

    async def connect(self, device, attempts=3):
        # BlueZ sometimes drops a fresh link while services resolve; an app retries.
        for attempt in range(1, attempts + 1):
            lost = asyncio.Event()
            client = BleakClient(
                device, bluez={"adapter": self.adapter}, timeout=30.0, disconnected_callback=lambda _: lost.set()
            )
            try:
                await client.connect()
                return client, lost
            except (BleakError, asyncio.TimeoutError) as error:
                log(f"connect attempt {attempt} failed: {error}")
                if attempt == attempts:
                    raise
                await asyncio.sleep(1)

    async def stream(self, seconds):
        """Streams for `seconds`, reconnecting after a lost link when allowed."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            log(f"scanning for {self.name} on {self.adapter}")
            device = await self.find(timeout=max(1.0, deadline - time.monotonic()))
            if device is None:
                continue
            log(f"found {device.address}")
            client, lost = await self.connect(device)
            self.connections += 1
            number = self.connections
            log(f"connected ({number}) to {device.address}")
            try:
                def on_bvp(_, data, number=number):
                    try:
                        index, values = decode_bvp(bytes(data))
                    except ValueError:
                        self.malformed += 1
                        return
                    self.bvp.extend((number, index + i, v) for i, v in enumerate(values))

                def on_eda(_, data):
                    self.eda_packets += 1

                await client.start_notify(BVP, on_bvp)
                await client.start_notify(EDA, on_eda)
                if number == 1 or self.restart:
                    await client.write_gatt_char(COMMAND, start_command(), response=True)
                remaining = deadline - time.monotonic()
                if remaining > 0:
                    try:
                        await asyncio.wait_for(lost.wait(), timeout=remaining)
                    except asyncio.TimeoutError:
                        pass
            except BleakError as error:
                log(f"connection {number}: {error}")
            if lost.is_set():
                self.disconnections += 1
                log(f"link {number} lost")
                if not self.reconnect:
                    break
            else:
                await client.disconnect()
        return self


def from_environment(**options):
    adapter = os.environ.get("DOPPEL_CENTRAL_ADAPTER", "hci1")
    name = os.environ.get("DOPPEL_DEVICE_NAME", "Empatica E4")
    return E4Session(adapter, name, **options)
