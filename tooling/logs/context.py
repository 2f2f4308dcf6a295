"""What a log line says about itself besides its message: when, on which host, on which rank.

Times: ISO 8601 (Python logging's ``2026-11-02 03:14:00,123``, SLURM's ``2026-11-02T03:14:00``,
torchrun's ``2026-11-02_03:14:05``), syslog ``Nov  2 03:14:02``, ``dmesg -T``'s
``[Mon Nov  2 03:14:02 2026]``, glog's ``E1102 03:14:00.123456`` (PyTorch's C++ messages; its own
logger leaves the month unpadded, ``E722``) and
``dmesg``'s ``[812345.678901]`` (seconds since boot: no absolute time). A time without a zone is
taken as UTC, one without a year as the year of "now" (the year before when that would put it in
the future); :class:`When` remembers both assumptions so that a draft can say so.

Hosts: the host field of syslog, ``slurmstepd``'s ``JOB 12 ON node042``, ``srun: error: node042:``
and NCCL's ``node042:1234:5678 [3] NCCL ...`` or ``node042:1234:5678 [3] misc/socket.cc:50 NCCL WARN``
(where ``[3]`` is the CUDA device, not a rank), and ``node=node042`` (a straggler detector's
``node='node042'`` quoted or not).
Ranks: PyTorch's ``[rank3]:`` prefix, ``[Rank 3]`` and ``rank 3`` / ``rank: 3`` (torchrun's
summary); torchrun's ``[default3]:`` and ``local_rank: 3`` are local ranks and are not taken.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import datetime, timedelta, timezone, tzinfo

_MONTHS = "jan feb mar apr may jun jul aug sep oct nov dec".split()
_MONTH = "(" + "|".join(_MONTHS) + ")"
_DAY = "(?:(?:mon|tue|wed|thu|fri|sat|sun) +)?"
_CLOCK = r"(\d\d):(\d\d):(\d\d)(?:[.,](\d{1,9}))?"

_LEAD = re.compile(r"(?:\[(?:rank|default)\d+\]:[ \t]?)+", re.IGNORECASE)  # torchrun's per-rank prefixes
_TAGS = re.compile(r"\[(rank|default)(\d+)\]", re.IGNORECASE)
_ISO = re.compile(r"\[?(\d{4})-(\d\d)-(\d\d)[T _]" + _CLOCK + r"[ ]?(Z|[+-]\d\d:?\d\d)?\]?", re.IGNORECASE)
_SYSLOG = re.compile(_DAY + _MONTH + r" +(\d{1,2}) " + _CLOCK, re.IGNORECASE)
_DMESG_T = re.compile(r"\[" + _DAY + _MONTH + r" +(\d{1,2}) " + _CLOCK + r" (\d{4})\]", re.IGNORECASE)
_GLOG = re.compile(r"\[?[IWEF](\d{1,2})(\d\d) " + _CLOCK)  # c10's own logger: "E722", month unpadded
_GLOG_REST = re.compile(r" +\d+ [^\]\s]+\] ?")  # "E1102 03:14:00.123 48213 ProcessGroupNCCL.cpp:616] "
_UPTIME = re.compile(r"\[ *(\d+\.\d+)\]")
# After a syslog or journald time: "node042 kernel:" or "node042 slurmd[123]:"
_HOST_FIELD = re.compile(r" +([A-Za-z0-9][\w.-]*) +[\w./@-]+(?:\[\d+\])?: ")
_LEVELS = {"info", "warning", "warn", "error", "debug", "critical", "fatal", "notice", "trace"}
_NCCL = re.compile(r"([A-Za-z0-9][\w.-]*):\d+:\d+ \[\d+\] (?:[\w./-]+\.\w+:\d+ )?(?=NCCL )")  # WARN: file:line first
_HOSTS = (re.compile(r"\b(?:JOB|STEP) \S+ ON (\S+) CANCELLED"), re.compile(r"srun: error: ([\w.-]+): tasks? [\d,-]+:"),
          re.compile(r"^\s*host\s*: (\S+)"), re.compile(r"\bnode=['\"]?([A-Za-z0-9][\w.-]*)"))
_RANK_TAG = re.compile(r"\[(?:PG [^\]]*?)?Rank (\d+)\]")
_RANK_WORD = re.compile(r"\brank\s*[:=]?\s*(\d+)\b", re.IGNORECASE)


@dataclass(frozen=True)
class When:
    at: datetime | None  # aware; None when the log counts seconds since boot
    uptime: float | None = None
    zone_assumed: bool = False  # the line gave no zone: UTC, or the zone of zone_from
    year_assumed: bool = False
    zone_from: int | None = None  # the line whose zone a zoneless time took

    def in_zone(self, zone: tuple[int, tzinfo] | None) -> When:
        """A zoneless time read in the zone other lines of its log give: (line, zone)."""
        if zone is None or not self.zone_assumed or self.at is None or self.zone_from is not None:
            return self
        return replace(self, at=self.at.replace(tzinfo=zone[1]), zone_from=zone[0])


@dataclass(frozen=True)
class Context:
    when: When | None
    host: str | None
    rank: int | None
    time: tuple[int, int]  # where the time is written in the line ((0, 0) when nowhere)
    message: int  # where the message starts, after the prefixes that say when, where and who


def _aware(parts: tuple[str | None, ...], year: int, zone: str | None) -> datetime | None:
    month, day, hour, minute, second, fraction = parts
    try:
        at = datetime(year, int(month or 0), int(day or 0), int(hour or 0), int(minute or 0), int(second or 0),
                      int((fraction or "0")[:6].ljust(6, "0")))
    except ValueError:  # "Feb 30", "25:00": not a time
        return None
    if zone is None:
        return at.replace(tzinfo=timezone.utc)
    return datetime.fromisoformat(at.isoformat() + ("+00:00" if zone.upper() == "Z" else zone))


def _yearless(parts: tuple[str | None, ...], now: datetime) -> When | None:
    at = _aware(parts, now.year, None)
    if at is not None and at > now + timedelta(days=1):  # a log from December read in January
        at = _aware(parts, now.year - 1, None)
    return When(at, zone_assumed=True, year_assumed=True) if at else None


def _month(name: str) -> str:
    return str(_MONTHS.index(name.lower()) + 1)


def time_at(line: str, pos: int, now: datetime) -> tuple[When | None, int]:
    """The time written at ``pos`` of ``line`` and where it ends; (None, pos) when there is none."""
    if found := _ISO.match(line, pos):
        y, mo, d, h, mi, s, frac, zone = found.groups()
        at = _aware((mo, d, h, mi, s, frac), int(y), zone)
        return (When(at, zone_assumed=zone is None), found.end()) if at else (None, pos)
    if found := _DMESG_T.match(line, pos):
        mo, d, h, mi, s, frac, y = found.groups()
        at = _aware((_month(mo), d, h, mi, s, frac), int(y), None)
        return (When(at, zone_assumed=True), found.end()) if at else (None, pos)
    if found := _SYSLOG.match(line, pos):
        mo, d, h, mi, s, frac = found.groups()
        return _yearless((_month(mo), d, h, mi, s, frac), now), found.end()
    if found := _GLOG.match(line, pos):
        return _yearless(found.groups(), now), found.end()
    if found := _UPTIME.match(line, pos):
        return When(None, uptime=float(found.group(1))), found.end()
    return None, pos


def _skip(line: str, pos: int) -> int:
    while pos < len(line) and line[pos] in " \t":
        pos += 1
    return pos


def _lead(line: str) -> tuple[int | None, int]:
    """The global rank in a line's torchrun prefixes, and where they end."""
    lead = _LEAD.match(line)
    if lead is None:
        return None, 0
    ranks = [int(n) for kind, n in _TAGS.findall(lead.group(0)) if kind.lower() == "rank"]
    return (ranks[0] if ranks else None), lead.end()


_LEVEL_FIRST = re.compile(r"\[?(?:" + "|".join(sorted(_LEVELS)) + r")\b", re.IGNORECASE)
_ANY_YEAR = datetime(2000, 1, 1, tzinfo=timezone.utc)  # (whether a time is there, not which)


def prefixed(line: str) -> bool:
    """Whether a line starts the way a log's lines do: with a rank prefix, a time or a level
    (tooling.logs.wrapped: the rest of a line the terminal wrapped starts with none)."""
    pos = _lead(line)[1]
    return pos > 0 or time_at(line, pos, _ANY_YEAR)[0] is not None or bool(_LEVEL_FIRST.match(line))


def line_time(line: str, now: datetime) -> When | None:
    """The time a line was written at, as :func:`context` reads it: the one it starts with (after
    its rank prefix), else an ISO time written inside it; for the lines the scan does not read
    whole (those a flagged line inherits its time from, progress lines)."""
    pos = _skip(line, _lead(line)[1])
    when, end = time_at(line, pos, now)
    return when if end > pos else _inside(line, pos, now)[0]


def _inside(line: str, pos: int, now: datetime) -> tuple[When | None, tuple[int, int]]:
    """An ISO time written inside a line that starts with none, from ``pos`` on, and where it is:
    SLURM's "CANCELLED AT 2026-11-02T05:00:00", submitit's "ERROR (2026-11-02 05:45:40,210)"."""
    anywhere = _ISO.search(line, pos)
    if anywhere is None:
        return None, (0, 0)
    when, end = time_at(line, anywhere.start(), now)
    return (when, (anywhere.start(), end)) if when else (None, (0, 0))


def context(line: str, now: datetime) -> Context:
    """When, where and by which rank a line was written, as far as the line itself says."""
    rank, pos = _lead(line)
    when, span, host, pos = _prefix(line, _skip(line, pos), now)
    if when is None:  # none at its start: one inside it (_inside)
        when, span = _inside(line, pos, now)
    host = host or next((found.group(1) for pattern in _HOSTS if (found := pattern.search(line, pos))), None)
    if rank is None:
        found = _RANK_TAG.search(line, pos) or _RANK_WORD.search(line, pos)
        rank = int(found.group(1)) if found else None
    return Context(when, host, rank, span, pos)


def _prefix(line: str, pos: int, now: datetime) -> tuple[When | None, tuple[int, int], str | None, int]:
    """The time a line starts with, where it is, the host after it (syslog) or after NCCL's
    prefix, and where the message starts."""
    start = pos
    when, pos = time_at(line, pos, now)
    span, host = ((start, pos) if when else (0, 0)), None
    if when is not None and (rest := _GLOG_REST.match(line, pos)):
        pos = rest.end()
    elif when is not None and when.uptime is None and (field := _HOST_FIELD.match(line, pos)):
        if field.group(1).lower() not in _LEVELS:
            host, pos = field.group(1), field.end()
    pos = _skip(line, pos)
    if when is not None and when.uptime is None and (uptime := _UPTIME.match(line, pos)):
        pos = _skip(line, uptime.end())  # "kernel: [812345.678901] NVRM: ..." under a syslog time
    if nccl := _NCCL.match(line, pos):
        host, pos = host or nccl.group(1), nccl.end()
    return when, span, host, pos


def log_zone(lines: list[str], now: datetime) -> tuple[int, tzinfo] | None:
    """(line number, zone) of the first of ``lines`` whose time has a zone: a log whose lines
    mostly give none (glog, syslog) often has some that do (Python's logging with %z)."""
    for number, line in enumerate(lines, 1):
        found = _ISO.search(line)
        if found and found.group(8):
            when, _ = time_at(line, found.start(), now)
            if when is not None and when.at is not None:
                return number, when.at.tzinfo  # type: ignore[return-value]
    return None


def line_prefix(line: str) -> str:
    """The per-rank prefix a line starts with (``[rank3]: ``), which every line of that rank's
    traceback repeats; empty when there is none."""
    return line[:_lead(line)[1]]
