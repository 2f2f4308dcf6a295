"""Failures no mode of the catalogue names, drafted all the same: ``other.unclassified``.

A line of that mode (a ``fatal error``, a glog FATAL check, a logger's ERROR level, a process that
exited non-zero or died of a signal: the mode's recognisers) is a failure only where the run did
not go on after it. A death (an exit status, a signal, a core dump) is one by itself; any other
such line is one when

- a death follows it within :data:`TAIL` lines (it killed its rank), or
- the log ends within :data:`TAIL` lines of it (it ended the log),

and no line between says the run went on (a progress line, "reconnected", "succeeded"). A line
that says it will retry is no failure yet, nor is one written while the process unwinds from a
stop it was told (a Ctrl-C, a launcher closing its workers). A log that ends inside a traceback
is such a line too: its header and last line, with a note that the exception is missing; not
the traceback of a thread other than the main one, which its process outlives.

"Ends" is the end of the log for ``tooling scan``; for ``tooling watch`` only the end of a file
done growing (:attr:`tooling.logs.chunks.Chunks.ended`): a writer that paused is not a run that
ended. Lines of one episode (each within TAIL lines of the one before) are one failure, keyed by
the first one's template: its words and codes without the numbers, addresses and paths that
vary (:func:`template`), so the same unknown error on another rank, node or day is the same
failure, and tooling repeats meets it (an unclassified incident's key is that template).
"""
from __future__ import annotations

import re
import signal
from enum import Enum

from tooling.catalogue.codes import line_words
from tooling.catalogue.signatures import is_progress, normalise
from tooling.logs import blocks

UNCLASSIFIED = "other.unclassified"
TAIL = 40  # lines: "ends the log" is within this many of its end, "kills a rank" this close to a death
TEMPLATE_WORDS = 10  # as tooling.analysis.identity's fingerprint of an error line
CUT = "the log ends inside its traceback: the exception it raised is not in the log"
_DEATH = re.compile(r"\bexit(?:s|ed)?\b.{0,40}?\b(?:code|status)\b|\bexitcode\b|\bsignal\b|core dumped"
                    r"|^\s*killed\s*$|\bSIG[A-Z]{3,6}\b|childfailederror|terminate called|\baborted\b", re.IGNORECASE)
_WENT_ON = re.compile(r"\b(?:succeeded|successfully|recovered|reconnected|resum(?:ed|ing))\b"
                      # a report of work done: "[0: 0/9]  emd1: 0", "1651/1702 [13:00<00:24, loss=0.158", "'loss': 8.11"
                      r"|\b[0-9]+/[0-9]+\b.*\b[a-z_][a-z0-9_]*\s*[:=]\s*-?[0-9]"
                      r"|['\"]?\b(?:loss|grad_norm|learning_rate)['\"]?\s*[:=]\s*-?[0-9]", re.IGNORECASE)
# a process told to stop (an operator's Ctrl-C, a launcher stopping its workers, a scheduler's
# SIGTERM): what it writes while it unwinds is the stop, not a failure of its own. One of scan's
# automaton patterns (the subset Hyperscan and re share), so the scan knows the latest such line.
STOPS = r"closing signal|death signal|shutting down workers|KeyboardInterrupt|received signal SIG(INT|TERM)|\bSIGINT\b"
_STOPS = re.compile(STOPS, re.IGNORECASE)
_BY_HAND = re.compile(r"\s*(?:[a-z_]+\.)*KeyboardInterrupt\b")
# the stop a launcher was told, by which signal: torchrun's "Received 15 death signal, shutting down
# workers" ("Received Signals.SIGTERM death signal"), its "SignalException: Process 17 got signal: 15"
_TOLD = re.compile(r"\breceived (?:signals\.)?(SIG[A-Z]{2,6}|[0-9]{1,2}) death signal"
                   r"|\bgot signal:? ?(SIG[A-Z]{2,6}|[0-9]{1,2})\b|\breceived signal (SIG[A-Z]{2,6}|[0-9]{1,2})\b",
                   re.IGNORECASE)
# a stop from outside (a scheduler's, an operator's kill, a parent component that tore the job
# down): a failure of the run unless a line near it says why; a person's Ctrl-C or Ctrl-\ is not
EXTERNAL = frozenset({signal.SIGTERM, signal.SIGHUP})
# what a process prints just before a traceback, about the same failure: "THCudaCheck FAIL file=...
# error=2 : out of memory", "CUDA error 700 at foo.cu:12", "Fatal error in worker 3" (a warning's
# words, "UserWarning: ... will be an error", are not an error)
PREAMBLE = 5  # lines above a traceback's header looked at
_SAYS_ERROR = re.compile(r"\b(?:errors?|fail(?:s|ed|ure)?|fatal|abort(?:ed)?)\b", re.IGNORECASE)
_NOT_ERROR = re.compile(r"warn|\binfo\b|\bdebug\b", re.IGNORECASE)
# A log that ends on a bare notice right after the run's progress, with nothing said about it: the
# shell's word for the signal that killed it, in its locale ("Killed", "已杀死", "Getötet",
# "Abgebrochen (Speicherabzug geschrieben)"), a few words with no digit, path or punctuation, the
# last line of the log, said once (a phase the run prints, "Evaluating", comes back each epoch); not
# a word that says the run ended well (in English only, for now)
NOTICE = 60  # characters at most
AFTER_PROGRESS = 8  # lines above it (blank ones not counted) searched for the run's progress
_BARE = re.compile(r"[^\W\d_]+(?: +[^\W\d_]+){0,4}(?: *\([^\W\d_]+(?: +[^\W\d_]+){0,3}\))?")
_ENDED_WELL = re.compile(r"\b(?:done|finish\w*|complete\w*|success\w*|sav(?:e|ed|ing)|exit\w*|bye|end(?:ed)?"
                         r"|stopp?(?:ed|ing)?|over)\b", re.IGNORECASE)
# a phase the run enters, printed once at the end of a log still being written or a paste cut there
# ("Evaluating", "Loading data", "Starting validation"): the run's own words, not a shell's notice
_PHASE = re.compile(r"\b(?:[a-z]+ing|start\w*|begin\w*)\b", re.IGNORECASE)
# a line of metrics: three readings or more ("episode/score 0.1 / train/loss/con 0.04 / fps 39.3")
_READING = re.compile(r"[A-Za-z_][\w/.-]*['\"]?\s*[:=]?\s*[-+]?[0-9]+(?:\.[0-9]+)?(?:e[-+]?[0-9]+)?\b", re.IGNORECASE)
# glog's and absl's prefix (TensorFlow, JAX, XLA, the TPU runtime, torch's elastic agent) at ERROR
# (E) or FATAL (F) severity: "E1224 22:35:53.165575   26868 real_program_continuator.cc:1331] ...".
# The recognisers read the words of a line, not its prefix (matching the prefix anywhere costs the
# scan a third, see the catalogue's 'Check failed: '); a log's last line is read for it at its end.
# TensorFlow's C++ logging (XLA's client, TF 1 and 2) writes the same severity after a date:
# "2022-04-04 00:27:49.642414: E tensorflow/compiler/xla/xla_client/xla_util.cc:88] ...", with the
# thread's id after it in some builds ("...: E    1578 tensorflow/...").
# absl's prefix as XLA's PJRT and torch_xla write it has seconds since the epoch in the clock's last
# field, its date 0000: "E0000 00:00:1743713172.513857  698835 pjrt_stream_executor_client.cc:3072] ".
_SEVERE = re.compile(r"(?:^|[\s:>])[EF][0-9]{4} [0-9]{2}:[0-9]{2}:(?:[0-9]{2}|[0-9]{10})(?:\.[0-9]+)? +[0-9]+ [^ \]]+:[0-9]+\] "
                     r"|[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]+: [EF] +(?:[0-9]+ +)?"
                     r"[^ \]]+:[0-9]+\] ")
_RETRIES = re.compile(r"\bretr(?:y|ying|ies|ied)\b|\btry(?:ing)? again\b", re.IGNORECASE)
# Python's headers of a traceback its process outlives: a thread other than the main one ("Exception
# in thread Thread-5:", "Exception in thread Thread-2 (_pin_memory_loop):"), that thread died and
# its process went on (wandb's uploader, a logger's, a prefetcher's); an exception Python swallowed
# where it cannot raise ("Exception ignored in: <function _MultiProcessingDataLoaderIter.__del__
# ...>": a destructor, an atexit or weakref callback). A log cut inside one shows no death of the run
_THREAD = re.compile(r"\bException in thread [^:\n]{1,80}:|\bException ignored in: ")


class Fate(Enum):
    """What followed an unclassified line."""
    ENDED = "ended the log"
    KILLED = "killed its rank"
    WENT_ON = "the run went on"
    WAIT = "read it again with more of the log"


def template(message: str) -> str:
    """A line without what varies between occurrences (the key two unknown failures meet by)."""
    return line_words(message, limit=TEMPLATE_WORDS) or normalise(message)


def dies(text: str) -> bool:
    """Whether a line says a process died (an exit status, a signal, a core dump, an abort)."""
    return _DEATH.search(text) is not None


def went_on(text: str) -> bool:
    """Whether a line says the run went on: a progress report, a recovery."""
    return is_progress(text) or _WENT_ON.search(text) is not None


def says_error(text: str) -> bool:
    """Whether a line says an error, in any words: not a warning, not progress (see PREAMBLE)."""
    return _SAYS_ERROR.search(text) is not None and _NOT_ERROR.search(text) is None and not went_on(text)


def reports_work(text: str) -> bool:
    """Whether a line reports the run's work: progress, a recovery, a line of metrics."""
    return went_on(text) or len(_READING.findall(text)) >= 3


def killed_unsaid(lines: list[str]) -> bool:
    """Whether the last of a log's last ``lines`` is a bare notice right after the run's progress
    (see NOTICE): the run killed from outside with nothing written about it, whatever the locale
    of the shell that wrote it."""
    written = [line.strip() for line in lines if line.strip()]
    if not written:
        return False
    last = written[-1]
    if (len(last) > NOTICE or _BARE.fullmatch(last) is None or _ENDED_WELL.search(last) or _PHASE.search(last)
            or last in written[:-1]):
        return False
    return any(reports_work(line) for line in written[-1 - AFTER_PROGRESS:-1])


def ends_on_error(text: str) -> bool:
    """Whether a log's last line is written at error or fatal severity by glog's or TensorFlow's
    prefix (see _SEVERE): whatever its words, the log ends on an error (a line that only says it
    will retry does not: it was cut while it waited; nor does one that reports the run's progress,
    which says the run went on)."""
    return _SEVERE.search(text) is not None and not retries(text) and not went_on(text)


def a_threads(text: str) -> bool:
    """Whether a line is Python's header of a traceback its process outlives: a thread's, not the
    main thread's, or one Python ignored (see _THREAD)."""
    return _THREAD.search(text) is not None


def retries(text: str) -> bool:
    return _RETRIES.search(text) is not None


def fate(buffer: bytearray, start: int, limit: int, *, ended: bool, deferrable: bool) -> Fate:
    """What the up to TAIL lines after the line at ``start`` say of it. Past the buffer's end:
    the log ended, or the line waits for the next chunk (else, a followed file that goes on,
    it is taken as one the run went on from)."""
    following = blocks.decode(buffer, start, limit)[1]
    for _ in range(TAIL):
        if following < 0 or following >= limit:
            return Fate.ENDED if ended else Fate.WAIT if deferrable else Fate.WENT_ON
        text, following = blocks.decode(buffer, following, limit)
        if went_on(text):
            return Fate.WENT_ON
        if dies(text):
            return Fate.KILLED
    return Fate.WENT_ON


def is_stop(text: str) -> bool:
    """Whether a line says the process was told to stop (see STOPS)."""
    return _STOPS.search(text) is not None


def by_hand(message: str) -> bool:
    """Whether a traceback's exception is Python's for SIGINT (KeyboardInterrupt: a person's Ctrl-C):
    the process unwinding from a stop it was told, where it was at the time, not an error of the code."""
    return _BY_HAND.match(message) is not None


def told_from_outside(text: str) -> bool:
    """Whether a line says its process (a launcher) was told to stop by a signal from outside
    (see EXTERNAL): the lines it writes while it stops its workers are that stop's aftermath."""
    found = _TOLD.search(text)
    if found is None:
        return False
    told = next(g for g in found.groups() if g is not None).upper()
    number = int(told) if told.isdigit() else getattr(signal.Signals, told, 0)
    return number in EXTERNAL


def last_line(buffer: bytearray, start: int, limit: int) -> tuple[int, int]:
    """(start, lines below ``start``) of the last line that is not blank from ``start`` to ``limit``."""
    at, below, walked = start, 0, 0
    following = blocks.decode(buffer, start, limit)[1]
    while 0 <= following < limit:
        text, after = blocks.decode(buffer, following, limit)
        walked += 1
        if text.strip():
            at, below = following, walked
        following = after
    return at, below


class Episodes:
    """The key of the unclassified failure a line belongs to: its own template, or that of the
    line that opened its episode (the lines before it, each within TAIL of the next)."""

    def __init__(self) -> None:
        self.key = ""
        self.last = -TAIL - 1  # line of the latest unclassified line

    def key_of(self, line: int, message: str) -> str:
        if line - self.last > TAIL or not self.key:
            self.key = template(message)
        self.last = line
        return self.key

    def follow(self, shift: int) -> Episodes:
        """The episode going on in the next file of a rotated log, whose line numbers are this
        file's plus ``shift``: a line within TAIL of the last one, across the rotation, is of it."""
        going_on = Episodes()
        going_on.key, going_on.last = self.key, self.last + shift
        return going_on
