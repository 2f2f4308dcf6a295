"""Many regular expressions against much text at once: Hyperscan where it is installed (a
multi-pattern automaton, gigabytes a second), Python's ``re`` otherwise (one pattern after the
other: the same answers, slower). Both report which patterns matched and where a match ends.
"""
from __future__ import annotations

import hashlib
import json
import os
import platform
import re
from pathlib import Path
from typing import Callable, Iterator, Sequence

from tooling.catalogue import literals

try:
    import hyperscan
except ImportError:  # not built for every platform: the re engine gives the same answers
    hyperscan = None

ENGINE = "hyperscan" if hyperscan is not None else "re"


class Matcher:
    """Patterns compiled once; :meth:`scan` yields ``(pattern index, end offset)`` of matches.

    Patterns are matched case-insensitively, ``^`` and ``$`` at every line break. With
    ``first_only`` each pattern is reported at most once per scanned text (enough to know a
    short text matches).
    """

    def __init__(self, patterns: Sequence[str], *, first_only: bool = False) -> None:
        self.patterns = list(patterns)
        self.first_only = first_only
        self._compiled: Callable[[bytes], Iterator[tuple[int, int]]] | None = None

    @property
    def _scan(self) -> Callable[[bytes], Iterator[tuple[int, int]]]:
        """Compiled at first use: a command that never matches (or matches elsewhere) pays nothing."""
        if self._compiled is None:
            if hyperscan is not None and self.patterns:
                self._compiled = self._hyperscan()
            else:
                compiled = [re.compile(p.encode(), re.IGNORECASE | re.MULTILINE) for p in self.patterns]
                self._compiled = lambda data: self._python(compiled, data)
        return self._compiled

    def scan(self, data: bytes) -> Iterator[tuple[int, int]]:
        return self._scan(data)

    def ends(self, data: bytes | bytearray, length: int) -> list[int]:
        """End offsets of every match in ``data[:length]``, for finding the lines that match in a
        big buffer (without copying it). Needs a matcher without ``first_only``: that reports a
        pattern once per buffer, not once per line."""
        assert not self.first_only, "first_only would report one line per pattern and buffer"
        with memoryview(data) as view, view[:length] as part:
            return [end for _, end in self._scan(part)]  # type: ignore[arg-type]

    def first(self, data: bytes) -> tuple[int, int] | None:
        """(pattern index, end offset) of the match that ends first, the scan stopped there: with
        several patterns, one that never matches would otherwise have the whole text scanned."""
        if hyperscan is None or not self.patterns:
            return min(self.scan(data), key=lambda hit: hit[1], default=None)
        database, scratch = self._first_database()
        hits: list[tuple[int, int]] = []

        def stop(index: int, start: int, end: int, flags: int, context: object) -> bool:
            hits.append((index, end))
            return True  # Hyperscan reports matches by their end, the first one first: enough

        try:
            database.scan(data, match_event_handler=stop, scratch=scratch)
        except hyperscan.ScanTerminated:
            pass
        return hits[0] if hits else None

    def _first_database(self) -> tuple["hyperscan.Database", "hyperscan.Scratch"]:
        if getattr(self, "_first", None) is None:  # (a database of its own: stopping is this scan's alone)
            flags = hyperscan.HS_FLAG_CASELESS | hyperscan.HS_FLAG_MULTILINE | hyperscan.HS_FLAG_ALLOWEMPTY
            database = _cached_database(self.patterns, flags | hyperscan.HS_FLAG_SINGLEMATCH)
            self._first = (database, hyperscan.Scratch(database))
        return self._first

    def matching(self, text: str) -> list[int]:
        """Indexes of the patterns that match ``text``, in pattern order."""
        return sorted({index for index, _ in self.scan(text.encode("utf-8", "surrogateescape"))})

    def _python(self, compiled: list[re.Pattern[bytes]], data: bytes) -> Iterator[tuple[int, int]]:
        for index, pattern in enumerate(compiled):
            if self.first_only:
                found = pattern.search(data)
                if found:
                    yield index, found.end()
            else:
                for found in pattern.finditer(data):
                    yield index, found.end()

    def _hyperscan(self) -> Callable[[bytes], Iterator[tuple[int, int]]]:
        assert hyperscan is not None
        flags = hyperscan.HS_FLAG_CASELESS | hyperscan.HS_FLAG_MULTILINE | hyperscan.HS_FLAG_ALLOWEMPTY
        if self.first_only:
            flags |= hyperscan.HS_FLAG_SINGLEMATCH
        database = _cached_database(self.patterns, flags)
        scratch = hyperscan.Scratch(database)

        def scan(data: bytes) -> Iterator[tuple[int, int]]:
            hits: list[tuple[int, int]] = []
            database.scan(data, match_event_handler=lambda i, start, end, f, c: hits.append((i, end)),
                          scratch=scratch)
            return iter(hits)

        return scan


def cache_dir(part: str = "hyperscan") -> Path:
    """Where the catalogue's work done once is kept for the next commands, in the user's cache."""
    home = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(home) / "tooling" / part


def _cached_database(patterns: list[str], flags: int) -> "hyperscan.Database":
    """A compiled database, from the cache when these patterns were compiled before: compiling
    some 300 patterns costs a quarter of a second that every command would otherwise pay. The
    cache is keyed by the patterns, the flags, Hyperscan's version, the machine and the code that
    spells patterns out (:mod:`tooling.catalogue.literals`, run only to compile); any problem
    with it (unwritable, corrupt) only means compiling again."""
    assert hyperscan is not None
    spelling = hashlib.sha256(Path(literals.__file__).read_bytes()).hexdigest()
    key = hashlib.sha256(json.dumps([patterns, flags, getattr(hyperscan, "__version__", ""),
                                     platform.machine(), spelling]).encode()).hexdigest()[:32]
    path = cache_dir() / f"{key}.db"
    try:
        return hyperscan.loadb(path.read_bytes(), hyperscan.HS_MODE_BLOCK)
    except Exception:  # missing, unreadable or from another build: compile instead
        pass
    database = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
    expressions = [literals.spelled_out(p).encode() for p in patterns]
    database.compile(expressions=expressions, ids=list(range(len(patterns))), elements=len(patterns),
                     flags=[flags] * len(patterns))
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        temp.write_bytes(hyperscan.dumpb(database))
        os.replace(temp, path)  # whole or not at all: a concurrent command reads either
    except OSError:
        pass
    return database
