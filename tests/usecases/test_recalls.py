from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta

import pytest

from memx_mcp.usecases.recalls import RecallRecorder

T0 = datetime(2026, 1, 1, tzinfo=UTC)


class Sink:
    def __init__(self, fail_first: bool = False) -> None:
        self.batches: list[tuple[dict[str, int], datetime]] = []
        self.fail_first = fail_first
        self.written = threading.Event()

    def __call__(self, counts: Mapping[str, int], now: datetime) -> None:
        if self.fail_first:
            self.fail_first = False
            raise OSError("disk full")
        self.batches.append((dict(counts), now))
        self.written.set()


def test_recalls_within_the_interval_are_written_as_one_batch_with_summed_counts() -> None:
    sink = Sink()
    recorder = RecallRecorder(sink, interval=0.3)
    recorder.record(["a", "b"], T0)
    recorder.record(["a"], T0 + timedelta(seconds=1))
    assert sink.written.wait(5)
    recorder.flush()
    assert sink.batches == [({"a": 2, "b": 1}, T0 + timedelta(seconds=1))]


def test_flush_writes_at_once_without_waiting_for_the_interval() -> None:
    sink = Sink()
    recorder = RecallRecorder(sink, interval=60)
    recorder.record(["a"], T0)
    started = time.monotonic()
    assert recorder.flush(timeout=10)
    assert time.monotonic() - started < 10
    assert sink.batches == [({"a": 1}, T0)]
    assert recorder.flush(timeout=1)  # nothing pending: returns at once


def test_a_failing_write_is_logged_and_later_recalls_still_land(caplog: pytest.LogCaptureFixture) -> None:
    sink = Sink(fail_first=True)
    recorder = RecallRecorder(sink, interval=60)
    recorder.record(["a"], T0)
    recorder.flush(timeout=10)
    assert "could not record 1 recalls: disk full" in caplog.text
    recorder.record(["b"], T0)
    recorder.flush(timeout=10)
    assert sink.batches == [({"b": 1}, T0)]
