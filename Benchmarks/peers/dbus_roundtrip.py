#!/usr/bin/env python3
"""The D-Bus benchmark's peer in dbus-python (GLib main loop): the workloads of
`doppel-bench dbus`, defined the same way, between two connections A and B of
this process on the bus at ADDRESS, with the same output lines.

- call: B calls A's org.doppel.Bench.Ping(u) -> u asynchronously and sends the
  next call from the reply handler. A round trip is one call and its reply.
- signal: A emits PropertiesChanged with its Value property (ay, PAYLOAD bytes,
  stamped with a sequence number); B, on receiving it, sets its own Value to
  the bytes it got and emits PropertiesChanged; A sends the next once it has
  received B's. A round trip is the two signals.
- stream: A emits PropertiesChanged in batches of BATCH, the next batch once B
  has received all of the last; figure: signals B received per second.

Run with Debian's /usr/bin/python3 (python3-dbus, python3-gi).

usage: dbus_roundtrip.py --address ADDRESS [--seconds N | --count N]
                         [--payload BYTES] [--warmup N] [--batch N] [--only LIST]
"""
import argparse
import math
import struct
import sys
import time

import dbus
import dbus.mainloop.glib
import dbus.service
from gi.repository import GLib

INTERFACE = "org.doppel.Bench"
PROPERTIES = "org.freedesktop.DBus.Properties"
PATH = "/org/doppel/bench"
WORKLOADS = ("call", "signal", "stream")


class Bench(dbus.service.Object):
    """org.doppel.Bench at PATH: Ping (on A only) and the Value property."""

    def __init__(self, connection):
        dbus.service.Object.__init__(self, connection, PATH)
        self.value = dbus.ByteArray(b"")

    @dbus.service.method(INTERFACE, in_signature="u", out_signature="u")
    def Ping(self, number):
        return number

    @dbus.service.method(PROPERTIES, in_signature="ss", out_signature="v")
    def Get(self, interface, name):
        if interface != INTERFACE or name != "Value":
            raise dbus.exceptions.DBusException("no such property", name="org.freedesktop.DBus.Error.UnknownProperty")
        return self.value

    @dbus.service.method(PROPERTIES, in_signature="s", out_signature="a{sv}")
    def GetAll(self, interface):
        return {"Value": self.value} if interface == INTERFACE else {}

    @dbus.service.signal(PROPERTIES, signature="sa{sv}as")
    def PropertiesChanged(self, interface, changed, invalidated):
        pass

    def set_value(self, value):
        """Stores Value and announces it, as Doppel's updateProperties does."""
        self.value = dbus.ByteArray(value)
        self.PropertiesChanged(INTERFACE, {"Value": self.value}, dbus.Array([], signature="s"))


class Budget:
    def __init__(self, seconds, count):
        self.seconds, self.count = seconds, count

    def spent(self, elapsed_ns, done):
        return done >= self.count if self.count else elapsed_ns >= self.seconds * 1e9

    def __str__(self):
        return f"{self.count} round trips" if self.count else f"{self.seconds} s"


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


class Fail(Exception):
    pass


class Benchmark:
    def __init__(self, args):
        self.args = args
        self.budget = Budget(args.seconds, args.count)
        self.loop = GLib.MainLoop()
        self.error = None
        mainloop = dbus.mainloop.glib.DBusGMainLoop()
        self.a = dbus.bus.BusConnection(args.address, mainloop=mainloop)
        self.b = dbus.bus.BusConnection(args.address, mainloop=mainloop)
        self.a_name, self.b_name = self.a.get_unique_name(), self.b.get_unique_name()
        self.object_a, self.object_b = Bench(self.a), Bench(self.b)

    def run_loop(self):
        """Runs the main loop until a workload quits it; re-raises its failure."""
        self.loop.run()
        if self.error:
            raise self.error

    def stop(self, error=None):
        self.error = error
        self.loop.quit()

    def guarded(self, function):
        """Wraps a callback so that an exception stops the loop instead of vanishing into GLib."""
        def call(*args, **kwargs):
            try:
                function(*args, **kwargs)
            except Exception as error:  # noqa: BLE001 - reported by run_loop
                self.stop(error)
        return call

    def measure(self, start_round_trip):
        """Warms up, then times round trips until the budget is spent. start_round_trip(sequence,
        done) starts one and calls done() when it is complete."""
        latencies = []
        state = {"sequence": 0, "warm": 0, "start": 0, "end": 0}

        def next_one():
            start_round_trip(state["sequence"], finished)

        def finished():
            now = time.perf_counter_ns()
            state["sequence"] += 1
            if state["warm"] < self.args.warmup:
                state["warm"] += 1
                if state["warm"] == self.args.warmup:
                    state["start"] = state["end"] = time.perf_counter_ns()
                next_one()
                return
            latencies.append(now - state["end"])  # from the last one's end, as in doppel-bench
            state["end"] = now
            if self.budget.spent(now - state["start"], len(latencies)):
                self.stop()
            else:
                next_one()

        if self.args.warmup == 0:
            state["start"] = state["end"] = time.perf_counter_ns()
        GLib.idle_add(lambda: next_one() and False)
        self.run_loop()
        return latencies, state["end"] - state["start"]

    def calls(self):
        def round_trip(sequence, done):
            def replied(number):
                if number != sequence:
                    raise Fail(f"Ping({sequence}) returned {number}")
                done()

            self.b.call_async(
                self.a_name, PATH, INTERFACE, "Ping", "u", (dbus.UInt32(sequence),),
                self.guarded(replied), self.guarded(lambda error: self.stop(error)))

        report("call", *self.measure(round_trip))

    def signals(self):
        payload = bytearray(i & 0xFF for i in range(self.args.payload))
        pending = {}

        def b_received(interface, changed, invalidated):
            self.object_b.set_value(bytes(changed["Value"]))

        def a_received(interface, changed, invalidated):
            value = changed["Value"]
            if len(value) != len(payload) or sequence_of(value) != pending["sequence"]:
                raise Fail(f"echo {pending['sequence']} is not what was sent")
            pending.pop("done")()

        matches = [
            self.b.add_signal_receiver(
                self.guarded(b_received), "PropertiesChanged", PROPERTIES, self.a_name, PATH, byte_arrays=True),
            self.a.add_signal_receiver(
                self.guarded(a_received), "PropertiesChanged", PROPERTIES, self.b_name, PATH, byte_arrays=True),
        ]

        def round_trip(sequence, done):
            stamp(payload, sequence)
            pending["sequence"], pending["done"] = sequence, done
            self.object_a.set_value(bytes(payload))

        report("signal", *self.measure(round_trip))
        for match in matches:
            match.remove()

    def stream(self):
        batch = self.args.batch
        payload = bytearray(i & 0xFF for i in range(self.args.payload))
        state = {"sent": 0, "received": 0, "warm": 0, "start": 0, "elapsed": 0}
        warm_batches = (self.args.warmup + batch - 1) // batch

        def send_batch():
            for _ in range(batch):
                stamp(payload, state["sent"])
                self.object_a.set_value(bytes(payload))
                state["sent"] += 1

        def batch_received():
            if warm_batches and state["received"] == warm_batches * batch:
                state["warm"] = state["received"]
                state["start"] = time.perf_counter_ns()
            elif state["received"] > warm_batches * batch:
                state["elapsed"] = time.perf_counter_ns() - state["start"]
                if self.budget.spent(state["elapsed"], state["received"] - state["warm"]):
                    self.stop()
                    return
            send_batch()

        def b_received(interface, changed, invalidated):
            if sequence_of(changed["Value"]) != state["received"] & 0xFFFFFFFF:
                raise Fail(f"signal {state['received']} arrived out of order")
            state["received"] += 1
            if state["received"] % batch == 0:
                batch_received()

        match = self.b.add_signal_receiver(
            self.guarded(b_received), "PropertiesChanged", PROPERTIES, self.a_name, PATH, byte_arrays=True)
        if not warm_batches:
            state["start"] = time.perf_counter_ns()
        GLib.idle_add(lambda: send_batch() and False)
        self.run_loop()
        match.remove()
        count = state["received"] - state["warm"]
        print(f"dbus.stream.signals_per_s {count * 1e9 / state['elapsed']:.1f}")
        print(f"dbus.stream.signals {count}")


def main():
    parser = argparse.ArgumentParser(description="D-Bus round trips in dbus-python (peer of doppel-bench dbus)")
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

    bench = Benchmark(args)
    print(f"# dbus_roundtrip.py (dbus-python {dbus.__version__}, GLib): payload {args.payload} B, "
          f"{bench.budget} per workload, warmup {args.warmup}")
    for workload in WORKLOADS:
        if workload in chosen:
            getattr(bench, {"call": "calls", "signal": "signals", "stream": "stream"}[workload])()
    sys.stdout.flush()


if __name__ == "__main__":
    main()
