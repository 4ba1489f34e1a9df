"""Progress through a bake, reported often enough for a UI bar to move and for Esc to stop it.

The pipeline gives each stage a Progress spanning its share of the bar; a stage hands `part(k, n)`
of its span to each piece of work (a region, a hole, a notch), and loops call `at(fraction)`. The
report reaches the caller at most every REPORT_INTERVAL seconds, and may raise
lib.errors.BakeCancelled to stop the bake there.
"""

from __future__ import annotations

import time
from collections.abc import Callable

ProgressCallback = Callable[[str, float], None]

# Reports closer together than this (seconds) are skipped: a loop may call `at` on every step.
REPORT_INTERVAL = 0.05


class _Clock:
    """When the last report went out, shared by a stage's span and every part of it."""

    def __init__(self) -> None:
        self.last = -float("inf")
        self.done = 0.0  # the furthest point reported: the bar never moves back


class Progress:
    """The fraction [start, end] of the whole bake that one piece of a stage covers."""

    def __init__(
        self,
        report: ProgressCallback | None,
        stage: str,
        start: float = 0.0,
        end: float = 1.0,
        clock: _Clock | None = None,
    ):
        self.report, self.stage, self.start, self.end = report, stage, start, end
        self.clock = clock or _Clock()

    def at(self, fraction: float) -> None:
        """This piece is `fraction` (0..1) done; reported unless a report went out just now."""
        if self.report is None:
            return
        now = time.monotonic()
        if now - self.clock.last < REPORT_INTERVAL:
            return
        self.clock.last = now
        self.clock.done = max(self.clock.done, self.start + (self.end - self.start) * min(max(fraction, 0.0), 1.0))
        self.report(self.stage, self.clock.done)

    def part(self, k: int | float, n: int | float) -> Progress:
        """The k-th of n equal parts of this piece (k may be fractional: a share of the way)."""
        width = (self.end - self.start) / max(n, 1)
        return Progress(self.report, self.stage, self.start + k * width, self.start + (k + 1) * width, self.clock)

    def span(self, begin: float, finish: float) -> Progress:
        """The part of this piece from fraction `begin` to `finish`."""
        width = self.end - self.start
        return Progress(self.report, self.stage, self.start + begin * width, self.start + finish * width, self.clock)


SILENT = Progress(None, "")
