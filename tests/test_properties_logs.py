"""Generated logs read by `tooling scan` whole and by `tooling watch` poll by poll: the same failures.

A log is drawn from the catalogue's proven log lines (tests/corpus/loglines/<mode>.txt) and the
healthy ones (normal.txt), with progress lines, runs of lines without a time and tracebacks,
each line with a time in one of the forms logs write (ISO with a zone or without, syslog, glog,
dmesg's seconds since boot) or none. It is written in pieces (a line may be half written when a
poll comes) and rotated by rename (the writer may finish some lines in the renamed file) or by
copytruncate, every file starting with the same launcher banner, longer than the 1 KiB a file's
head is known by (so a file emptied and written again starts as the old one did). The watch is
its real machinery, driven poll by poll (:class:`tooling.watch.logs.FollowedLog`, each poll with
a random budget of bytes, and what each poll gives to file: :func:`tooling.watch.watcher.taken`,
:func:`tooling.watch.watcher.to_file`); the scan is :func:`tooling.logs.scan.scan_logs` of
everything written, in the order written. What the watch files is what the scan drafts, with as
many occurrences, and each failure is filed as one incident, whatever the polls.

What the log does not do: rotate twice between two polls (a file written and rotated away
unseen cannot be read), rotate inside a traceback (a block cut by a rotation is read as two
files' ends), end within TAIL lines of a line no mode names or inside a traceback, or rotate so (such a
line, and a traceback cut by the end, is a failure only once the log ended, which a followed log never
does: tooling.logs.unknown; a rotated copy's last line is its file's end), or pause before its end (a
pause of SETTLE seconds is where a watch takes a half-read block, or a line waiting for a cause below
it, as written out: tooling.watch.tail).
"""
from __future__ import annotations

import os
import re
import shutil
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from itertools import accumulate
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from support import CORPUS
from tooling.logs import blocks
from tooling.logs.context import line_prefix
from tooling.logs.drafts import Draft, Key
from tooling.logs.scan import scan_logs
from tooling.logs.unknown import TAIL, ends_on_error
from tooling.watch.logs import FollowedLog
from tooling.watch.occurrences import failure_key
from tooling.watch.watcher import taken, to_file

NOW = datetime(2026, 11, 29, 12, 0, tzinfo=timezone.utc)
START = NOW - timedelta(hours=6)  # the log's first line; every line stays before NOW
BOOT = START - timedelta(seconds=812_345)  # dmesg counts seconds since this
WHERE: dict[str, Any] = {"run": "demo-7b", "extra": {}}
LOGLINES = CORPUS / "loglines"


def _lines(path: Path) -> list[str]:
    return [line for line in path.read_text("utf-8").splitlines() if line.strip() and not line.startswith("#")]


FAILURES = sorted({line for path in LOGLINES.glob("*.txt") if not path.name.endswith(".description.txt")
                   and path.name != "normal.txt" for line in _lines(path)})
HEALTHY = _lines(LOGLINES / "normal.txt")
# lines no mode names (a signal, an exit status, a logger's ERROR): a failure only if the run did not
# go on after them, which a followed log never shows (tooling.logs.unknown): no log ends on one
UNNAMED = tuple(_lines(LOGLINES / "other.unclassified.txt"))
# a traceback's last line is not indented and has the prefix of its header (none here): one
# that is or has another would leave the traceback open, and the next line written, whatever it
# is, would end it (in the next file, after a rotation). So only lines that start with an exception's
# name: a proven line with a prefix line_prefix does not know ("2023-06-02T12:54:40+03:00\t{...}",
# a table's row) left the traceback open across a rotation, and the watch counted a flap once more
EXCEPTIONS = sorted({line.strip() for line in FAILURES if not line_prefix(line.strip())
                     and re.match(r"[A-Za-z_][\w.]*(?:Error|Exception|Interrupt|Exit)\b", line.strip())})
BANNER = "".join(f"launcher: {line}\n" for line in HEALTHY[:40])[:1500].rsplit("\n", 1)[0] + "\n"
assert len(BANNER.encode()) > 1024, "the banner must be longer than the head a file is known by"


def stamped(style: str, at: datetime) -> str:
    """A time as a log writes it, before the message."""
    if style == "iso":
        return at.strftime("%Y-%m-%dT%H:%M:%SZ ")
    if style == "seoul":  # a zone that is not UTC: zoneless times of the log are read in it
        return at.astimezone(timezone(timedelta(hours=9))).strftime("%Y-%m-%d %H:%M:%S,000+09:00 ")
    if style == "zoneless":
        return at.strftime("%Y-%m-%d %H:%M:%S,123 ")
    if style == "syslog":
        return at.strftime("%b %d %H:%M:%S node042 kernel: ")
    if style == "dmesg":
        return f"[{(at - BOOT).total_seconds():.6f}] "
    if style == "glog":  # c10's own logger: no year, no zone
        return at.strftime("E%m%d %H:%M:%S.123456 48213 ProcessGroupNCCL.cpp:616] ")
    return ""


def traceback(at: str, exception: str) -> str:
    """A Python traceback whose last line is ``exception`` (its header stamped ``at``)."""
    return (f"{at}Traceback (most recent call last):\n  File \"train.py\", line 7, in <module>\n    main()\n"
            f"{exception}\n")


@dataclass(frozen=True)
class Step:
    """What happens next to the log: text appended, a poll, or a rotation."""
    kind: str  # "write", "poll", "rename", "copytruncate"
    text: str = ""  # written (for a rename: into the renamed file, before the writer opens a new one)
    budget: int = 0


@st.composite
def logs(draw: st.DrawFn) -> list[Step]:
    """A log being written, polled and rotated."""
    styles = draw(st.lists(st.sampled_from(["iso", "seoul", "zoneless", "syslog", "dmesg", "glog", "none"]),
                           min_size=1, max_size=3))
    at, steps = START, []
    for _ in range(draw(st.integers(1, 12))):
        chunk = []
        for _ in range(draw(st.integers(1, 6))):
            at += timedelta(seconds=draw(st.integers(0, 90)))
            stamp = stamped(draw(st.sampled_from(styles)), at)
            kind = draw(st.sampled_from(["failure", "failure", "healthy", "progress", "traceback", "filler"]))
            if kind == "filler":  # many lines without a time: further than a time or a cause is looked for
                chunk.append("".join(f"step {n} | loss 2.31\n" for n in range(draw(st.integers(10, 120)))))
            elif kind == "traceback":
                chunk.append(traceback(stamp, draw(st.sampled_from(EXCEPTIONS))))
            else:
                message = (draw(st.sampled_from(FAILURES)) if kind == "failure" else
                           draw(st.sampled_from(HEALTHY)) if kind == "healthy" else f"step {len(steps)} | loss 2.31")
                chunk.append(stamp + message + "\n")
        text = "".join(chunk)
        cut = draw(st.integers(0, len(text)))  # a poll may come while a line is half written
        steps += [Step("write", text[:cut]), Step("poll", budget=draw(st.integers(1, 1 << 16))), Step("write", text[cut:])]
        if draw(st.booleans()):
            steps.append(Step("poll", budget=draw(st.integers(1, 1 << 16))))
        if draw(st.integers(0, 3)) == 0:  # at a line's end: the writer's lines are whole
            _went_on(steps)  # (a rotated copy's last line is its file's end: as with tracebacks, no unnamed line)
            late = "".join(f"step {n} | loss 2.31 (late)\n" for n in range(draw(st.integers(0, 3))))
            kind = draw(st.sampled_from(["rename", "copytruncate"]))
            steps += [Step(kind, late if kind == "rename" else ""), Step("poll", budget=draw(st.integers(1, 1 << 16)))]
    _went_on(steps)
    return steps


def _went_on(steps: list[Step]) -> None:
    """A progress line after the log's last lines if one of them is one no mode names (see UNNAMED):
    not only the last line, any within TAIL lines of the end, which ends the log as much for a scan;
    and after a last line stamped at glog's error severity (the "glog" stamp), which ends it on an error."""
    last = "".join(step.text for step in steps).rstrip("\n").split("\n")[-TAIL:]
    if any(line.endswith(UNNAMED) for line in last) or ends_on_error(last[-1]) or _inside_a_traceback(last):
        steps.append(Step("write", "step 0 | loss 2.31 (went on)\n"))


def _inside_a_traceback(last: list[str]) -> bool:
    """Whether the log's last lines end inside a traceback (a header with no exception line below:
    a bare header, a proven line of its own, drawn last): a failure that ended the log for a scan,
    and a line no mode names (tooling.logs.unknown), which a followed log never shows."""
    buffer = ("\n".join(last) + "\n").encode()
    starts = accumulate((len(line.encode()) + 1 for line in last[:-1]), initial=0)
    return any(blocks.is_traceback(line) and blocks.exception_line(buffer, start, len(buffer)) is blocks.INCOMPLETE
               for start, line in zip(starts, last))


def _busy(path: Path) -> None:
    """The file was written just now, by the file system's clock: not quiet (tooling.watch.tail.SETTLE)."""
    future = time.time() + 600
    os.utime(path, (future, future))


def _settle(folder: Path) -> None:
    past = time.time() - 600
    for path in folder.iterdir():
        os.utime(path, (past, past))


class Filed:
    """What a watch files, poll after poll: the occurrences of each failure (a draft's failure,
    tooling.logs.drafts.failure), and the incident each is filed as (tooling.watch.occurrences
    .failure_key: an open incident with that key gets the occurrences of the later polls)."""

    def __init__(self) -> None:
        self.occurrences: Counter[Key] = Counter()
        self.incidents: dict[Key, set[tuple[str, ...] | None]] = {}

    def add(self, drafts: list[Draft]) -> None:
        for draft in drafts:
            key = (draft.mode.id, draft.codes)
            values = to_file(draft, WHERE).values
            self.occurrences[key] += draft.occurrences
            self.incidents.setdefault(key, set()).add(failure_key({**values, **values["extra"]}))


def _append(path: Path, text: str, written: list[str]) -> None:
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(text)
    written.append(text)
    _busy(path)


def _rotate(log: Path, step: Step, number: int, written: list[str]) -> None:
    """logrotate's turn: the log renamed (the writer finishing ``step.text`` in it) or copied and
    emptied; then the writer starts over, with its banner."""
    rotated = log.with_name(f"{log.name}.{number}")
    if step.kind == "rename":
        log.rename(rotated)
        _append(rotated, step.text, written)
    else:
        shutil.copyfile(log, rotated)
        os.truncate(log, 0)
        _busy(rotated)
    _append(log, BANNER, written)


def watched(folder: Path, steps: list[Step]) -> tuple[Filed, str, int]:
    """What the watch files over the polls, everything written to the log in order, lines read."""
    log, written, filed, rotations = folder / "train.log", [], Filed(), 0
    _append(log, BANNER, written)
    followed = FollowedLog(log, saved=[], lines=0)
    try:
        for number, step in enumerate(steps):
            if step.kind == "write":
                _append(log, step.text, written)
            elif step.kind == "poll":
                followed.poll(now=NOW + timedelta(seconds=number), budget=step.budget)
                filed.add(taken(followed, settled=False))  # the writer writes on: it never paused
            else:
                rotations += 1
                _rotate(log, step, rotations, written)
        _settle(folder)
        while followed.poll(now=NOW + timedelta(seconds=len(steps))):
            filed.add(taken(followed, settled=False))
        filed.add(taken(followed, settled=True))  # the end: read to it, and quiet
        return filed, "".join(written), followed.lines
    finally:
        followed.close()


def scanned(folder: Path, text: str) -> Counter[Key]:
    """The occurrences of each failure the scan of the whole log drafts."""
    whole = folder / "whole.log"
    whole.write_text(text, encoding="utf-8")
    return Counter({(d.mode.id, d.codes): d.occurrences for d in scan_logs([whole], now=NOW).drafts})


def check(steps: list[Step]) -> None:
    with tempfile.TemporaryDirectory() as temp:
        folder = Path(temp) / "logs"
        folder.mkdir()
        filed, text, lines = watched(folder, steps)
        assert lines == text.count("\n")
        drafted = scanned(Path(temp), text)
        assert +filed.occurrences == drafted, f"watch filed {dict(+filed.occurrences)}, scan drafted {dict(drafted)}"
        split = {key: keys for key, keys in filed.incidents.items() if len(keys) != 1 or None in keys}
        assert not split, f"failures filed as more than one incident, or none: {split}"


@given(logs())
def test_watch_files_what_scan_drafts_whatever_the_polls(steps: list[Step]) -> None:
    check(steps)


# What the property found, each kept as it was found (or as small), with what was wrong.
DOWN = "2026-11-29T06:00:00Z \tstate:\t\t 1: DOWN\n"  # a link down (network.link-flap)
PREAMBLE_LINE = "        Correctable Error                 : 0\n"  # (normal.txt's: an error line no mode names)
HEADER = "Traceback (most recent call last):\n"
WENT_ON = "step 0 | loss 2.31 (went on)\n"  # (what _went_on writes)


def _poll(budget: int = 1 << 20) -> Step:
    return Step("poll", budget=budget)


def _w(text: str) -> Step:
    return Step("write", text)


def progress_lines(first: int, count: int) -> str:
    return "".join(f"step {n} | loss 2.{n % 10}\n" for n in range(first, first + count))


def _xid79(k: int, seconds: int) -> str:
    return f"[{812345.5 + seconds * k:.6f}] NVRM: Xid (PCI:0000:ca:00): 79, pid={4242 + k}, name=python3, GPU has fallen off the bus.\n"


FOUND = {
    # defect 3: copytruncate, the file written again past where it was read, under the same
    # banner: the watch read on at the old offset in the new file and missed both Xid lines
    "regrown past the offset": [_w(progress_lines(0, 20)), _poll(), _w(_xid79(0, 0)), Step("copytruncate"),
                                _w(progress_lines(0, 5) + _xid79(1, 120) + progress_lines(5, 100))],
    # the same when only the banner had been read: the copy that appeared beside it tells
    "regrown after the banner only": [_poll(), _w(_xid79(0, 0)), Step("copytruncate"), _w(progress_lines(0, 80))],
    # a copy read to its end with a budget smaller than a line cut the line in two
    "a copy read in small budgets": [_poll(1), _w("2026-11-29T06:00:00Z step 0 | loss 2.31\n"),
                                     Step("copytruncate"), _poll(1), _w(DOWN)],
    # polls that ran out of budget never looked at the name: the second file was never read
    "renamed twice while behind": [_poll(1), _w(DOWN * 6), Step("rename"), _poll(1), _w(DOWN), _poll(1), _w(DOWN),
                                   _poll(1), _w(DOWN), _poll(1), Step("rename")],
    # a file copied and emptied before it was first read went on from nothing, not from the file
    # before it: its lines were counted from 1, and a cause 150 lines below explained an abort
    "copied before it was read": [
        _poll(1), _w("[812345.000000]   traceback : Signal 6 (SIGABRT) received by PID 2385923\n"), Step("rename"),
        _poll(1), _w(progress_lines(0, 60)), Step("rename"), _poll(1), _w(progress_lines(60, 50) + DOWN),
        Step("copytruncate"), _poll(1)],
    # nor did polls that ran out of budget on an older file: the name was looked at after it
    "renamed while behind on an older file": [_poll(1), _w(DOWN), Step("rename"), _poll(1), _poll(1), _w(DOWN),
                                              _poll(1), _w(DOWN), Step("rename"), _poll(1), _poll(1), _w(DOWN),
                                              Step("rename"), _poll(1)],
    # defect 4: 13 processes report one fall off the bus, 20 s apart: one occurrence, not 13
    "a poll per line": [step for k in range(13) for step in (_w(_xid79(k, 20)), _poll())],
    # lines of one failure in other words, in two polls, were filed as two incidents
    "one failure in two wordings": [_w("2026-11-29T06:00:00Z Segmentation fault (core dumped)\n"), _poll(),
                                    _w("2026-11-29T06:01:01Z   traceback : Signal 11 (SIGSEGV) received by PID 6421\n")],
    # a failure filed keeps the identity it was filed with (the incident a later poll adds to)
    "an identity read from later lines": [
        _w("2026-11-29T06:00:00Z  iteration     5426/  250000 | lm loss: 6.4 | grad norm: nan |\n"), _poll(),
        _w("2017-08-20 16:11:46 INFO  DistriOptimizer$:295 - [Epoch 1 3072/60000][Iteration 24][Wall Clock "
           "11.2s] Trained 128 records in 0.3 seconds. Throughput is 426.2 records/second. Loss is NaN.\n")],
    # the zone a later line gives was taken for times written before it, by a scan and not a watch
    "a zone given after the first poll": [_poll(), _w("2026-11-29 06:00:00,123 \tstate:\t\t 1: DOWN\n"), _poll(),
                                          _w("2026-11-29 15:00:30,000+09:00 \tstate:\t\t 1: DOWN\n")],
    # a line without a time took the time of the line above it in a scan, not across a rotation
    "a time from before a rotation": [_poll(), _w(DOWN), Step("rename"), _poll(), _w("[812345.000000] \tstate:\t\t 1: DOWN\n")],
    # a line whose time is not at its start gave its time to the lines below in one poll only
    "a time inside a line": [_poll(), _w(DOWN + "Kill task failed root 2024-01-25T15:12:23 ip-10-0-1-23\n"),
                             _poll(), _w("\tstate:\t\t 1: DOWN\n")],
    # a ChildFailedError line with no summary below took the next 80 lines for one (and hid them)
    "a ChildFailedError alone": [_poll(), _w("2026-11-29T06:00:00Z torch.distributed.elastic.multiprocessing.errors."
                                    "ChildFailedError: \n"), Step("rename"), _poll(),
                                 _w("2026-11-29T06:00:00Z NVRM: fallen off the bus and is not responding to commands.\n")],
    # lines are counted across the files of a rotated log: a vaguer failure 101 lines after the
    # narrower one is a failure of its own
    "lines counted across a rotation": [
        _poll(), _w("/opt/conda/lib/python3.10/multiprocessing/resource_tracker.py:224: UserWarning: resource_tracker: "
           "There appear to be 7 leaked shared_memory objects to clean up at shutdown\n" + progress_lines(0, 60)),
        Step("rename"), _poll(), _w(progress_lines(60, 40) + "2026-11-29T06:00:00Z ERROR: Unexpected bus error "
                                    "encountered in worker. This might be caused by insufficient shared memory (shm).\n")],
    # a consequence waits for its cause below it while the writer writes on; it was filed alone
    # when a poll came in between
    "a consequence before its cause": [
        _w("[E ProcessGroupNCCL.cpp:737] [Rank 1] Watchdog caught collective operation timeout: "
           "WorkNCCL(SeqNum=469508, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1802212 milliseconds before "
           "timing out.\n"), _poll(), _w(_xid79(0, 0))],
    # a line at the start of a poll that waits for the lines below it (a glog check no mode names:
    # other.unclassified) left the poll nothing read, and the scanner took the last byte of its
    # buffer for that of a partial line: one line too many (38 of 37). Here the run goes on after
    # it, as it did not where found: a watched writer that paused is no run that ended
    # (tooling.logs.unknown), so the scan of the whole log and the watch part at its end
    "a line waiting at a poll's start": [
        _poll(3), _w("2026-11-29T06:00:00Z Traceback (most recent call last):\n"
                     "  File \"train.py\", line 7, in <module>\n    main()\n"
                     "2019-09-08 19:00:58.593154: E tensorflow/compiler/xla/xla_client/tf_logging.cc:11] Check failed: "
                     "session->session()->Run( feed_inputs, {}, {cached_node.operations[0]}, &outputs) == [3/161315]\n"
                     + DOWN), Step("rename"), _poll(1659), _poll(4), _w(DOWN), _poll(1), _w(DOWN), _poll(25), _w(DOWN),
        _poll(6), _w(DOWN + progress_lines(0, 1))],
    # a rank's death, the log rotated, and the launcher's exit 16 lines below it in the next file:
    # one episode (tooling.logs.unknown) for a scan, two failures for a watch, whose next file's
    # scanner went on from the last one's times and line numbers but not from its episode
    "an episode across a rotation": [
        _poll(1), _w("2026-11-29T06:00:00Z             Exit status of rank 0: killed by signal 9\n"
                     "step 0 | loss 2.31 (went on)\n"), Step("rename"), _poll(1), _poll(1),
        _w("2026-11-29T06:00:00Z         (command exited with non-zero exit code)\nstep 0 | loss 2.31 (went on)\n")],
    # (not drawn: written for the same gap) nor from its latest stop told: the launcher's exit
    # after a Ctrl-C's in the file before is the stop's unwinding, for a scan, and was a failure
    "a stop told before a rotation": [
        _poll(), _w("2026-11-29T06:00:00Z Received 2 death signal, shutting down workers\n" + progress_lines(0, 1)),
        Step("rename"), _poll(), _w("2026-11-29T06:00:01Z (command exited with non-zero exit code)\n"
                                    + progress_lines(1, 1))],
    # an error line consumed by one poll, a traceback's header in the next: the lines a traceback's
    # preamble is looked for in (tooling.logs.unknown.PREAMBLE) stopped at the buffer's first, so
    # the watch counted the failure once and the scan, which took the line into it, twice
    # after a rename the copy copytruncate made kept the zone of its own first lines (+09:00) over the
    # log's, which the file before it had found (Z): the watch read the last zoneless DOWN nine hours
    # off and filed the link flap twice where the scan drafted it once
    "the log's zone across a rename and a copytruncate": [
        _w(DOWN), _w(""), _poll(1), _w(DOWN), Step("rename"), _poll(1), _w(""), _poll(1),
        _w("2026-11-29 15:00:00,000+09:00 \tstate:\t\t 1: DOWN\n"), _poll(14011), _w(""), _poll(1), _w(DOWN),
        Step("copytruncate"), _poll(1), _w(""), _poll(1), _w("2026-11-29 06:00:00,123 \tstate:\t\t 1: DOWN\n")],
    # a bare traceback header (software.bug's proven line) drawn last, after a poll: the log ended
    # inside a traceback, which a followed log never shows (see _inside_a_traceback): the watch filed
    # nothing, the scan drafted the cut with its header counted twice. Written as the draw is now
    "a bare traceback header after a poll": [_poll(), _w(HEADER), _w(WENT_ON)],
    "a preamble read by the poll before": [
        _w(PREAMBLE_LINE), _poll(), _w(traceback("", "AssertionError: Parameter hashes not matching across DP replicas"))],
}


@pytest.mark.parametrize("steps", FOUND.values(), ids=FOUND.keys())
def test_what_the_property_found(steps: list[Step]) -> None:
    check(steps)


def _cut(drafts: list[Draft]) -> list[tuple[str, int, int, bool]]:
    return [(d.mode.id, d.occurrences, d.count, d.cut) for d in drafts]


def _watched_to_a_header(folder: Path, budget: int, *, rotated: bool) -> list[Draft]:
    """What a watch files of a log whose writer wrote a bare traceback header, then nothing (the
    log copied and emptied after it: ``rotated``), read in polls of ``budget`` bytes."""
    log, filed = folder / "train.log", []
    _append(log, BANNER + progress_lines(0, 3), [])
    followed = FollowedLog(log, saved=[], lines=0)
    try:
        followed.poll(now=NOW, budget=budget)
        filed += taken(followed, settled=False)
        _append(log, HEADER, [])
        if rotated:
            _rotate(log, Step("copytruncate"), 1, [])
        _settle(folder)
        while followed.poll(now=NOW, budget=budget):
            filed += taken(followed, settled=False)
        return filed + taken(followed, settled=True)
    finally:
        followed.close()


@pytest.mark.parametrize("budget", [7, 1 << 20])
def test_a_bare_traceback_header_that_ends_the_log_is_one_cut_failure(tmp_path: Path, budget: int) -> None:
    """The log the property found, where it did end: the scan drafts the traceback it cut as one
    line (the header is its last line too), and so does a watch that reads a file done growing
    (the copy copytruncate made: tooling.watch.logs); where the writer only paused, it may write
    on: nothing yet."""
    (tmp_path / "whole.log").write_text(BANNER + progress_lines(0, 3) + HEADER, "utf-8")
    assert _cut(scan_logs([tmp_path / "whole.log"], now=NOW).drafts) == [("other.unclassified", 1, 1, True)]
    for rotated, filed in ((True, [("other.unclassified", 1, 1, True)]), (False, [])):
        folder = tmp_path / f"logs-{rotated}"
        folder.mkdir()
        assert _cut(_watched_to_a_header(folder, budget, rotated=rotated)) == filed


def test_a_chunk_that_ends_above_a_traceback_keeps_its_preamble(tmp_path: Path) -> None:
    """The scan's own chunks end anywhere too: one that ends right above a traceback's header
    leaves the lines above it readable to the next (tooling.logs.chunks.Chunks.earlier)."""
    log = tmp_path / "train.log"
    above = progress_lines(0, 10) + PREAMBLE_LINE  # (longer than the traceback: a chunk this long holds it whole)
    log.write_text(above + traceback("", "AssertionError: Parameter hashes not matching across DP replicas"), "utf-8")
    whole = [(d.mode.id, d.occurrences, d.count) for d in scan_logs([log], now=NOW).drafts]
    assert whole == [("replica.weight-desync", 2, 2)]  # the preamble's line and the exception's
    for chunk in range(len(above), len(above) + 25):  # the first ends right after the preamble, or in the traceback
        assert [(d.mode.id, d.occurrences, d.count) for d in scan_logs([log], now=NOW, chunk=chunk).drafts] == whole
