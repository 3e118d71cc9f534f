#!/usr/bin/env python3
"""A deliberately wrong E4 client: after the link is lost it connects again
and subscribes again, but never writes the start command again — and the
wristband, which stops streaming when its link drops, stays silent. The bug
is a real-world one (streaming state does not survive a reconnect); the
client itself exits 0, believing all is well, and `doppel test` must fail
it: the scenario wants `start-streaming` from the firmware after each
connection.
"""
import asyncio
import sys

from e4_client import from_environment

session = asyncio.run(from_environment(reconnect=True, restart=False).stream(seconds=35))
after = sum(1 for number, _, _ in session.bvp if number >= 2)
print(f"{session.connections} connections, {len(session.bvp)} BVP samples, {after} after reconnecting", flush=True)
sys.exit(0)
