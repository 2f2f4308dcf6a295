"""A Python process as a training environment sees it: the package without its ``wiki`` extra.

:func:`run` starts ``python -c SCRIPT`` with a meta-path finder first on ``sys.meta_path`` that
refuses every module the ``wiki`` extra installs (tooling.distribution.EXTRA_MODULES, and
Markdown, which mkdocs brings), as an install without them would: ``import yaml`` raises
ModuleNotFoundError and ``importlib.util.find_spec("yaml")`` finds nothing. Whatever the script
imports that needs them fails there, as it would in that environment.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from tooling.distribution import EXTRA_MODULES

REFUSED = (*EXTRA_MODULES["wiki"], "markdown")

PRELUDE = f"""\
import importlib.abc, sys
class _Refuse(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.partition('.')[0] in {REFUSED!r}:
            raise ModuleNotFoundError(f'No module named {{name!r}} (refused: the wiki extra is not installed)', name=name)
        return None
sys.meta_path.insert(0, _Refuse())
"""


def run(script: str, *args: str | Path, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    """``python -c SCRIPT ARGS...`` without the wiki extra; keyword arguments go to subprocess.run."""
    kwargs.setdefault("timeout", 120)
    return subprocess.run([sys.executable, "-c", PRELUDE + script, *map(str, args)], capture_output=True, text=True,
                          **kwargs)
