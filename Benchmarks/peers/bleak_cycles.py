#!/usr/bin/env python3
"""Connect cycles with bleak, the way a user's test suite would run them:
each cycle scans for the device by name, connects (one attempt: a failure
counts), subscribes to a characteristic, optionally writes a command that
makes the device answer, waits for one notification, and disconnects.

usage: bleak_cycles.py ADAPTER NAME NOTIFY_UUID CYCLES [--write UUID HEX] [--label LABEL]
                       [--cycle-limit SECONDS]

Prints one line per failed cycle (its kind and message), then
"LABEL.figure value" lines: cycles, failed, failures by kind, and the
cycle times (p50, p90, max, in seconds) of the cycles that succeeded, and
"LABEL.disconnect_s S" for every disconnect() made, whether it returned or
raised.
Exit status 0 when no cycle failed.
"""
import argparse
import asyncio
import io
import statistics
import sys
import time
import traceback

from bleak import BleakClient, BleakScanner
from bleak.exc import BleakCharacteristicNotFoundError, BleakError


# How long each disconnect() took, in seconds (ci/bench-disconnect reads them).
disconnect_times = []


async def cycle(adapter, name, notify, write):
    """One cycle; returns None when it succeeded, else (kind, message)."""
    device = await BleakScanner.find_device_by_name(name, timeout=20.0, bluez={"adapter": adapter})
    if device is None:
        return ("not-found", f"no advertisement named {name!r} within 20 s")
    client = BleakClient(device, bluez={"adapter": adapter}, timeout=20.0)
    try:
        await client.connect()
    except (BleakError, asyncio.TimeoutError) as error:
        return ("connect", f"{type(error).__name__}: {error}")
    try:
        arrived = asyncio.Event()
        await client.start_notify(notify, lambda _, data: arrived.set())
        if write:
            await client.write_gatt_char(write[0], write[1], response=True)
        try:
            await asyncio.wait_for(arrived.wait(), timeout=10.0)
        except asyncio.TimeoutError:
            return ("no-notification", "no notification within 10 s of subscribing")
        return None
    except BleakCharacteristicNotFoundError as error:
        # The device's characteristic is in bluetoothd's database but bleak never saw its
        # object: BlueZ set ServicesResolved before exporting the services on D-Bus (BlueZ
        # issue 1489); seen on a central's first connection to a device.
        return ("not-exported", f"{type(error).__name__}: {error}")
    except (BleakError, EOFError) as error:
        return ("gatt", f"{type(error).__name__}: {error}")
    finally:
        start = time.monotonic()
        try:
            await client.disconnect()
        except (BleakError, EOFError):
            pass
        finally:
            # Timed whether it returns or raises (bleak gives up 10 s after
            # Disconnect returns without Connected turning false).
            disconnect_times.append(time.monotonic() - start)


def raised_at(error):
    """Where ERROR came from: the cycle's line that awaited, and the innermost
    frame (a bare TimeoutError says nothing of which await timed out)."""
    frames = traceback.extract_tb(error.__traceback__)
    ours = [frame for frame in frames if frame.name == "cycle"]
    picked = ([ours[-1]] if ours else []) + ([frames[-1]] if frames else [])
    return " / ".join(f"{frame.name}:{frame.lineno} {frame.line or ''}".strip() for frame in picked) or "unknown"


async def bounded(limit, *arguments):
    """A cycle that has not ended within LIMIT seconds fails as "hung", with
    the line it was waiting at: every await of a cycle should be bounded by
    bleak or here, and one was not (a CI lab once waited 23 minutes)."""
    task = asyncio.ensure_future(cycle(*arguments))
    done, _ = await asyncio.wait({task}, timeout=limit)
    if task in done:
        return task.result()
    stack = io.StringIO()
    task.print_stack(file=stack)
    lines = [line.strip() for line in stack.getvalue().splitlines() if line.strip()]
    task.cancel()
    try:
        await asyncio.wait_for(task, timeout=10.0)
    except BaseException:  # cancelled, or what cancelling it raised: the cycle failed either way
        pass
    return ("hung", f"no end within {limit:.0f} s, waiting at: {' / '.join(lines[-2:])}")


async def main(options):
    write = (options.write[0], bytes.fromhex(options.write[1])) if options.write else None
    times, failures = [], {}
    for number in range(1, options.cycles + 1):
        start = time.monotonic()
        try:
            outcome = await bounded(options.cycle_limit, options.adapter, options.name, options.notify, write)
        except Exception as error:  # anything else bleak raises is a failed cycle too
            outcome = ("other", f"{type(error).__name__}: {error} (raised at: {raised_at(error)})")
        if outcome is None:
            times.append(time.monotonic() - start)
        else:
            failures[outcome[0]] = failures.get(outcome[0], 0) + 1
            print(f"{options.label}: cycle {number} failed ({outcome[0]}): {outcome[1]}", flush=True)
        if number % 25 == 0:
            print(f"{options.label}: {number} cycles, {sum(failures.values())} failed so far", flush=True)
        await asyncio.sleep(0.5)
    label = options.label
    print(f"{label}.cycles {options.cycles}")
    print(f"{label}.failed {sum(failures.values())}")
    for kind, count in sorted(failures.items()):
        print(f"{label}.failed.{kind} {count}")
    if times:
        ordered = sorted(times)
        print(f"{label}.cycle_p50_s {statistics.median(ordered):.2f}")
        print(f"{label}.cycle_p90_s {ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]:.2f}")
        print(f"{label}.cycle_max_s {ordered[-1]:.2f}")
    for seconds in disconnect_times:
        print(f"{label}.disconnect_s {seconds:.3f}")
    return 1 if failures else 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("adapter")
    parser.add_argument("name")
    parser.add_argument("notify")
    parser.add_argument("cycles", type=int)
    parser.add_argument("--write", nargs=2, metavar=("UUID", "HEX"))
    parser.add_argument("--label", default="bleak")
    parser.add_argument("--cycle-limit", type=float, default=90.0, help="seconds a cycle may take (default 90)")
    sys.exit(asyncio.run(main(parser.parse_args())))
