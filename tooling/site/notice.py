"""What `tooling serve` has to say to the reader: an error that kept the pages from updating.

A record that no longer loads, or a page that fails to render, used to be said on the terminal
alone (or, for a render bug, ended `tooling serve`), while the browser went on showing the last
good pages as if they were current. Now the error is written to a notice file, and mkdocs'
server (tooling.site.listen) shows it as a banner at the top of every page it serves until the
record is fixed. The notice lives in a folder of its own that the server watches, so that
writing or clearing it reloads every open page.
"""
from __future__ import annotations

import html
import re
import shutil
import tempfile
from pathlib import Path

from tooling.fs.atomic import replace_file

NAME = "error.txt"
_BODY = re.compile(rb"<body\b[^>]*>")
# Inline style: the banner needs no stylesheet of the site, and stays in view over its header.
_STYLE = ("position:fixed;top:0;left:0;right:0;z-index:10000;max-height:50vh;overflow:auto;margin:0;"
          "padding:.8em 1.2em;background:#b71c1c;color:#fff;font:14px/1.5 monospace;white-space:pre-wrap")
_HEADING = "tooling serve: the pages below are from before this error; they update once it is fixed."


def new_folder() -> Path:
    """A fresh folder for one `tooling serve`'s notice (removed with :func:`remove_folder`)."""
    return Path(tempfile.mkdtemp(prefix="tooling-serve-"))


def remove_folder(folder: Path) -> None:
    shutil.rmtree(folder, ignore_errors=True)


def show(folder: Path, text: str) -> None:
    """Put ``text`` up; unchanged text is not written again (each write reloads the pages). A
    notice that cannot be written (a full /tmp) is let go: the terminal has said it, and the
    server must stay up."""
    path = folder / NAME
    try:
        if path.read_text(encoding="utf-8") == text:
            return
    except FileNotFoundError:
        pass
    try:
        replace_file(path, text)
    except OSError:
        pass


def clear(folder: Path) -> None:
    try:
        (folder / NAME).unlink(missing_ok=True)
    except OSError:  # as in show: the server stays up
        pass


def banner(folder: Path) -> bytes:
    """The notice as HTML for the top of a page; empty when there is none."""
    try:
        text = (folder / NAME).read_text(encoding="utf-8")
    except FileNotFoundError:
        return b""
    return (f'<div role="alert" class="tooling-serve-error" style="{_STYLE}"><strong>{html.escape(_HEADING)}'
            f"</strong>\n{html.escape(text)}</div>").encode()


def with_banner(page: bytes, folder: Path) -> bytes:
    """``page`` with the notice's banner just inside its ``<body>`` (first, when it has none)."""
    shown = banner(folder)
    if not shown:
        return page
    body = _BODY.search(page)
    at = body.end() if body else 0
    return page[:at] + shown + page[at:]
