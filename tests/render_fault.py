"""A render error on demand in the real CLI, for the tests that a failed render harms nothing.

``python -c RENDER_FAULT ARGS...`` runs ``tooling ARGS...`` with every Korean page failing to
render where a value holds :data:`MARKER`, as the Korean repeats page failed on a score before
issue 21 (KeyError: "'.2f'") while the English pages rendered. Once such a bug is fixed no record
can make a page fail, so the fault is put in at the one place every value of a page passes
through: the template environment's ``finalize``.
"""
from __future__ import annotations

import sys

MARKER = "RENDER-FAULT"
ERROR = "KeyError: \"'.2f'\""  # what the handler says of the KeyError below
RENDER_FAULT = f"""
import sys
from tooling.site import render
from tooling.main import main
made = render.environment
def environment(t):
    env = made(t)
    if not t.default:
        shown = env.finalize
        def finalize(value):
            if {MARKER!r} in str(value):
                raise KeyError(".2f")  # as the table of patterns did
            return shown(value)
        env.finalize = finalize
    return env
render.environment = environment
sys.exit(main(sys.argv[1:]))
"""


def faulty_tooling(*args: str) -> list[str]:
    """The command line of ``tooling ARGS...`` with the fault in."""
    return [sys.executable, "-c", RENDER_FAULT, *args]
