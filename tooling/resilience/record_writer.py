"""The run reporter's side of its writer process: one child that writes the run record.

The write itself (re-read the page with ruamel, validate, write back) holds the GIL for a good
part of a second; in the training process, even in a thread, it would stall the loop for as long
(half the steps of a loop writing every second, measured by tests/bench/bench_reporter.py). So
:class:`RecordWriter` starts ``python -m tooling.writers.feed_server`` (:data:`SERVER`, found by
its name: nothing of the records is imported here, so this package lifts into a training loop
alone) at its first write, and each write is one JSON line on the child's stdin, answered by one
line (the protocol is the server's docstring).

A training environment may have the package without its ``wiki`` extra (no YAML, no schemas: the
records cannot be written from it); the wiki tooling then runs from another environment, and the
child is that environment's ``tooling report --serve``. Which child, first found first
(:func:`writer_command`): the ``tooling`` executable named by the reporter's ``tooling=`` or by
``$TOOLING_EXECUTABLE``; this interpreter, when it can import the records; a ``tooling`` on PATH
that is not this environment's own. With none, a write fails in words that say so (the reporter
logs it once; training goes on).
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from importlib.util import find_spec
from pathlib import Path
from typing import Any

SERVER = "tooling.writers.feed_server"
PACKAGE_PARENT = str(Path(__file__).resolve().parents[2])  # so the child imports this very tooling
EXECUTABLE = "TOOLING_EXECUTABLE"  # the environment variable naming another environment's `tooling`
# what the records layer imports that the base install lacks (the wiki extra's YAML and schemas)
RECORDS_NEED = ("tooling.writers", "yaml", "ruamel", "fastjsonschema", "jsonschema")


class NoWriter(Exception):
    """No process can write the run record from here."""


def writer_command(tooling: str | None = None) -> list[str]:
    """The child's command line (see the module's docstring); raises :class:`NoWriter`."""
    named = tooling or os.environ.get(EXECUTABLE)
    if named:
        return [named, "report", "--serve"]
    if all(_importable(name) for name in RECORDS_NEED):
        return [sys.executable, "-m", SERVER]
    own = Path(sys.prefix).resolve()
    for folder in os.environ.get("PATH", os.defpath).split(os.pathsep):
        found = shutil.which("tooling", path=folder or ".")
        if found and own not in Path(found).resolve().parents:  # this environment's own lacks the extra too
            return [found, "report", "--serve"]
    raise NoWriter("this environment lacks the package's 'wiki' extra (it cannot write records) and no other "
                   f"environment's `tooling` is on PATH; install the extra, or name one: {EXECUTABLE}=/path/to/bin/tooling")


def _importable(name: str) -> bool:
    try:
        return find_spec(name) is not None  # finds, imports nothing but a dotted name's parent
    except (ImportError, ValueError):
        return False


class RecordWriter:
    """One writer process, started on the first write and again after it died."""

    def __init__(self, tooling: str | None = None) -> None:
        self.tooling = tooling  # another environment's `tooling` executable; None: writer_command's choice
        self._process: subprocess.Popen[str] | None = None

    def write(self, request: dict[str, Any]) -> str | None:
        """Have the child write ``request``; None once written, else what went wrong."""
        try:
            process = self._started()
        except NoWriter as exc:
            return f"NoWriter: {exc}"
        assert process.stdin is not None and process.stdout is not None
        try:
            process.stdin.write(json.dumps(request) + "\n")
            process.stdin.flush()
            answer = process.stdout.readline()
        except OSError:  # a broken pipe: it is gone
            answer = ""
        if not answer:
            self._process = None  # the next write starts another one
            return f"WriterGone: the writer process ended (exit status {process.wait()})"
        reply = json.loads(answer)
        return None if reply.get("ok") else str(reply.get("error"))

    def close(self, timeout: float) -> None:
        """Let the child finish and go; one that does not within ``timeout`` s goes when we do."""
        process, self._process = self._process, None
        if process is None:
            return
        assert process.stdin is not None
        try:
            process.stdin.close()
            process.wait(timeout)
        except (OSError, subprocess.TimeoutExpired):
            pass

    def _started(self) -> subprocess.Popen[str]:
        if self._process is None or self._process.poll() is not None:
            command = writer_command(self.tooling)
            env = dict(os.environ)
            if command[0] == sys.executable:  # this interpreter: this very tooling, not another one on its path
                env["PYTHONPATH"] = os.pathsep.join(p for p in (PACKAGE_PARENT, os.environ.get("PYTHONPATH")) if p)
            self._process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
        return self._process
