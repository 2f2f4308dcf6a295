"""tooling.analysis.forked.aside: work made in a forked child gives what it gives made here.

Each case runs in a fresh interpreter: a pytest worker may have other threads, where aside
(rightly) never forks.
"""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from support import CORPUS, PROJECT

NOW = "2026-11-29T12:00:00+00:00"


def python(code: str, env: dict[str, str] | None = None) -> str:
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=PROJECT, capture_output=True,
                            text=True, timeout=120, env={**os.environ, **(env or {})})
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_the_work_is_made_in_a_child_and_its_result_comes_back() -> None:
    out = python("""
        import os
        from tooling.analysis.forked import aside
        with aside(lambda: (os.getpid(), [1, "two", {"three": 3.0}]), worth=True) as made:
            pid, value = made()
        print(pid != os.getpid(), value)
    """)
    assert out == "True [1, 'two', {'three': 3.0}]\n"


@pytest.mark.parametrize("worth, thread, forked", [(False, False, "False"), (True, True, "False"),
                                                  (True, False, "True")],
                         ids=["not worth it", "another thread alive", "forked"])
def test_it_forks_only_when_worth_it_and_no_other_thread_runs(worth: bool, thread: bool, forked: str) -> None:
    out = python(f"""
        import os, threading
        from tooling.analysis.forked import aside
        stop = threading.Event()
        if {thread}:
            threading.Thread(target=stop.wait).start()
        with aside(os.getpid, worth={worth}) as made:
            print(made() != os.getpid())
        stop.set()
    """)
    assert out == f"{forked}\n"


def test_a_child_that_raises_or_is_killed_leaves_the_work_to_this_process() -> None:
    out = python("""
        import os, signal
        from tooling.analysis.forked import aside
        parent = os.getpid()

        def raises():
            raise ValueError(f"raised in {'the child' if os.getpid() != parent else 'the parent'}")

        def killed():
            if os.getpid() != parent:
                os.kill(os.getpid(), signal.SIGKILL)
            return "made here"

        with aside(killed, worth=True) as made:
            print(made())
        try:
            with aside(raises, worth=True) as made:
                made()
        except ValueError as error:
            print(error)
    """)
    assert out == "made here\nraised in the parent\n"


def test_a_child_whose_result_is_not_asked_for_is_ended() -> None:
    out = python("""
        import os, time
        from tooling.analysis.forked import aside
        try:
            with aside(lambda: time.sleep(60), worth=True) as made:
                children = open(f"/proc/{os.getpid()}/task/{os.getpid()}/children").read().split()
                raise RuntimeError("an error before the result is asked for")
        except RuntimeError:
            pass
        print(len(children), [os.path.exists(f"/proc/{c}") for c in children])
    """)
    assert out == "1 [False]\n"


def test_tooling_repeats_says_the_same_with_the_suggestions_made_aside(tmp_path: Path) -> None:
    """The whole command on a labelled corpus, in one interpreter, its suggestions made here and in
    a child: cold (no kept file yet), warm (each incident's words kept from the run before), and
    with nothing kept (TOOLING_NO_CACHE: the index reads the words itself)."""
    out = python(f"""
        import contextlib, io, json, os
        import tooling.analysis
        from tooling.analysis.forked import forkable
        from tooling.main import main
        said = []
        for aside_from, cache in ((10**9, "kept"), (1, "kept"), (10**9, "kept"), (1, "none")):
            tooling.analysis.ASIDE_FROM = aside_from
            if cache == "none":
                os.environ["TOOLING_NO_CACHE"] = "1"
            assert forkable()
            with contextlib.redirect_stdout(io.StringIO()) as printed:
                main(["--root", "{CORPUS / 'realworld'}", "--now", "{NOW}", "repeats", "--json"])
            said.append(printed.getvalue())
        print(len(set(said)), len(json.loads(said[0])["likely_repeats"]))
    """, {"XDG_CACHE_HOME": str(tmp_path)})
    assert out == "1 50\n"
