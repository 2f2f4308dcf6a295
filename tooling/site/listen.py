"""Where `tooling serve` listens: the check before anything is rendered, and mkdocs' server run
so that its own failure to listen says the same one line.

The check cannot close the race: another process can take the port in the seconds between it
and mkdocs' bind (which comes after mkdocs' first build), and mkdocs answers that with a
traceback. So `tooling serve` starts mkdocs through :func:`main` here (``python -m
tooling.site.listen``), which turns a failed bind into the check's error, exit 1, and keeps
mkdocs' build log back until it listens, so that the error is all such a run says.
"""
from __future__ import annotations

import errno
import io
import logging
import socket
import sys
from pathlib import Path
from typing import Any, TextIO

from tooling.error_handler import run_handled
from tooling.errors import UserError
from tooling.site import notice
from tooling.site.config import read_site_config

PLUGIN = "playbook-editions"  # the name pyproject.toml gives tooling.site.editions.Editions


def cannot_listen(dev_addr: str, exc: OSError) -> UserError:
    """The one error for an address nothing can listen on, before or after the check."""
    why = (exc.strerror or str(exc)).lower()
    if exc.errno == errno.EACCES:
        why += " (ports below 1024 need root)"
    return UserError(f"--dev-addr {dev_addr}: cannot listen there: {why}; "
                     f"expected a free port of this machine, such as 127.0.0.1:8001")


def check_address(dev_addr: str) -> None:
    """Refuse an address mkdocs could not listen on (taken, privileged, not this machine's) here,
    in one line, before any page is rendered."""
    host, _, port = dev_addr.rpartition(":")
    host = host.strip("[]")
    try:
        family = socket.getaddrinfo(host, int(port), type=socket.SOCK_STREAM)[0][0]
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as mkdocs' server does
            probe.bind((host, int(port)))
    except OSError as exc:
        raise cannot_listen(dev_addr, exc) from None


def server_command(dev_addr: str, config_file: str, shown: Path) -> list[str]:
    """The command line of the mkdocs child of `tooling serve` (``shown``: the folder of its
    notice, tooling.site.notice)."""
    return [sys.executable, "-m", "tooling.site.listen", dev_addr, config_file, str(shown)]


def main(argv: list[str]) -> int:
    """``mkdocs serve --dev-addr DEV_ADDR --config-file CONFIG --dirty``, its bind failing as the check
    does, every page it serves with the notice in ``SHOWN`` on top, and a change of the notice
    reloading the pages open in a browser (the folder is watched as the docs are)."""
    dev_addr, config_file, shown = argv
    from mkdocs.__main__ import cli  # imported here: `tooling serve` itself does not need mkdocs'
    from mkdocs.livereload import LiveReloadServer

    inject = LiveReloadServer._inject_js_into_html

    def with_notice(server: Any, content: bytes, epoch: int) -> bytes:
        return notice.with_banner(inject(server, content, epoch), Path(shown))

    LiveReloadServer._inject_js_into_html = with_notice  # type: ignore[method-assign]
    bind, held = LiveReloadServer.server_bind, _Held()

    def server_bind(server: Any) -> None:
        try:
            bind(server)
        except OSError as exc:
            held.drop()
            raise cannot_listen(dev_addr, exc) from None
        held.release()

    LiveReloadServer.server_bind = server_bind  # type: ignore[method-assign]

    # --dirty: a build after the first makes only what an edit changed, where this project's plugin
    # makes such a build whole (tooling.site.incremental); mkdocs' own leaves pages stale.
    # mkdocs-static-i18n builds its other editions dirty only when it sees the flag in sys.argv.
    args = ["serve", "--dev-addr", dev_addr, "--config-file", config_file, "--watch", shown]
    args += ["--dirty"] if _made_whole(Path(config_file)) else []
    sys.argv = ["mkdocs", *args]

    def serve() -> int:
        try:
            cli.main(args, prog_name="mkdocs")
        finally:
            held.release()  # a build that failed before listening says why
        return 0  # not reached: click ends the process with mkdocs' own status

    return run_handled(serve)


def _made_whole(config_file: Path) -> bool:
    """Whether the site has the plugin that makes a dirty build whole (playbook-editions).
    mkdocs.yml names plugins in a list (a name, or a name with its options) or a mapping."""
    plugins = read_site_config(config_file.parent).data.get("plugins") or []
    entries = list(plugins) if isinstance(plugins, (list, dict)) else []
    return any(PLUGIN == entry or (isinstance(entry, dict) and PLUGIN in entry) for entry in entries)


class _Held:
    """Standard error, kept in memory from now until :meth:`release` writes it out (or
    :meth:`drop` forgets it); mkdocs' log handler, made meanwhile, then writes to the real one."""

    def __init__(self) -> None:
        self.real: TextIO = sys.stderr
        self.kept: io.StringIO | None = io.StringIO()
        sys.stderr = self.kept

    def release(self) -> None:
        if self.kept is not None:
            text = self._restore()
            self.real.write(text)
            self.real.flush()

    def drop(self) -> None:
        if self.kept is not None:
            self._restore()

    def _restore(self) -> str:
        kept, self.kept = self.kept, None
        sys.stderr = self.real
        for handler in [*logging.getLogger("mkdocs").handlers, *logging.getLogger().handlers]:
            if isinstance(handler, logging.StreamHandler) and handler.stream is kept:
                handler.setStream(self.real)
        return kept.getvalue() if kept is not None else ""


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
