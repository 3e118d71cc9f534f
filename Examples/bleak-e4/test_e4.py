"""The E4 client's own test suite, as its authors would write it. Run by
`doppel test` against a scenario:

    doppel test Examples/scenarios/e4-bleak.yaml -- python3 -m pytest -m "not link_loss" Examples/bleak-e4
    doppel test Examples/scenarios/e4-bleak-link-lost.yaml -- python3 -m pytest -m link_loss Examples/bleak-e4
"""
import asyncio

import pytest

from e4_client import decode_bvp, from_environment, start_command


def test_decodes_a_bvp_packet():
    index, values = decode_bvp(bytes.fromhex("0a000000") + b"\x10\x00" * 8)
    assert index == 10
    assert values == [1.0] * 8


def test_refuses_a_short_packet():
    with pytest.raises(ValueError):
        decode_bvp(b"\x00\x00")


def test_start_command_carries_the_time():
    assert start_command(0x01020304) == bytes([1, 4, 3, 2, 1])


def test_streams_bvp_at_64_hz():
    # The seconds include the scan and the connection: 8 s of 12 in a loaded
    # CI lab once, which left 5.3 s of streaming.
    session = asyncio.run(from_environment(reconnect=False).stream(seconds=18))
    assert session.connections == 1
    assert session.malformed == 0
    indices = [index for _, index, _ in session.bvp]
    # Subscribing and the start command take a moment: at least 6 s of 64 Hz.
    assert len(indices) >= 6 * 64, f"{len(indices)} BVP samples"
    assert indices == list(range(indices[0], indices[0] + len(indices))), "a BVP packet was lost"
    assert session.eda_packets > 0


@pytest.mark.link_loss
def test_comes_back_after_the_link_is_lost():
    session = asyncio.run(from_environment(reconnect=True).stream(seconds=35))
    assert session.disconnections >= 1, "the scenario's link loss never happened"
    assert session.connections >= 2, "never connected again"
    after = [value for number, _, value in session.bvp if number >= 2]
    assert len(after) >= 2 * 64, f"only {len(after)} BVP samples after reconnecting"
