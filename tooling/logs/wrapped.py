"""Lines a terminal wrapped at its width, read whole again.

A log copied from a terminal (or written through one: ``script``, a tmux capture, a notebook's
output) has every line longer than the terminal's width cut at that width, its rest on the next
line: DeepSpeed's ``... Attempted loss sc`` / ``ale: 4096.0, reducing to 2048.0``. Neither half
says what the whole says, and no recogniser reads a word cut in two.

The evidence that a log was wrapped is checked on a window of it (:func:`width`, cheap: the first
:data:`WINDOW` bytes of a chunk): no line of the window is longer than W (a terminal wraps every
longer one), W is at least :data:`MIN_WIDTH`, and at least :data:`SEEN` lines are exactly W long,
each followed by a shorter, non-empty line that does not start the way the line it continues
starts (:func:`shape`), nor with a log line's time, level or rank prefix, nor the way the lines of
the window that follow no line of the width start (a kind of line the log writes anyway: NCCL's
INFO lines after a fixed-length line of another kind). A table's rows are all W long; a progress
bar padded to the terminal's width is followed by another bar or by a log line; a rule of ``=``
is a frame (:func:`ruled`): none of them is evidence. Where a log shows the evidence,
:func:`chains` finds its wrapped lines (a line exactly W long and its continuations), which the
scan reads as one line numbered as its first part (:mod:`tooling.logs.scan`); a log without it
costs nothing more.

Not joined: a line whose colour codes or multi-byte characters make its bytes longer than the
columns it took (W is counted in bytes), a continuation in the next chunk (8 MiB on) or, in a
watched log, in the next poll.
"""
from __future__ import annotations

import re
from functools import lru_cache

from tooling.logs.blocks import is_traceback
from tooling.logs.context import prefixed

WINDOW = 1 << 16  # bytes of a chunk looked at for the evidence
MIN_WIDTH = 40  # no terminal is narrower; shorter fixed-length lines are a log's own format
SEEN = 3  # wrapped lines (with their continuation) before a width is believed
SHAPE = 4  # bytes of a line's start compared: "[202" (a timestamp), "ale:" (a word's rest)
HEAD = 64  # bytes of a line's start enough to tell its prefix (a time, a level, a rank)
_DIGITS, _LETTERS = b"0123456789", b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
_CLASSES = bytes.maketrans(_DIGITS + _LETTERS, b"9" * len(_DIGITS) + b"a" * len(_LETTERS))


def shape(line: bytes) -> bytes:
    """How a line starts, digits and letters by their class: "[2023-02-21" and "[2024-11-04" alike."""
    return line[:SHAPE].translate(_CLASSES)


def continues(first: bytes, following: bytes, *, quick: bool = False) -> bool:
    """Whether ``following`` (its first :data:`HEAD` bytes) may be the rest of a line that starts as
    ``first`` does: not empty, not started the way ``first`` is (a progress bar's next line starts
    with the same label) nor (unless ``quick``: :func:`verified` asks later) with a log line's
    time, level or rank prefix, nor a traceback's header (a block of its own, read from its first
    line)."""
    if not following or shape(following) == shape(first):
        return False
    if quick:
        return True
    text = following.decode("utf-8", "replace")
    return not prefixed(text) and not is_traceback(text)


def ruled(line: bytes) -> bool:
    """A rule (``=====``, ``-----``): a line of one repeated character is a log's own frame, never a
    line a terminal cut (a longer rule's rest starts as it does, and is not joined either)."""
    return not line.strip(line[:1])


def width(buffer: bytes | bytearray, end: int) -> int | None:
    """The width the lines of ``buffer[:end]`` were wrapped at, by the evidence of its first
    :data:`WINDOW` bytes (see the module's docstring); None: no evidence."""
    lines = bytes(buffer[:min(end, WINDOW)]).split(b"\n")[:-1]  # (the last: cut by the window, or empty)
    longest = max((len(line) for line in lines), default=0)
    if longest < MIN_WIDTH:
        return None
    rests = [following for line, following in zip(lines, lines[1:])
             if len(line) == longest and len(following) < longest and not ruled(line)
             and continues(line, following[:HEAD])]
    if len(rests) < SEEN:
        return None
    # a kind of line the log writes elsewhere too (NCCL's "node0:48213:48303 [3] NCCL INFO" after
    # a fixed-length line of another kind) is no line's rest
    kinds = {shape(following) for line, following in zip([b""] + lines, lines) if len(line) != longest}
    return longest if sum(shape(rest) not in kinds for rest in rests) >= SEEN else None


@lru_cache(maxsize=8)
def _at_width(columns: int) -> re.Pattern[bytes]:
    return re.compile(rb"^[^\n]{%d}\n" % columns, re.MULTILINE)


def chains(buffer: bytes | bytearray, end: int, columns: int) -> list[tuple[int, list[int]]]:
    """The candidate wrapped lines among the whole lines of ``buffer[:end]``: (where the first part
    starts, where each continuation starts), in order, one for each line of the width (a middle
    part's too: a candidate may run on into the next line). Candidates by the quick test of
    :func:`continues` (the full one costs a wrapped log a third of its scan, where most chains
    are not read): :func:`verified` tells which of a chain's parts are its own."""
    return [(match.start(), parts) for match in _at_width(columns).finditer(buffer, 0, end)
            if not ruled(match.group()[:-1]) and (parts := rest(buffer, match.start(), end, columns, quick=True))]


def rest(buffer: bytes | bytearray, start: int, end: int, columns: int, *, quick: bool = False) -> list[int]:
    """Where the continuations of the line at ``start`` start, if it is ``columns`` long (none: it
    was not wrapped), among the whole lines of ``buffer[:end]`` (``quick``: see :func:`chains`)."""
    first, parts, stop = bytes(buffer[start:start + HEAD]), [], buffer.find(b"\n", start, end)
    while stop - (parts[-1] if parts else start) == columns:  # (-1 - start: no line break, never equal)
        here = stop + 1
        stop = buffer.find(b"\n", here, end)
        if stop < 0 or not continues(first, bytes(buffer[here:min(stop, here + HEAD)]), quick=quick):
            break
        parts.append(here)
    return parts


def verified(buffer: bytes | bytearray, start: int, parts: list[int]) -> list[int]:
    """A candidate chain's parts (:func:`chains`) up to the first that is not a continuation by
    the full test of :func:`continues`."""
    first = bytes(buffer[start:start + HEAD])
    for count, at in enumerate(parts):
        if not continues(first, bytes(buffer[at:at + HEAD]).split(b"\n", 1)[0]):
            return parts[:count]
    return parts


def whole(buffer: bytes | bytearray, start: int, parts: list[int]) -> bytes:
    """The line a chain's parts were cut from."""
    ends = [buffer.find(b"\n", at) for at in (start, *parts)]
    return b"".join(bytes(buffer[at:stop]).rstrip(b"\r") for at, stop in zip((start, *parts), ends))
