"""Helpers shared by the tests: the `tooling` CLI (in this process, or the real executable), file snapshots, a small disk."""
from __future__ import annotations

import os
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pytest

PROJECT = Path(__file__).resolve().parent.parent
# mkdocs.yml of a test repository with both editions: English, the default, and Korean
BOTH_EDITIONS = """site_name: test
plugins:
  - i18n:
      docs_structure: suffix
      languages:
        - {locale: en, default: true, name: English}
        - {locale: ko, name: 한국어}
"""
CORPUS = PROJECT / "tests" / "corpus"
# A failure mode the shipped catalogue lacks, as a team adds it in runbooks/catalogue.yaml
LUSTRE_MODE = """\
- id: storage.lustre-ost-full
  title: Lustre OST full
  layer: storage
  symptom: crash
  summary: An object storage target of the scratch file system filled up.
  recognisers: ['OST[0-9]+ is full']
  automation: storage-capacity-guard
  playbook: playbook/checkpoint-cadence.md#saving-can-fail-too
"""


# Commands that only a process of their own can run as a user runs them: `tooling()` starts the
# real executable for these, whatever the test.
OWN_PROCESS = {
    "job": "catches the scheduler's signals before its imports; ends as its trainer did",
    "serve": "a server, until a signal ends it",
    "watchdog": "forwards signals and kills its job's process group",
}
# The environment read as the interpreter starts (encoding, locale, paths): a call that sets one
# needs a process that starts with it.
STARTUP_VARIABLES = ("PYTHON", "LANG", "LC_")
# Set (to anything) to run every `tooling()` call through the real executable, as before: the
# in-process path checked against the process on any test file.
EVERY_CALL_A_PROCESS = "TOOLING_TESTS_EXECUTABLE"
_executable_test = False  # the running test is marked `executable` (tests/conftest.py sets it)


def tooling(*args: str, cwd: Path, timeout: float = 60, stdin: str | None = "",
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The CLI as a user runs it, in ``cwd`` (``env`` adds to the environment): its exit status,
    stdout and stderr. In this process (tests/in_process.py: the same ``main(argv)``, its
    directory, environment and streams its own for the call), unless the test is marked
    ``executable`` or the command or environment needs a process of its own: then the real
    ``python -m tooling``."""
    if _needs_process(args, env or {}):
        return subprocess.run([sys.executable, "-m", "tooling", *args], cwd=cwd, input=stdin,
                              capture_output=True, text=True, timeout=timeout, env={**os.environ, **(env or {})})
    import in_process  # imports the whole CLI: only once a test runs it

    return in_process.run(args, cwd=cwd, timeout=timeout, stdin=stdin, env=env)


def _needs_process(args: tuple[str, ...], env: dict[str, str]) -> bool:
    return (_executable_test or bool(os.environ.get(EVERY_CALL_A_PROCESS)) or _command(args) in OWN_PROCESS
            or any(name.startswith(STARTUP_VARIABLES) for name in env)
            or (_command(args) == "watch" and "--once" not in args))  # `watch` follows until a signal


def _command(args: tuple[str, ...]) -> str | None:
    """The command word of a `tooling` command line: the first word that is not a global option
    (``--root R``, ``--now T``, ``--root=R``) or its value."""
    words = iter(args)
    for word in words:
        if word in ("--root", "--now"):
            next(words, None)
        elif not word.startswith("-"):
            return word
    return None


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` (outside .git) with its bytes, to prove nothing changed."""
    return {str(p.relative_to(root)): p.read_bytes()
            for p in sorted(root.rglob("*")) if p.is_file() and ".git" not in p.parts}


@contextmanager
def tmpfs(mount: Path, size: str, inodes: int | None = None) -> Iterator[Path]:
    """A tmpfs of ``size`` (such as 2m) mounted at ``mount``, made here: a real full disk, or a
    file system to remount read-only; with ``inodes``, room for that many files and folders only.
    Root only: the test is skipped where mounting is refused.
    Unmounted afterwards, lazily if something still holds a file there: never a mount left behind."""
    mount.mkdir()
    options = f"size={size}" + (f",nr_inodes={inodes}" if inodes else "")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(mount)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (needs root): {done.stderr.strip()}")
    try:
        yield mount
    finally:
        if subprocess.run(["umount", str(mount)], capture_output=True).returncode != 0:
            subprocess.run(["umount", "--lazy", str(mount)], check=False)
