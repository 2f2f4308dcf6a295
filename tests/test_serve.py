"""`tooling serve` stopped by a signal ends its mkdocs child, so the port is free at once; an
error while serving (a record that no longer loads, a page that fails to render) is shown on
every page in the browser until it is fixed, and the server stays up; and `./dev serve`
installs what the site needs, not the test tools or PyTorch."""
from __future__ import annotations

import html
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import tomllib
import urllib.error
import urllib.request
from pathlib import Path
from typing import Callable

import pytest

from render_fault import ERROR, MARKER, RENDER_FAULT
from support import tooling

PAGE = "/generated/incidents/"  # rendered from the corpus, so 200 means mkdocs serves the site


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _wait_for_200(url: str, deadline: float, log: Path) -> None:
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return
        except (OSError, urllib.error.URLError):
            pass
        time.sleep(0.1)
    raise AssertionError(f"{url} never answered 200; tooling serve said:\n{log.read_text()[-3000:]}")


def _bind(port: int) -> None:
    """Bind and listen on the port as the next server would (SO_REUSEADDR, as mkdocs and every
    Python HTTP server set it, so connections still in TIME_WAIT do not count)."""
    with socket.socket() as server:
        server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        server.bind(("127.0.0.1", port))
        server.listen()


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_stop_signal_ends_mkdocs_and_frees_the_port(repo: Path, tmp_path: Path, signum: signal.Signals) -> None:
    port = _free_port()
    log = tmp_path / "serve.log"  # a file, not a pipe: a child left behind would keep a pipe open
    # its own session, so that the signal goes to `tooling serve` alone (as `kill PID` or a
    # service manager sends it) and the group tells whether any child outlived it
    with log.open("wb") as stderr:
        serve = subprocess.Popen([sys.executable, "-m", "tooling", "serve", "--dev-addr", f"127.0.0.1:{port}"],
                                 cwd=repo, stdout=subprocess.DEVNULL, stderr=stderr, start_new_session=True)
    try:
        _wait_for_200(f"http://127.0.0.1:{port}{PAGE}", time.monotonic() + 60, log)
        signalled = time.monotonic()
        serve.send_signal(signum)
        serve.wait(timeout=15)
        seconds = time.monotonic() - signalled
        _bind(port)  # raises EADDRINUSE if mkdocs still holds it
        with pytest.raises(ProcessLookupError):
            os.killpg(serve.pid, 0)  # nothing of the session is left
        assert serve.returncode == 128 + signum
        assert f"tooling serve: stopping on {signum.name}" in log.read_text()
        assert seconds < 5, f"took {seconds:.1f} s to stop"
        print(f"\n{signum.name}: stopped and port free after {seconds:.2f} s")
    finally:
        _kill_session(serve)


def _kill_session(serve: subprocess.Popen) -> None:  # type: ignore[type-arg]
    """SIGKILL `tooling serve` and its mkdocs child (started in a session of their own)."""
    try:
        os.killpg(serve.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    serve.wait(timeout=10)


def _fake(path: Path, body: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)


def test_dev_serve_installs_the_site_alone_and_dev_test_adds_its_extras_once(tmp_path: Path) -> None:
    """./dev with a stand-in venv that logs what it is asked: pip installs, pytest, tooling."""
    project = Path(__file__).resolve().parents[1]
    for name in ("dev", "pyproject.toml"):
        shutil.copy2(project / name, tmp_path / name)
    log = tmp_path / "calls.log"
    _fake(tmp_path / ".venv/bin/python", f'echo "python $*" >> {log}')
    _fake(tmp_path / ".venv/bin/tooling", f'echo "tooling $1" >> {log}')
    for tool in ("chromium", "slurmctld"):  # present, so ./dev test installs no system package
        _fake(tmp_path / "fake-bin" / tool, "exit 0")
    env = {**os.environ, "PATH": f"{tmp_path / 'fake-bin'}:{os.environ['PATH']}"}

    def dev(*args: str) -> list[str]:
        log.write_text("")
        subprocess.run([str(tmp_path / "dev"), *args], cwd=tmp_path, env=env, check=True, timeout=60)
        return [line for line in log.read_text().splitlines() if "pip install" in line]

    pip = "python -m pip install --quiet --disable-pip-version-check -e"
    assert dev("serve") == [f"{pip} .[wiki]"]
    assert dev("test") == [f"{pip} .[wiki,test,labs]"]
    assert dev("serve") == []
    assert dev("test") == []
    with (tmp_path / "pyproject.toml").open("a") as changed:
        changed.write("\n# changed\n")
    assert dev("test") == [f"{pip} .[wiki,test,labs]"]
    assert dev("serve") == []  # the test install brought the package and the wiki extra too
    assert log.read_text().splitlines() == ["tooling validate", "tooling serve"]

    with open(project / "pyproject.toml", "rb") as handle:
        config = tomllib.load(handle)["project"]
    assert "torch==2.13.0" in config["optional-dependencies"]["training"]
    assert not [d for d in config["optional-dependencies"]["wiki"] if d.startswith("torch")], \
        "the site must not need PyTorch"


def test_a_taken_port_is_refused_in_one_line_before_anything_is_rendered(repo: Path) -> None:
    """mkdocs' own server answered a taken port with a traceback, after the pages were rendered."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = subprocess.run([sys.executable, "-m", "tooling", "serve", "--dev-addr", f"127.0.0.1:{port}"],
                                cwd=repo, capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    assert result.stderr == (f"tooling: error: --dev-addr 127.0.0.1:{port}: cannot listen there: address already "
                             "in use; expected a free port of this machine, such as 127.0.0.1:8001\n")
    assert not (repo / "docs" / "generated").exists()


# Run as `python -c HOOK READY TAKEN ARGS...`: the real CLI, held just after its check of the port
# passed until the test has taken the port, so that mkdocs' own bind is the one that fails.
AFTER_THE_CHECK = """
import pathlib, sys, time
from tooling.site import serve
from tooling.main import main
ready, taken = map(pathlib.Path, sys.argv[1:3])
del sys.argv[1:3]
check = serve.check_address
def held(dev_addr):
    check(dev_addr)
    ready.touch()
    while not taken.exists():
        time.sleep(0.01)
serve.check_address = held
sys.exit(main(sys.argv[1:]))
"""


def test_a_port_taken_after_the_check_is_the_same_one_line(repo: Path, tmp_path: Path) -> None:
    """Another process takes the port between the check and mkdocs' bind (after mkdocs' first
    build): mkdocs answered with a traceback, which `tooling serve` passed on."""
    port, ready, taken = _free_port(), tmp_path / "ready", tmp_path / "taken"
    serve = subprocess.Popen([sys.executable, "-c", AFTER_THE_CHECK, str(ready), str(taken), "serve",
                              "--dev-addr", f"127.0.0.1:{port}"], cwd=repo, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while not ready.exists() and serve.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        assert ready.exists(), "tooling serve never checked the port"
        with socket.socket() as other:
            other.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            other.bind(("127.0.0.1", port))
            other.listen()
            taken.touch()
            _, stderr = serve.communicate(timeout=120)
    finally:
        _kill_session(serve)
    assert serve.returncode == 1, stderr
    assert stderr.splitlines()[-1] == (f"tooling: error: --dev-addr 127.0.0.1:{port}: cannot listen there: address "
                                       "already in use; expected a free port of this machine, such as 127.0.0.1:8001")
    assert "Traceback" not in stderr and stderr.count("tooling: error:") == 1
    assert " - " not in stderr, stderr  # nor mkdocs' build log ("INFO    -  Building documentation...")


# The tiny site of tests/test_render_whole.py, in two editions; mkdocs' own theme, to be quick.
TWO_EDITIONS = """site_name: test
plugins:
  - i18n:
      docs_structure: suffix
      languages:
        - {locale: en, default: true, name: English}
        - {locale: ko, name: 한국어, theme: {locale: en}}
"""
BANNER = 'class="tooling-serve-error"'


def _page(url: str) -> str:
    with urllib.request.urlopen(url, timeout=30) as response:
        return response.read().decode("utf-8")


def _until(url: str, holds: Callable[[str], bool], serve: subprocess.Popen, log: Path) -> str:  # type: ignore[type-arg]
    """The page at ``url`` once ``holds`` is true of it; `tooling serve` must stay up meanwhile."""
    deadline, text = time.monotonic() + 60, ""
    while time.monotonic() < deadline:
        assert serve.poll() is None, f"tooling serve ended ({serve.returncode}):\n{log.read_text()[-3000:]}"
        try:
            text = _page(url)
        except (OSError, urllib.error.URLError):
            text = ""
        if holds(text):
            return text
        time.sleep(0.2)
    raise AssertionError(f"{url} never showed what was expected; it shows:\n{text[-2000:]}\n"
                         f"tooling serve said:\n{log.read_text()[-3000:]}")


def _epoch(page: str) -> int:
    """The version of the site a page was served from, in mkdocs' live-reload script."""
    found = re.search(r"livereload\((\d+),", page)
    assert found, page[-2000:]
    return int(found[1])


def _retitle(record: Path, title: str) -> None:
    record.write_text(re.sub(r"^title: .*$", f"title: {title}", record.read_text(), count=1, flags=re.M))


def test_an_error_while_serving_is_shown_on_every_page_until_fixed(repo: Path, tmp_path: Path) -> None:
    """A record broken while `tooling serve` runs: its located error on the pages in the browser
    (it was on the terminal alone), then gone once the record is fixed. A page that fails to
    render (the fault of tests/render_fault.py, as the Korean repeats page failed on a score)
    ended `tooling serve`; now it is shown the same way, and the server stays up throughout."""
    (repo / "mkdocs.yml").write_text(TWO_EDITIONS, encoding="utf-8")
    port, log, cache = _free_port(), tmp_path / "serve.log", tmp_path / "cache"
    base = f"http://127.0.0.1:{port}"
    english, korean = f"{base}/generated/incidents/INC-0001/", f"{base}/ko/generated/incidents/INC-0001/"
    env = {**os.environ, "XDG_CACHE_HOME": str(cache)}
    record, bad = repo / "incidents" / "INC-0002.yaml", repo / "incidents" / "INC-0001.yaml"
    good = record.read_text()
    with log.open("wb") as stderr:
        serve = subprocess.Popen([sys.executable, "-c", RENDER_FAULT, "serve", "--dev-addr", f"127.0.0.1:{port}"],
                                 cwd=repo, stdout=subprocess.DEVNULL, stderr=stderr, env=env, start_new_session=True)
    try:
        _wait_for_200(english, time.monotonic() + 60, log)
        first = _page(english)
        assert BANNER not in first

        record.write_text(good.replace("\ntitle: ", "\ntitle: [unclosed\nx: ", 1))  # no longer YAML
        said = tooling("build", "--render-only", cwd=repo)  # what the CLI says of it, here
        assert said.returncode == 1 and "incidents/INC-0002.yaml:" in said.stderr and "[yaml-syntax]" in said.stderr
        expected = html.escape(said.stderr.removeprefix("tooling: ").rstrip("\n"))
        # shown once mkdocs has built again: the epoch that makes an open page reload has moved on
        # (the pages did not change; the notice did)
        shown = _until(english, lambda page: BANNER in page and _epoch(page) > _epoch(first), serve, log)
        assert expected in shown
        assert expected in _until(korean, lambda page: BANNER in page, serve, log)
        assert f"tooling serve: {said.stderr.removeprefix('tooling: ')}" in log.read_text()
        record.write_text(good)
        _until(english, lambda page: BANNER not in page, serve, log)

        _retitle(bad, f"Xid 79 on node042 again {MARKER}")  # its Korean page fails to render
        failed = f"internal error: {ERROR}; the traceback is in {cache}/tooling/tooling.log (please report it)"
        for url in (english, korean):
            assert html.escape(failed) in _until(url, lambda page: BANNER in page, serve, log)
        _retitle(bad, "Xid 79 on node042 again")
        page = _until(english, lambda page: BANNER not in page and "Xid 79 on node042 again" in page, serve, log)
        assert "Xid 79 on node042 again" in page
        assert serve.poll() is None
    finally:
        _kill_session(serve)
