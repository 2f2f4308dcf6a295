"""Building a copy of this project's site with a stale run and a hostile record in it."""
from __future__ import annotations

import functools
import http.server
import shutil
import subprocess
import sys
import threading
from contextlib import contextmanager
from pathlib import Path
from datetime import datetime
from typing import Callable, Iterator

from playwright.sync_api import Browser, BrowserContext, Page

PROJECT = Path(__file__).resolve().parents[2]
NOW = "2026-11-29T12:00:00+00:00"
CHROMIUM = "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]

XSS_TITLE = "<img src=x onerror=alert(1)> hang on node666"
STALE_RUN = """kind: run
id: stale-13b
title: Stale 13B finetune
owner: dana
state: running
known_issues:
  - incident: INC-0900
    summary: "<script>alert('issue')</script> [click me](javascript:alert(2))"
updated_at: 2026-11-20T08:00:00+00:00
"""
XSS_INCIDENT = f"""kind: incident
id: INC-0900
title: "{XSS_TITLE}"
run: stale-13b
status: open
severity: sev3
symptom: hang
layer: unknown
signatures: ["<svg onload=alert(3)>", "`code` ** not bold **"]
detected_at: 2026-11-21T01:00:00+00:00
timeline:
  - at: 2026-11-21T01:00:00+00:00
    event: "<script>alert('timeline')</script> [x](javascript:alert(4)) <b>bold?</b>"
root_cause: "[link](javascript:alert(5)) and <iframe src=javascript:alert(6)></iframe>"
links:
  - title: "<img src=y onerror=alert(7)>"
    url: https://logs.example.org/run?a=1&b=<2>
"""

OVERDUE_POSTMORTEM = """kind: postmortem
id: PM-0900
title: Hang on node666 and the missing watchdog
incidents: [INC-0900]
status: draft
summary: ""
action_items:
  - description: Drain nodes on Xid 79 automatically and swap in a spare
    owner: ben
    due: 2026-11-01
    status: open
    kind: automate
  - description: Alert when a rank stops making progress
    due: 2026-12-20
    status: open
    kind: detect
"""


def copy_project(root: Path, extra: dict[str, str] | None = None) -> Path:
    """This project's records, docs and mkdocs.yml (plus ``extra`` files), committed to a new repo."""
    for name in ("incidents", "runbooks", "docs", "labs"):
        shutil.copytree(PROJECT / name, root / name, ignore=shutil.ignore_patterns("generated"))
    shutil.copy(PROJECT / "mkdocs.yml", root)
    for relative, text in (extra or {}).items():
        (root / relative).write_text(text)
    git = ["git", "-c", "user.name=Site Test", "-c", "user.email=site@test", "-C", str(root)]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "records for the site test"], check=True)
    return root


def build_copy(root: Path, extra: dict[str, str]) -> Path:
    """A copy of this project plus ``extra`` files, built with ``--now NOW`` into ``root/site``."""
    copy_project(root, extra)
    result = subprocess.run([sys.executable, "-m", "tooling", "build", "--now", NOW, "--site-dir", "site"],
                            cwd=root, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    return root / "site"


def build_site(root: Path) -> Path:
    """The copy with a stale run, a hostile record and an overdue postmortem, built into ``root/site``."""
    return build_copy(root, {"runbooks/runs/stale-13b.yaml": STALE_RUN, "incidents/INC-0900.yaml": XSS_INCIDENT,
                             "incidents/PM-0900.yaml": OVERDUE_POSTMORTEM})


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@contextmanager
def served(site: Path) -> Iterator[str]:
    """``site`` served on a free port of localhost: yields its URL."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_QuietHandler, directory=str(site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()


Opener = Callable[..., Page]


@contextmanager
def page_opener(browser: Browser, site_url: str, *, at: datetime | None = None) -> Iterator[Opener]:
    """open_page(path, at=..., javascript=..., scheme=...): a fresh tab whose clock starts at
    ``at`` and runs on from there (``page.clock.fast_forward`` jumps it ahead, firing the scripts'
    timers). A frozen clock (``set_fixed_time``) would stall mkdocs-material's debounced search.
    Any dialog a page opens means record text ran as script: the tabs' end fails then."""
    contexts: list[BrowserContext] = []
    dialogs: list[str] = []

    def open_page(path: str, *, at: datetime | None = at, javascript: bool = True, scheme: str = "light") -> Page:
        context = browser.new_context(java_script_enabled=javascript, color_scheme=scheme,
                                      viewport={"width": 1400, "height": 1000})
        contexts.append(context)
        page = context.new_page()
        page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
        if at is not None:  # a page without JavaScript has no clock to set
            page.clock.install(time=at)
        page.goto(site_url + path)
        return page

    try:
        yield open_page
    finally:
        for context in contexts:
            context.close()
    assert dialogs == [], "record text ran as script"
