#!/usr/bin/env python3
"""Compares what one central received on its first connection in two runs
(logs of ci/checks/bleak_e4_log.py): the original device, and the device
`doppel import` made from the capture of the original run.

  - the same notification payloads, per characteristic, in the same order,
    byte for byte;
  - the replay's pace: the times the central's controller received the
    notifications at (the two captures, ORIGINAL_CAPTURE.csv and
    REPLAY_CAPTURE.csv, the notifications.csv `doppel import` writes of each
    run's btsnoop) over the whole stream, and the intervals between
    consecutive notifications (below). The intervals at the central's
    callback are printed too: they add the central's own jitter (bleak,
    D-Bus, Python), twice;
  - both links dropping, at the same point of the stream: after the same
    last notification (with the payloads equal, nothing of the stream was
    lost or added before the drop); the times are printed.

usage: compare_notification_logs.py ORIGINAL.csv REPLAY.csv ORIGINAL_CAPTURE.csv REPLAY_CAPTURE.csv [TOLERANCE_MS]
TOLERANCE_MS: the bound on the interval error at p99, gated only when
given (the TCG lab's own jitter reaches 0.6 s under load; #17's goal is 10
ms on a lab without that floor). The replay's pace is held apart from the
lab's jitter, which only ever makes a notification late: the earliest
arrival of each third of the stream, against the original's schedule, within
2 % of the original's span (at least 100 ms) of the others. Prints the
figures; exit status 0 when all hold, 1 otherwise. The exact times of a
replay are checked in the loopback (GenericPeripheralLoopbackTests).
"""
import csv
import math
import sys


def first_connection(path):
    notifications, lost = [], None
    with open(path) as file:
        for row in csv.DictReader(file):
            if row["connection"] != "1":
                continue
            if row["characteristic"] == "lost":
                lost = float(row["time"])
            else:
                notifications.append((float(row["time"]), row["characteristic"], row["value"]))
    return notifications, lost


def percentile(values, fraction):
    """The nearest-rank percentile (with up to 100 values, p99 is the largest)."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(fraction * len(ordered)) - 1)] if ordered else 0.0


def captured(path):
    """The notifications of an imported capture: (time, characteristic, value), as the central's controller got them."""
    with open(path) as file:
        return [(float(row["time"]), row["characteristic"], row["value"]) for row in csv.DictReader(file)]


def errors_of(original, replay):
    """How far each interval between consecutive notifications is off the original's, in ms."""
    count = min(len(original), len(replay))
    return [abs((original[i][0] - original[i - 1][0]) - (replay[i][0] - replay[i - 1][0])) * 1000 for i in range(1, count)]


def describe(errors):
    return (
        f"p50 {percentile(errors, 0.50):.2f} ms, p90 {percentile(errors, 0.90):.2f} ms, p99 {percentile(errors, 0.99):.2f} ms, "
        f"max {max(errors, default=0.0):.2f} ms over {len(errors)} intervals"
    )


def main(original_path, replay_path, original_capture_path, replay_capture_path, tolerance_ms):
    original, original_lost = first_connection(original_path)
    replay, replay_lost = first_connection(replay_path)
    status = 0
    print(f"original: {len(original)} notifications; replay: {len(replay)}")
    if len(original) < 30:
        print(f"FAIL the original run has {len(original)} notifications on its first link (at least 30 wanted)")
        return 1
    payloads = [(c, v) for _, c, v in original]
    replayed = [(c, v) for _, c, v in replay]
    if payloads == replayed:
        print(f"PASS the same {len(payloads)} payloads in the same order, byte for byte")
    else:
        status = 1
        index = next((i for i, (a, b) in enumerate(zip(payloads, replayed)) if a != b), min(len(payloads), len(replayed)))
        print(f"FAIL the payloads differ from notification {index + 1}:")
        print(f"    original: {payloads[index] if index < len(payloads) else 'none (it ended)'}")
        print(f"    replay:   {replayed[index] if index < len(replayed) else 'none (it ended)'}")
        # Per characteristic, for the record.
        for characteristic in sorted({c for c, _ in payloads}):
            a = [v for c, v in payloads if c == characteristic]
            b = [v for c, v in replayed if c == characteristic]
            print(f"    {characteristic}: {len(a)} original, {len(b)} replayed, {'equal' if a == b else 'differ'}")
    print(f"    at the central's callback: {describe(errors_of(original, replay))}")
    original_air, replay_air = captured(original_capture_path), captured(replay_capture_path)
    if [(c, v) for _, c, v in original_air] != payloads or [(c, v) for _, c, v in replay_air] != replayed:
        status = 1
        print(f"FAIL the captures do not hold what the central logged ({len(original_air)} and {len(replay_air)} notifications)")
    else:
        errors = errors_of(original_air, replay_air)
        figures = describe(errors)
        p99 = percentile(errors, 0.99)
        # The pace. The replayed device sends each notification at its time
        # in the original capture, counted from the subscription, so at the
        # replay's controller notification i arrives at that time plus a
        # constant plus a lateness of its own: the lab's scheduling (a TCG
        # guest on 2 shared cores stalls for up to 0.6 s under load, and
        # then what was due goes out at once). Lateness is never negative,
        # so the earliest arrival of each third of the stream sits on the
        # schedule, however late the rest of that third was; a replay too
        # fast or too slow by a fraction of every interval shows as a spread
        # between the thirds' earliest arrivals that grows with the span.
        # Median interval errors are the lab's stalls, not the replay: 80 ms
        # in one loaded run whose thirds agreed within 46 ms (docs/benchmarks.md).
        count = min(len(original_air), len(replay_air))
        offsets = [(replay_air[i][0] - replay_air[0][0]) - (original_air[i][0] - original_air[0][0]) for i in range(count)]
        third = count // 3
        floors = [min(offsets[:third]), min(offsets[third : count - third]), min(offsets[count - third :])]
        spread = max(floors) - min(floors)
        original_span = original_air[count - 1][0] - original_air[0][0]
        allowed = max(0.1, 0.02 * original_span)
        pace = (
            f"each third's earliest arrival {', '.join(f'{1000 * f:+.0f}' for f in floors)} ms off the original's schedule "
            f"(from the first notification; spread {1000 * spread:.0f} ms) over its {original_span:.3f} s"
        )
        if spread <= allowed:
            print(f"PASS the replay keeps the original's pace at the central's controller: {pace}")
        else:
            status = 1
            print(f"FAIL the replay's pace is off the original's by more than {allowed * 1000:.0f} ms: {pace}")
        # The intervals hold the lab's stalls (above), so they are gated only
        # when a bound is given.
        if tolerance_ms is None:
            print(f"NOTE intervals at the central's controller, not gated ({figures})")
        elif p99 <= tolerance_ms:
            print(f"PASS intervals at the central's controller within {tolerance_ms:g} ms of the original's at p99 ({figures})")
        else:
            status = 1
            print(f"FAIL intervals at the central's controller off the original's by more than {tolerance_ms:g} ms at p99 ({figures})")
    if original_lost is None or replay_lost is None:
        status = 1
        print(f"FAIL the link did not drop (original: {original_lost is not None}, replay: {replay_lost is not None})")
    else:
        span = lambda run, lost: (lost - run[0][0], lost - run[-1][0])  # noqa: E731
        (a_first, a_last), (b_first, b_last) = span(original, original_lost), span(replay, replay_lost)
        where = (
            f"original {a_first:.2f} s after the first notification ({a_last:.2f} s after the last), "
            f"replay {b_first:.2f} s ({b_last:.2f} s)"
        )
        if payloads == replayed:
            print(f"PASS both links dropped after the same notification, number {len(payloads)}: {where}")
        else:
            status = 1
            print(f"FAIL the link dropped at another point of the stream: {where}")
    return status


if __name__ == "__main__":
    if len(sys.argv) not in (5, 6):
        sys.exit(__doc__)
    sys.exit(main(*sys.argv[1:5], float(sys.argv[5]) if len(sys.argv) == 6 else None))
