"""`tooling` run inside the test process: the same ``tooling.main.main(argv)`` the executable runs,
seen from outside as ``python -m tooling`` is, without ~0.3 s of imports per call.

What a child process would have of its own is given to the call and taken back after it: the
working directory, the environment (TZ applied), ``sys.argv``, the standard streams at the level
of file descriptors (so a program the command starts writes into the same captured output),
the signal handlers, the root logger's handlers (a warning logged with none reaches stderr, as
in a fresh interpreter) and the warning filters of a fresh interpreter. ``SystemExit`` becomes
the exit status as the interpreter makes it. One call at a time (the directory and the streams
belong to the process).
"""
from __future__ import annotations

import locale
import logging
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import IO, Any, Iterator, Sequence

import tooling
from tooling.main import main

MAIN = str(Path(tooling.__file__).with_name("__main__.py"))  # sys.argv[0] under `python -m tooling`
_ONE_AT_A_TIME = threading.Lock()
# A fresh interpreter's warning filters (the documented defaults, most specific first)
_DEFAULT_FILTERS = (("default", DeprecationWarning, "__main__"), ("ignore", DeprecationWarning, ""),
                    ("ignore", PendingDeprecationWarning, ""), ("ignore", ImportWarning, ""),
                    ("ignore", ResourceWarning, ""))


class Expired(BaseException):
    """The call ran past its timeout (a BaseException: no ``except Exception`` of the command keeps it)."""


def run(args: Sequence[str], *, cwd: Path, timeout: float | None, stdin: str | None,
        env: dict[str, str] | None) -> subprocess.CompletedProcess[str]:
    """``main(args)`` in ``cwd`` as ``subprocess.run([python, -m, tooling, *args], input=stdin,
    capture_output=True, text=True, timeout=timeout, env={**os.environ, **env})`` would run it."""
    command = [sys.executable, "-m", "tooling", *args]
    with _ONE_AT_A_TIME:
        with ExitStack() as stack:
            stack.enter_context(_environment(env or {}))
            stack.enter_context(_directory(cwd))
            stack.enter_context(_argv([MAIN, *args]))
            stack.enter_context(_signal_handlers())
            stack.enter_context(_fresh_logging_and_warnings())
            out = stack.enter_context(_streams(stdin))
            try:
                with _deadline(timeout):
                    code = _status(lambda: main(list(args)))
            except Expired:
                code = None
        stdout, stderr = (_text(data) for data in out)
    if code is None:
        raise subprocess.TimeoutExpired(command, timeout or 0, stdout, stderr)
    return subprocess.CompletedProcess(command, code, stdout, stderr)


def _status(call: Any) -> int:
    """The exit status as the interpreter makes it of a return or a ``SystemExit``."""
    try:
        code = call()
    except SystemExit as exit_:
        code = exit_.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)  # sys.exit("message"): printed, status 1
    return 1


def _text(data: bytes) -> str:
    """Bytes as subprocess's text mode decodes them: the locale's encoding, universal newlines."""
    return data.decode(locale.getpreferredencoding(False)).replace("\r\n", "\n").replace("\r", "\n")


@contextmanager
def _environment(extra: dict[str, str]) -> Iterator[None]:
    before = dict(os.environ)
    os.environ.update(extra)
    if os.environ.get("TZ") != before.get("TZ"):
        time.tzset()
    try:
        yield
    finally:
        zone = os.environ.get("TZ")
        os.environ.clear()
        os.environ.update(before)
        if zone != before.get("TZ"):
            time.tzset()


@contextmanager
def _directory(cwd: Path) -> Iterator[None]:
    before = os.getcwd()
    os.chdir(cwd)
    try:
        yield
    finally:
        os.chdir(before)


@contextmanager
def _argv(argv: list[str]) -> Iterator[None]:
    before = sys.argv
    sys.argv = argv
    try:
        yield
    finally:
        sys.argv = before


@contextmanager
def _signal_handlers() -> Iterator[None]:
    before = {number: signal.getsignal(number) for number in signal.valid_signals()
              if number not in (signal.SIGKILL, signal.SIGSTOP) and signal.getsignal(number) is not None}
    try:
        yield
    finally:
        for number, handler in before.items():
            if signal.getsignal(number) is not handler:
                signal.signal(number, handler)


@contextmanager
def _fresh_logging_and_warnings() -> Iterator[None]:
    """No handler on the root logger (pytest's are put back after) and the default warning filters,
    shown on stderr: what a command logs or warns reaches its stderr as in its own process."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    root.handlers.clear()
    root.setLevel(logging.WARNING)
    try:
        with warnings.catch_warnings():
            warnings.resetwarnings()
            for action, category, module in reversed(_DEFAULT_FILTERS):
                warnings.filterwarnings(action, category=category, module=module)
            warnings.showwarning = _show_warning
            yield
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)


def _show_warning(message: Warning | str, category: type[Warning], filename: str, lineno: int,
                  file: IO[str] | None = None, line: str | None = None) -> None:
    sys.stderr.write(warnings.formatwarning(message, category, filename, lineno, line))


@contextmanager
def _streams(stdin: str | None) -> Iterator[tuple[bytes, bytes]]:
    """Descriptors 0, 1 and 2 on files for the call (0 left as it is for ``stdin=None``), and
    ``sys.std*`` made over them as the interpreter makes its own; yields the output once read."""
    encoding = locale.getpreferredencoding(False)
    files = [tempfile.TemporaryFile() for _ in range(3)]
    if stdin is not None:
        files[0].write(stdin.encode(encoding))
        files[0].seek(0)
    numbers = (1, 2) if stdin is None else (0, 1, 2)
    saved = {number: os.dup(number) for number in numbers}
    streams = (sys.stdin, sys.stdout, sys.stderr)
    result: list[bytes] = []
    try:
        for number in numbers:
            os.dup2(files[number].fileno(), number)
        sys.stdin = open(0, "r", encoding=encoding, errors=sys.__stdin__.errors if sys.__stdin__ else None,
                         newline="\n", closefd=False)  # over the test's own descriptor 0 for stdin=None
        sys.stdout = open(1, "w", encoding=encoding, errors=sys.__stdout__.errors if sys.__stdout__ else None,
                          newline="\n", closefd=False)
        sys.stdout.reconfigure(write_through=getattr(sys.__stdout__, "write_through", False))  # python -u
        sys.stderr = open(2, "w", encoding=encoding, errors="backslashreplace", newline="\n", closefd=False)
        sys.stderr.reconfigure(line_buffering=True)
        yield result  # type: ignore[misc]
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):  # closed, or the device is gone: as an exiting interpreter
                pass
        sys.stdin, sys.stdout, sys.stderr = streams
        for number, copy in saved.items():
            os.dup2(copy, number)
            os.close(copy)
        for handle in files[1:]:
            handle.seek(0)
            result.append(handle.read())
        for handle in files:
            handle.close()


@contextmanager
def _deadline(timeout: float | None) -> Iterator[None]:
    """Raise :class:`Expired` in the command after ``timeout`` seconds (main thread only)."""
    if not timeout or threading.current_thread() is not threading.main_thread():
        yield
        return

    def expire(signum: int, frame: Any) -> None:
        raise Expired()

    before = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, before)
