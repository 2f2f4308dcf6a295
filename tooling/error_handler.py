"""The one place errors become messages and exit codes (as pre-commit's error handler does).

- :class:`~tooling.errors.UserError`: ``tooling: error: <message>``, its own exit code (1, or 2
  for usage);
- an operating-system error (full disk, read-only folder, no permission): one line naming
  the path and what to do, exit 1;
- Ctrl-C: exit 130;
- a module of an extra that this install lacks (the command line without the ``wiki`` extra):
  one line naming the extra and the pip command, exit 1;
- anything else is a bug: one line naming a log file that holds the traceback, exit 3.
"""
from __future__ import annotations

import errno
import os
import sys
import tempfile
import traceback
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable

from tooling.distribution import missing_extra
from tooling.errors import UserError
from tooling.records.findings import excerpt, shown_path

BUG_EXIT = 3

_HINTS = {
    errno.ENOSPC: "no space left on device; free some space and run it again (nothing was changed)",
    errno.EDQUOT: "disk quota exceeded; free some space and run it again (nothing was changed)",
    errno.EROFS: "read-only file system; run it where the repository is writable",
    errno.EACCES: "permission denied; run it as a user who may write there",
    errno.EPERM: "operation not permitted; run it as a user who may write there",
    errno.ENAMETOOLONG: "file name too long; expected a name of at most 255 bytes",
}
LONGEST_PATH = 120  # characters of a path a message shows; the rest is cut


def run_handled(action: Callable[[], int]) -> int:
    try:
        return action()
    except UserError as exc:
        return _fail(f"tooling: error: {exc}", exc.exit_code)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # the reader left (`tooling scan LOG | head`): quietly, as grep does
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # so the exit's flush cannot fail again
        return 128 + 13  # as a shell reports a death by SIGPIPE
    except OSError as exc:
        return _fail(f"tooling: error: {os_message(exc)}", 1)
    except ModuleNotFoundError as exc:
        return _fail(f"tooling: {said(exc)}", 1 if missing_extra(exc) else BUG_EXIT)
    except Exception as exc:  # the catch-all: a bug, never a user's fault
        return _fail(f"tooling: {said(exc)}", BUG_EXIT)


def said(exc: Exception) -> str:
    """What :func:`run_handled` says of ``exc`` after ``tooling: `` (a bug's traceback is logged
    first), for a command that reports an error and carries on (`tooling serve`)."""
    if isinstance(exc, UserError):
        return f"error: {exc}"
    if isinstance(exc, OSError):
        return f"error: {os_message(exc)}"
    if isinstance(exc, ModuleNotFoundError) and (hint := missing_extra(exc)):
        return f"error: {hint}"
    log = _log_traceback()
    where = f"the traceback is in {log}" if log else "the traceback is above"
    return f"internal error: {type(exc).__name__}: {excerpt(str(exc), 200)}; {where} (please report it)"


def os_message(exc: OSError) -> str:
    """``path: what went wrong; what to do``, for an error of the operating system."""
    what = _HINTS.get(exc.errno or 0) or (exc.strerror or str(exc)).lower()
    if not isinstance(exc.filename, (str, bytes)):  # no file named (or only a descriptor's number): the
        # output (`> /dev/full`), after the files were written
        return f"{(exc.strerror or str(exc)).lower()} while writing the output" if exc.errno in _HINTS else what
    shown = shown_path(os.fsdecode(exc.filename))
    return f"{shown if len(shown) <= LONGEST_PATH else shown[:LONGEST_PATH] + '…'}: {what}"


def _fail(message: str, code: int) -> int:
    print(message, file=sys.stderr)
    return code


def _log_traceback() -> Path | None:
    """Write the current traceback to the log file; None if no log could be written."""
    text = f"### {datetime.now(timezone.utc).isoformat()} tooling {' '.join(sys.argv[1:])}\n{traceback.format_exc()}\n"
    for log in _log_paths():
        try:
            log.parent.mkdir(parents=True, exist_ok=True)
            with open(log, "a", encoding="utf-8", errors="backslashreplace") as handle:
                handle.write(text)
            return log
        except OSError:
            continue
    print(text, file=sys.stderr)
    return None


def _log_paths() -> list[Path]:
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return [Path(cache) / "tooling" / "tooling.log", Path(tempfile.gettempdir()) / f"tooling-{os.getuid()}.log"]
