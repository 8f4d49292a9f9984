"""A progress bar for long reads, on standard error when it is a terminal (quiet otherwise: a
pipe, a file, a server). Redrawn at most ten times a second, so it costs the read nothing.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

WIDTH = 30
EVERY_S = 0.1


class Progress:
    """``advance(n)`` as bytes (or items) of ``total`` are done; ``done()`` clears the line."""

    def __init__(self, label: str, total: int, stream: TextIO | None = None,
                 shown: bool | None = None) -> None:
        self.stream = sys.stderr if stream is None else stream
        self.shown = (self.stream.isatty() if shown is None else shown) and total > 0
        self.label = label
        self.total = total
        self.count = 0
        self.started = time.monotonic()
        self.next_draw = self.started + EVERY_S
        self.drawn = False

    def advance(self, amount: int) -> None:
        self.count += amount
        if self.shown and time.monotonic() >= self.next_draw:
            self.draw()

    def draw(self) -> None:
        now = time.monotonic()
        self.next_draw = now + EVERY_S
        share = min(1.0, self.count / self.total) if self.total else 1.0
        filled = int(share * WIDTH)
        rate = self.count / max(now - self.started, 1e-9)
        left = (self.total - self.count) / rate if rate and self.count < self.total else 0.0
        self.stream.write(f"\r{self.label} [{'#' * filled}{'.' * (WIDTH - filled)}] "
                          f"{share:4.0%}  {left:4.0f} s left ")
        self.stream.flush()
        self.drawn = True

    def say(self, text: str) -> None:
        """A step without a measure (``verifying the chain``), until the next ``done()``."""
        if self.shown:
            self.done()
            self.stream.write(text + " ...")
            self.stream.flush()
            self.drawn = True

    def done(self) -> None:
        if self.drawn:
            self.stream.write("\r" + " " * (len(self.label) + WIDTH + 24) + "\r")
            self.stream.flush()
            self.drawn = False
