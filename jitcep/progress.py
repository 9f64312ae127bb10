"""Stage progress on stderr, shared by the CLI (``--progress``) and ``Query.run(progress=)``.

The engine reports stages, not fractions (:attr:`jitcep.query.Query.STAGES`:
reading, building the event table, matching, building the output; the CLI
adds writing), so a display names the stage a run is in and how long it has
taken.  Both front ends pick a display with :func:`display` from the same
three-way setting, so they behave alike:

- ``None`` (default): a bar on an interactive terminal, only once the run has
  taken 2 seconds (quick runs print nothing); nothing when stderr is a file,
  a pipe or a notebook's stream.
- ``True``: shown at once; a bar on a terminal, elsewhere (a notebook, a log
  file) one line per stage, ``jitcep: <stage> (<elapsed>s)``.
- ``False``: nothing.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import Sequence, TextIO

#: how long a run must take before the default display appears on a terminal
DELAY = 2.0


class Progress:
    """A one-line progress display on ``stream``: the current stage, stages done, elapsed time.

    The bar fills by stage and a spinner shows the process is alive.  On a
    terminal it redraws in place (a background thread, every 0.1 s) and
    appears only once the run has taken ``delay`` seconds; elsewhere it writes
    one line per stage.  :meth:`stage` is the callback of ``Query._run``.
    """

    WIDTH = 20
    SPIN = "|/-\\"

    def __init__(self, stream: TextIO, stages: Sequence[str], *, delay: float = DELAY, tty: bool | None = None):
        self.stream = stream
        self.stages = tuple(stages)
        self.tty = stream.isatty() if tty is None else tty
        self.delay = delay
        self.t0 = time.monotonic()
        self.current: str | None = None
        self.shown = False
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = None
        if self.tty:
            self._thread = threading.Thread(target=self._tick, daemon=True)
            self._thread.start()

    def stage(self, name: str) -> None:
        with self._lock:
            self.current = name
            if self.tty:
                self._draw()
            else:
                self.stream.write(f"jitcep: {name} ({time.monotonic() - self.t0:.1f}s)\n")
                self.stream.flush()

    def _line(self) -> str:
        k = self.stages.index(self.current) if self.current in self.stages else 0
        filled = self.WIDTH * k // len(self.stages)
        spin = self.SPIN[int((time.monotonic() - self.t0) * 10) % len(self.SPIN)]
        bar = "#" * filled + spin + "." * (self.WIDTH - filled - 1)
        return f"[{bar}] {k + 1}/{len(self.stages)} {self.current} {time.monotonic() - self.t0:.1f}s"

    def _draw(self) -> None:
        if self.current is None or time.monotonic() - self.t0 < self.delay:
            return
        self.shown = True
        self.stream.write("\r\x1b[K" + self._line())
        self.stream.flush()

    def _tick(self) -> None:
        while not self._stop.wait(0.1):
            with self._lock:
                self._draw()

    def clear(self) -> None:
        """Erase the bar (before another line goes to the same stream); it comes back on the next tick."""
        with self._lock:
            if self.tty and self.shown:
                self.stream.write("\r\x1b[K")
                self.stream.flush()

    def close(self, *, done: bool = True) -> None:
        """Stop the display; ``done``: say how long the run took (not after an error).  Idempotent."""
        if self._stop.is_set():
            return
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        with self._lock:
            if self.tty and self.shown:
                self.stream.write("\r\x1b[K")
            if done and (self.shown or not self.tty):
                self.stream.write(f"jitcep: done in {time.monotonic() - self.t0:.1f}s\n")
            self.stream.flush()


class NoProgress:
    """The display that shows nothing (same interface as :class:`Progress`)."""

    def stage(self, name: str) -> None:
        pass

    def clear(self) -> None:
        pass

    def close(self, *, done: bool = True) -> None:
        pass


def display(setting: bool | None, stages: Sequence[str], stream: TextIO | None = None) -> Progress | NoProgress:
    """The display for ``setting`` (module docstring) on ``stream`` (default: the current ``sys.stderr``)."""
    if setting is not None and not isinstance(setting, bool):
        from .errors import OptionError

        raise OptionError(f"progress={setting!r} is not one of None, True, False")
    stream = sys.stderr if stream is None else stream
    if setting is False:
        return NoProgress()
    if setting:
        return Progress(stream, stages, delay=0.0)
    return Progress(stream, stages) if stream.isatty() else NoProgress()
