"""`tooling serve`: mkdocs' live-reloading server, fed by re-rendering whenever a record changes."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from types import FrameType
from typing import Any, Callable, Iterator

from tooling.error_handler import said
from tooling.records.kinds import RECORD_DIRS
from tooling.records.layout import repository_files
from tooling.site import notice
from tooling.rules.validate import Checked
from tooling.site.build import MKDOCS_ENV, render_site
from tooling.site.config import read_site_config
from tooling.site.page_files import RenderResult
from tooling.site.rerender import Rerender
from tooling.site.listen import check_address, server_command

POLL_SECONDS = 0.25
END_TIMEOUT = 10  # seconds mkdocs gets to stop after SIGTERM before it is killed


def snapshot(root: Path) -> dict[str, tuple[int, int]]:
    """(mtime, size) of every record file: cheap enough to poll several times a second."""
    state = {}
    for path in repository_files(root):
        try:
            stat = os.stat(path)
        except FileNotFoundError:
            continue
        state[path] = (stat.st_mtime_ns, stat.st_size)
    return state


class Renders:
    """What the renders of one `tooling serve` keep from one to the next: the records checked
    and the pages rendered, done again only where a record changed."""

    def __init__(self) -> None:
        self.checked, self.pages = Checked(), Rerender()

    def render(self, root: Path, now: datetime) -> RenderResult:
        # mkdocs.yml read again each time: an edit of it reaches the pages as one of a record does
        return render_site(root, now=now, site=read_site_config(root), checked=self.checked, rerender=self.pages)


def rerender(root: Path, clock: Callable[[], datetime], log: Callable[[str], None], shown: Path, renders: Renders) -> None:
    """Render again. A record that does not load, a page that fails to render (a bug) or a
    write that fails is said on the terminal and on every page served (``shown``: the notice's
    folder, tooling.site.notice) until a render passes; the last good pages stay in place."""
    try:
        result = renders.render(root, clock())
    except Exception as exc:  # whatever it is, the server stays up to show it
        message = said(exc)
        log(f"tooling serve: {message}")
        notice.show(shown, message)
        return
    notice.clear(shown)
    if result.written or result.removed:
        log(f"tooling serve: re-rendered {len(result.written)} page(s), removed {len(result.removed)}")


class Stopped(BaseException):
    """A stop signal arrived: the server and everything it started must end. A BaseException,
    like KeyboardInterrupt, so that no `except Exception` on the way swallows it."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


class _StopSignals:
    """SIGTERM, SIGINT and SIGHUP raise :class:`Stopped` in the main thread, so that the
    ``finally`` that ends the mkdocs child runs; Python's default for SIGTERM and SIGHUP is to
    die on the spot, which left the child holding the port. While ``held`` is set (starting or
    ending the child), a signal is only noted and raised when the hold ends, so that no child
    is left without a handle to it and no cleanup is cut short by a second Ctrl-C."""

    SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)

    def __init__(self) -> None:
        self.received: int | None = None
        self.held = False
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> "_StopSignals":
        for signum in self.SIGNALS:
            self._previous[signum] = signal.signal(signum, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        first = self.received is None
        self.received = self.received or signum
        if first and not self.held:
            raise Stopped(signum)

    @contextmanager
    def hold(self) -> Iterator[None]:
        self.held = True
        try:
            yield
        finally:
            self.held = False
        if self.received is not None:
            raise Stopped(self.received)


def serve(root: Path, *, dev_addr: str, clock: Callable[[], datetime],
          log: Callable[[str], None] = lambda m: print(m, file=sys.stderr, flush=True)) -> int:
    """Serve until mkdocs stops or a stop signal arrives: then 128 + the signal's number, as a
    shell reports it (130 for Ctrl-C), with the mkdocs child ended and its port free."""
    server: subprocess.Popen[bytes] | None = None
    shown: Path | None = None
    with _StopSignals() as signals:
        try:
            check_address(dev_addr)
            renders = Renders()
            renders.render(root, clock())
            with signals.hold():
                shown = notice.new_folder()
                # mkdocs through listen.py: a port taken after the check is the check's one line too
                server = subprocess.Popen(server_command(dev_addr, str(root / "mkdocs.yml"), shown), cwd=root,
                                          env={**os.environ, **MKDOCS_ENV})
            log(f"tooling serve: watching {', '.join(d + '/' for d in RECORD_DIRS)} for changes")
            _watch(root, server, clock, log, shown, renders)
        except Stopped as stop:
            log(f"tooling serve: stopping on {stop}")
            return 128 + stop.signum
        finally:
            signals.held = True  # a second signal must not cut the child's ending short
            if server is not None:
                _end(server)
            if shown is not None:
                notice.remove_folder(shown)
    return _exit_status(server.returncode)


def _watch(root: Path, server: subprocess.Popen[bytes], clock: Callable[[], datetime], log: Callable[[str], None],
           shown: Path, renders: Renders) -> None:
    """Re-render whenever a record changes, for as long as mkdocs runs."""
    seen = snapshot(root)
    while server.poll() is None:
        time.sleep(POLL_SECONDS)
        current = snapshot(root)
        if current != seen:
            seen = current
            rerender(root, clock, log, shown, renders)


def _end(server: subprocess.Popen[bytes]) -> None:
    """Ask mkdocs to stop and wait for it, so its port is free when this returns."""
    if server.poll() is None:
        server.terminate()
        try:
            server.wait(timeout=END_TIMEOUT)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def _exit_status(returncode: int | None) -> int:
    """mkdocs' own status, or 128 + the signal that ended it (a negative returncode)."""
    code = returncode or 0
    return 128 - code if code < 0 else code
