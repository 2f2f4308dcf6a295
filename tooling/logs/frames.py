"""A block of native (C and C++) stack frames, a failure the log tells in no words of its own.

A process that crashes in native code prints the stack of the thread that crashed, one frame a
line, in one of a few shapes, whatever prefix its launcher puts before each line (Ray's
``(WorkerDict pid=830, ip=...)``, torchrun's ``[rank3]:``):

- glibc's ``backtrace_symbols``: ``/usr/lib/x86_64-linux-gnu/libc.so.6(+0x94ac3) [0x1501685e0ac3]``,
  a symbolizer's name after it (``... [0x14d1948877aa] c10d::ProcessGroupNCCL::ncclCommWatchdog()``);
- gdb's and libunwind's: ``#3  0x00007f1b2c0a1a2e in ncclCommWatchdog () from /lib/libtorch_cuda.so``;
- c10's (PyTorch's C++ exceptions): ``frame #12: <unknown function> + 0x94ac3 (0x7f... in /lib/libc.so.6)``;
- glog's failure signal handler: ``    @     0x7f1b2c0a1a2e c10d::ProcessGroupNCCL::ncclCommWatchdog()``.

What was decided: a block (:data:`MIN_FRAMES` frames in a row or more) is the stack of the message
near it where there is one, and drafts nothing of its own: a line above it that a mode names (the
exception c10 raised, glog's ``*** SIGSEGV ... received by PID``, NCCL's watchdog timeout), or
that says it is a warning (c10's ``Warning:`` with frames: the run goes on), and a line a specific
mode names below it (``Segmentation fault (core dumped)``) are drafted, or not, by themselves. A
block nothing near names is a failure where the run did not go on after it (it ended the log or
a death followed, as for any line of ``other.unclassified``: :mod:`tooling.logs.unknown`), drafted
as that, never under a mode by its frames: a frame names a component (the NCCL watchdog's thread
carries its timeouts and the CUDA errors it caught alike), not what went wrong in it. Its frame
lines are the draft's lines, the functions they name its evidence.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from tooling.logs import blocks

# the shapes, for the scan's automaton (Hyperscan and re alike) and for telling a line is a frame
PATTERNS = (r"(?:\+0x[0-9a-f]+)?\) \[0x[0-9a-f]{6,}\]",  # glibc's backtrace_symbols: "(+0x94ac3) [0x..."
            r"(?:^|[\s)\]:])#[0-9]{1,7} +0x[0-9a-f]{6,} in \S",  # gdb's, libunwind's (a stack overflow: #174652)
            r"\bframe #[0-9]{1,7}: \S",  # c10's
            r"(?:^|[\s)\]:])@ +0x[0-9a-f]{6,}\b")  # glog's signal handler
_FRAME = re.compile("|".join(PATTERNS), re.IGNORECASE)
MIN_FRAMES = 3  # in a row: one or two such lines may be anything (a pointer printed in a message)
MAX_FRAMES = 300  # lines of one block read (a deep recursion prints thousands)
ABOVE = 10  # lines above a block (its frames not counted) where its message is looked for: c10's
# exception, its advice lines and "Exception raised from ..." take up to 7
MAX_NAMES = 8  # functions kept as evidence
MAX_NAME = 120  # characters of one (C++ templates run long)
_WARNING = re.compile(r"\bwarn(?:ing)?\b|^\[?W[0-9]{4} ", re.IGNORECASE)
_NAMES = (re.compile(r"\(([^()\s]*?)\+0x[0-9a-f]+\) \[0x[0-9a-f]+\]\s*(.*)$", re.IGNORECASE),
          re.compile(r"#[0-9]+ +0x[0-9a-f]+ in (.+)$", re.IGNORECASE),
          re.compile(r"frame #[0-9]+: (.+?) \+ 0x[0-9a-f]+\b", re.IGNORECASE),
          re.compile(r"@ +0x[0-9a-f]+ +(.+)$", re.IGNORECASE))
_UNNAMED = ("", "<unknown function>", "(unknown)", "??")


def is_frame(text: str) -> bool:
    return _FRAME.search(text) is not None


def is_warning(text: str) -> bool:
    """Whether a line says it is a warning (c10's ``Warning:``, glog's W severity)."""
    return _WARNING.search(text) is not None


@dataclass(frozen=True)
class Block:
    starts: tuple[int, ...]  # of its frame lines
    texts: tuple[str, ...]
    complete: bool  # False: the buffer ended inside it


def block(buffer: bytearray, start: int, limit: int) -> Block:
    """The frame lines in a row from the one at ``start``."""
    starts, texts = [], []
    while len(starts) < MAX_FRAMES:
        if start < 0 or start >= limit:
            return Block(tuple(starts), tuple(texts), False)
        text, following = blocks.decode(buffer, start, limit)
        if not is_frame(text):
            break
        starts.append(start)
        texts.append(text)
        start = following
    return Block(tuple(starts), tuple(texts), True)


def above(buffer: bytearray, start: int, earlier: bytes) -> list[str]:
    """The ABOVE lines above the frame line at ``start`` that are not frames, nearest first
    (another block of the same stack, c10's chained exceptions, lies between a block and its
    message)."""
    found: list[str] = []
    for _, text in blocks.above(buffer, start, MAX_FRAMES + ABOVE, earlier):
        if not is_frame(text):
            found.append(text)
            if len(found) == ABOVE:
                break
    return found


def below(buffer: bytearray, start: int, limit: int, count: int) -> list[str]:
    """Up to ``count`` lines after the line at ``start``."""
    found: list[str] = []
    following = blocks.decode(buffer, start, limit)[1]
    while len(found) < count and 0 <= following < limit:
        text, following = blocks.decode(buffer, following, limit)
        found.append(text)
    return found


def names(texts: tuple[str, ...]) -> list[str]:
    """The functions the frames name, in the order printed (innermost first), each once."""
    found: dict[str, None] = {}
    for text in texts:
        name = _name(text)
        if name not in _UNNAMED and len(found) < MAX_NAMES:
            found[name[:MAX_NAME]] = None
    return list(found)


def _name(text: str) -> str:
    for shape, pattern in enumerate(_NAMES):
        found = pattern.search(text)
        if found is None:
            continue
        if shape == 0:  # a symbolizer's name after the address, else the symbol in the brackets
            return found.group(2).strip() or found.group(1)
        if shape == 1:  # "ncclCommWatchdog () from /lib/x.so", "raise (sig=6) at ../raise.c:51"
            return re.sub(r" \([^()]*\)$", "", re.split(r" (?:from|at) \S+$", found.group(1).strip())[0])
        return found.group(1).strip()
    return ""


def evidence(found: Block) -> str:
    """What the block shows, in words."""
    named = names(found.texts)
    return (f"{len(found.starts)} native stack frames" +
            (f", innermost first: {', '.join(named)}" if named else ", none with a function's name"))
