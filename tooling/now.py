"""The now of a command: the local clock to the second, with its offset, or the time --now fixes.

Standard library only: :mod:`tooling.slurm.signals` stamps a job's first signals with it before
the slow imports. ``tooling/resilience/`` keeps a clock of its own (it stands apart).
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


def local_now() -> datetime:
    """The local clock with its offset, to the second (as records write times)."""
    return datetime.now().astimezone().replace(microsecond=0)


@dataclass(frozen=True)
class Clock:
    """What a command asks for the time: ``fixed`` (--now) every time, else the local clock at
    the moment it asks (a command that runs for hours asks again)."""

    fixed: datetime | None = None

    def __call__(self) -> datetime:
        return self.fixed or local_now()
