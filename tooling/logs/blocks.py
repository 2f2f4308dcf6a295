"""Failures told over several lines: a Python traceback and torchrun's failure summary.

A traceback's signature is its last line, the exception (``RuntimeError: CUDA error: ...``), not
its ``Traceback (most recent call last):`` header nor the frames between, which quote code that
may look like anything (``raise ChildFailedError(``). Every line of a rank's traceback carries
that rank's prefix (``[rank3]: ``), so the lines of ranks writing at once are told apart.

An exception whose words no mode names is still told by where it was raised: its innermost frame
(:func:`innermost_frame`, the last ``File ...`` line and the code under it), whose names may say
the work it was doing (``rendezvous.py ... in _env_rendezvous_handler``, ``store = TCPStore(...)``).

torchrun ends with a summary that names, for each failed rank, its host, its global rank and how
it died (``exitcode  : -9``: killed, most often by the kernel's OOM killer).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Iterator

from tooling.logs.context import When, line_prefix, time_at
from tooling.logs.numbers import ends_on_a_bar

TRACEBACK_PATTERN = r"Traceback \(most recent call last\)"
HEADER = "Traceback (most recent call last)"
MAX_TRACEBACK = 2000  # lines walked (other ranks' lines included) before giving a traceback up
FRAME_LINES = 3  # of a traceback's last frame lines, where its innermost frame is looked for
MAX_SUMMARY = 80  # lines of torchrun's summary read
RULE = "=" * 20  # (torchrun's summary opens and closes with a line of 60)
INCOMPLETE = object()  # the block runs past the end of the buffer
_CHAINS = ("During handling of the above exception", "The above exception was the direct cause")
_FIELD = re.compile(r"\s*(time|host|rank|exitcode)\s*: ?(.*)")
_GLOBAL_RANK = re.compile(r"(\d+)")


def is_traceback(text: str) -> bool:
    """Whether a line is a traceback's header: at its start (after a rank's prefix), or after a
    progress bar the traceback interrupted (:func:`tooling.logs.numbers.ends_on_a_bar`)."""
    rest = text[len(line_prefix(text)):]
    at = rest.find(HEADER)
    return at >= 0 and (not rest[:at].strip() or ends_on_a_bar(rest[:at]))


def decode(buffer: bytearray | bytes, start: int, limit: int) -> tuple[str, int]:
    """The line at ``start`` (without its line break) and where the next one starts (-1: none)."""
    end = buffer.find(b"\n", start, limit)
    raw = buffer[start:end if end >= 0 else limit]
    return raw.decode("utf-8", "replace").rstrip("\r"), (end + 1 if end >= 0 else -1)


def above(buffer: bytearray | bytes, start: int, count: int, earlier: bytes = b"") -> Iterator[tuple[int, str]]:
    """(start, text) of the lines above the line at ``start``, nearest first: at most ``count``;
    above the buffer's first, those of ``earlier``, the lines read before it
    (:attr:`tooling.logs.chunks.Chunks.earlier`, starts below 0), so that a log read in chunks or
    polls shows the lines a whole one shows."""
    end = start
    while count > 0:
        if end <= 0:
            if earlier:
                yield from ((begin - len(earlier), text) for begin, text in above(earlier, len(earlier), count))
            return
        begin = buffer.rfind(b"\n", 0, end - 1) + 1
        yield begin, decode(buffer, begin, end)[0]
        end, count = begin, count - 1


@dataclass(frozen=True)
class Found:
    start: int  # of the exception line
    lines: int  # how many lines below the header it is
    body: tuple[int, ...]  # starts of the frame lines between: not failures of their own


def exception_line(buffer: bytearray, header: int, limit: int) -> Found | object | None:
    """The last line of the traceback whose header starts at ``header``: a line of the same rank
    that is neither indented nor blank; None when there is none within reach."""
    text, start = decode(buffer, header, limit)
    prefix = line_prefix(text)
    body: list[int] = []
    for walked in range(1, MAX_TRACEBACK + 1):
        if start < 0 or start >= limit:
            return INCOMPLETE
        text, following = decode(buffer, start, limit)
        if line_prefix(text) == prefix:  # the same rank (or none): other ranks' lines interleave
            rest = text[len(prefix):]
            if rest.startswith(HEADER):
                return None  # another traceback began before this one ended
            if rest[:1] not in ("", " ", "\t") and not rest.startswith(_CHAINS):
                return Found(start, walked, tuple(body))
            body.append(start)
        start = following
    return None


def innermost_frame(buffer: bytearray, found: Found, limit: int) -> str:
    """The traceback's innermost frame: its last ``File "...", line N, in name`` line and the
    indented code under it (the frame lines of ``found``'s rank, nearest the exception)."""
    lines = [decode(buffer, start, limit)[0] for start in found.body[-FRAME_LINES:]]
    for at in range(len(lines) - 1, -1, -1):
        if lines[at].lstrip().startswith('File "'):
            return "\n".join(lines[at:])
    return ""


@dataclass(frozen=True)
class Entry:
    """One failed rank of torchrun's summary; ``text`` is its verbatim ``exitcode`` line."""
    lines: int  # below the ChildFailedError line
    text: str
    when: When | None
    hosts: tuple[str, ...]
    ranks: tuple[int, ...]


@dataclass
class Summary:
    entries: list[Entry] = field(default_factory=list)
    body: list[int] = field(default_factory=list)  # starts of its lines
    complete: bool = True  # False when the buffer ended before the summary did

    @property
    def hosts(self) -> list[str]:
        return [h for e in self.entries for h in e.hosts]

    @property
    def ranks(self) -> list[int]:
        return [r for e in self.entries for r in e.ranks]

    @property
    def when(self) -> When | None:
        return next((e.when for e in self.entries if e.when and e.when.at), None)


def torchrun_summary(buffer: bytearray, start: int, limit: int, now: datetime) -> Summary:
    """The failed ranks listed below a ChildFailedError line whose next line starts at ``start``
    (none when no summary opens there: the lines below are lines of their own)."""
    summary = Summary()
    opens = _opens(buffer, start, limit)
    if not opens:
        summary.complete = opens is not None
        return summary
    values: dict[str, str] = {}
    exit_line = (0, "")
    for walked in range(1, MAX_SUMMARY + 1):
        if start < 0 or start >= limit:
            summary.complete = False
            break
        text, following = decode(buffer, start, limit)
        found = _FIELD.match(text)
        if found:
            values[found.group(1)] = found.group(2).strip()
            exit_line = (walked, text) if found.group(1) == "exitcode" else exit_line
        elif text.strip().startswith(("[", "=", "-")) and values:
            summary.entries.append(_entry(values, exit_line, now))
            values, exit_line = {}, (0, "")
        if text.startswith(RULE) and summary.entries:
            break
        summary.body.append(start)
        start = following
    if values:
        summary.entries.append(_entry(values, exit_line, now))
    return summary


def _opens(buffer: bytearray, start: int, limit: int) -> bool | None:
    """Whether torchrun's summary opens at ``start``: its rule of ``=``, after a blank line at
    most (a ChildFailedError line alone, a paste cut there, is followed by anything); None when
    the buffer ends first."""
    for _ in range(2):
        if start < 0 or start >= limit:
            return None
        text, start = decode(buffer, start, limit)
        if text.strip():
            return RULE in text
    return False


def _entry(values: dict[str, str], exit_line: tuple[int, str], now: datetime) -> Entry:
    rank = _GLOBAL_RANK.match(values.get("rank", ""))
    when = time_at(values["time"], 0, now)[0] if "time" in values else None
    host = values.get("host", "")
    return Entry(exit_line[0], exit_line[1], when, (host,) if host and not host.startswith("<") else (),
                 (int(rank.group(1)),) if rank else ())

