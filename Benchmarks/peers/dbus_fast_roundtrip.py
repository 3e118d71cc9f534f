#!/usr/bin/env python3
"""The D-Bus benchmark's peer in dbus-fast (asyncio; its marshalling compiled
with Cython): the workloads of `doppel-bench dbus`, defined as in
dbus_roundtrip.py, between two connections A and B of this process on the bus
at ADDRESS, with the same output lines.

- call: B calls A's org.doppel.Bench.Ping(u) -> u and awaits the reply before
  the next call.
- signal: A sets its Value property (ay, PAYLOAD bytes, stamped with a sequence
  number) and emits PropertiesChanged; B, on receiving it, sets its own Value
  to the bytes it got; A awaits B's PropertiesChanged before the next.
- stream: A emits PropertiesChanged in batches of BATCH, the next batch once B
  has received all of the last; figure: signals B received per second.

Run with a python3 that has dbus-fast (pip install dbus-fast; bleak depends on it).
Keep BATCH x PAYLOAD within a socket buffer (the default 64 x 512 B is): dbus-fast
5.2.0 takes EAGAIN from a full socket for a lost connection and disconnects.

usage: dbus_fast_roundtrip.py --address ADDRESS [--seconds N | --count N]
                              [--payload BYTES] [--warmup N] [--batch N] [--only LIST]
"""
import argparse
import asyncio
import math
import struct
import sys
import time

from dbus_fast import Message, MessageType
from dbus_fast.__version__ import __version__ as dbus_fast_version
from dbus_fast.aio import MessageBus
from dbus_fast.constants import PropertyAccess
from dbus_fast.service import ServiceInterface, dbus_property, method

INTERFACE = "org.doppel.Bench"
PROPERTIES = "org.freedesktop.DBus.Properties"
PATH = "/org/doppel/bench"
WORKLOADS = ("call", "signal", "stream")


class Bench(ServiceInterface):
    """org.doppel.Bench: Ping and the Value property."""

    def __init__(self):
        super().__init__(INTERFACE)
        self._value = b""

    @method()
    def Ping(self, number: "u") -> "u":  # noqa: F821 - D-Bus signature, not a name
        return number

    @dbus_property(access=PropertyAccess.READ)
    def Value(self) -> "ay":  # noqa: F821
        return self._value

    def set_value(self, value):
        """Stores Value and announces it, as Doppel's updateProperties does."""
        self._value = value
        self.emit_properties_changed({"Value": value})


class Fail(Exception):
    pass


def stamp(payload, sequence):
    payload[0:4] = struct.pack("<I", sequence & 0xFFFFFFFF)


def sequence_of(value):
    return struct.unpack_from("<I", value)[0] if len(value) >= 4 else None


def percentile(sorted_ns, p):
    if not sorted_ns:
        return float("nan")
    rank = max(1, math.ceil(len(sorted_ns) * p))
    return sorted_ns[min(len(sorted_ns), rank) - 1] / 1000


def report(workload, latencies, elapsed_ns):
    ordered = sorted(latencies)
    print(f"dbus.{workload}.roundtrips_per_s {len(latencies) * 1e9 / elapsed_ns:.1f}")
    print(f"dbus.{workload}.p50_us {percentile(ordered, 0.50):.1f}")
    print(f"dbus.{workload}.p99_us {percentile(ordered, 0.99):.1f}")
    print(f"dbus.{workload}.roundtrips {len(latencies)}")


def spent(args, elapsed_ns, done):
    return done >= args.count if args.count else elapsed_ns >= args.seconds * 1e9


class Subscription:
    """PropertiesChanged from one sender at PATH, as a match rule on the bus and a message handler."""

    def __init__(self, bus, sender, on_value):
        self.bus, self.sender, self.on_value = bus, sender, on_value
        self.rule = (f"type='signal',sender='{sender}',interface='{PROPERTIES}',"
                     f"member='PropertiesChanged',path='{PATH}'")

    def handle(self, message):
        if (message.message_type is MessageType.SIGNAL and message.sender == self.sender
                and message.path == PATH and message.member == "PropertiesChanged"
                and message.interface == PROPERTIES):
            self.on_value(message.body[1]["Value"].value)

    async def match(self, member):
        reply = await self.bus.call(Message(
            destination="org.freedesktop.DBus", path="/org/freedesktop/DBus", interface="org.freedesktop.DBus",
            member=member, signature="s", body=[self.rule]))
        if reply.message_type is MessageType.ERROR:
            raise Fail(f"{member} failed: {reply.body}")

    async def __aenter__(self):
        await self.match("AddMatch")
        self.bus.add_message_handler(self.handle)
        return self

    async def __aexit__(self, *exc):
        self.bus.remove_message_handler(self.handle)
        await self.match("RemoveMatch")


class Benchmark:
    def __init__(self, args, a, b):
        self.args, self.a, self.b = args, a, b
        self.bench_a, self.bench_b = Bench(), Bench()
        a.export(PATH, self.bench_a)
        b.export(PATH, self.bench_b)

    async def measure(self, round_trip):
        """Warms up, then times round trips until the budget is spent."""
        sequence = 0
        for _ in range(self.args.warmup):
            await round_trip(sequence)
            sequence += 1
        latencies = []
        start = end = time.perf_counter_ns()
        while True:
            await round_trip(sequence)
            now = time.perf_counter_ns()
            latencies.append(now - end)  # from the last one's end, as in doppel-bench
            end = now
            sequence += 1
            if spent(self.args, end - start, len(latencies)):
                return latencies, end - start

    async def calls(self):
        destination = self.a.unique_name

        async def round_trip(sequence):
            reply = await self.b.call(Message(
                destination=destination, path=PATH, interface=INTERFACE, member="Ping",
                signature="u", body=[sequence & 0xFFFFFFFF]))
            if reply.message_type is not MessageType.METHOD_RETURN or reply.body != [sequence & 0xFFFFFFFF]:
                raise Fail(f"Ping({sequence}) returned {reply.body}")

        report("call", *await self.measure(round_trip))

    async def signals(self):
        loop = asyncio.get_running_loop()
        payload = bytearray(i & 0xFF for i in range(self.args.payload))
        pending = {}

        def a_received(value):
            waiter = pending.pop("waiter", None)
            if waiter and not waiter.done():
                waiter.set_result(value)

        async with Subscription(self.b, self.a.unique_name, lambda value: self.bench_b.set_value(value)), \
                Subscription(self.a, self.b.unique_name, a_received):
            async def round_trip(sequence):
                stamp(payload, sequence)
                pending["waiter"] = waiter = loop.create_future()
                self.bench_a.set_value(bytes(payload))
                value = await waiter
                if len(value) != len(payload) or sequence_of(value) != sequence & 0xFFFFFFFF:
                    raise Fail(f"echo {sequence} is not what was sent")

            report("signal", *await self.measure(round_trip))

    async def stream(self):
        loop = asyncio.get_running_loop()
        batch = self.args.batch
        payload = bytearray(i & 0xFF for i in range(self.args.payload))
        state = {"sent": 0, "received": 0, "waiter": None}

        def b_received(value):
            if sequence_of(value) != state["received"] & 0xFFFFFFFF:
                state["waiter"].set_exception(Fail(f"signal {state['received']} arrived out of order"))
                return
            state["received"] += 1
            if state["received"] % batch == 0:
                state["waiter"].set_result(state["received"])

        async def send_batch():
            state["waiter"] = loop.create_future()
            for _ in range(batch):
                stamp(payload, state["sent"])
                self.bench_a.set_value(bytes(payload))
                state["sent"] += 1
            if await state["waiter"] != state["sent"]:
                raise Fail(f"B stopped receiving after {state['sent'] - batch} signals")

        async with Subscription(self.b, self.a.unique_name, b_received):
            for _ in range((self.args.warmup + batch - 1) // batch):
                await send_batch()
            warm = state["sent"]
            start = time.perf_counter_ns()
            while True:
                await send_batch()
                elapsed = time.perf_counter_ns() - start
                if spent(self.args, elapsed, state["sent"] - warm):
                    break
        count = state["sent"] - warm
        print(f"dbus.stream.signals_per_s {count * 1e9 / elapsed:.1f}")
        print(f"dbus.stream.signals {count}")


async def run(args, chosen):
    a = await MessageBus(bus_address=args.address).connect()
    b = await MessageBus(bus_address=args.address).connect()
    bench = Benchmark(args, a, b)
    budget = f"{args.count} round trips" if args.count else f"{args.seconds} s"
    print(f"# dbus_fast_roundtrip.py (dbus-fast {dbus_fast_version}, asyncio): payload {args.payload} B, "
          f"{budget} per workload, warmup {args.warmup}")
    for workload in WORKLOADS:
        if workload in chosen:
            await getattr(bench, {"call": "calls", "signal": "signals", "stream": "stream"}[workload])()
    a.disconnect()
    b.disconnect()


def main():
    parser = argparse.ArgumentParser(description="D-Bus round trips in dbus-fast (peer of doppel-bench dbus)")
    parser.add_argument("--address", required=True)
    budget = parser.add_mutually_exclusive_group()
    budget.add_argument("--seconds", type=float, default=5.0)
    budget.add_argument("--count", type=int, default=0)
    parser.add_argument("--payload", type=int, default=512)
    parser.add_argument("--warmup", type=int, default=500)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--only", default=",".join(WORKLOADS))
    args = parser.parse_args()
    chosen = args.only.split(",")
    if any(w not in WORKLOADS for w in chosen):
        parser.error(f"--only takes some of {', '.join(WORKLOADS)}")
    if args.payload < 4 or args.warmup < 0 or args.batch < 1 or args.count < 0 or args.seconds <= 0:
        parser.error("--payload needs at least 4, --batch and --seconds more than 0, --count and --warmup no less")
    asyncio.run(run(args, chosen))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
