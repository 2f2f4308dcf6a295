"""The wheel carries the playbook as package data built from this repository's own folders.

pyproject.toml holds the project's metadata; this file adds one step to building it: the
shipped pages, ladders, stack, lab READMEs and example records (tooling/records/shipped.py says
which) are copied into ``tooling/playbook/`` of the wheel, so nothing is kept twice in git. An
editable install copies nothing: the package then reads the checkout itself.
"""
import importlib.util
import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent


def _shipped():
    spec = importlib.util.spec_from_file_location("_shipped", HERE / "tooling" / "records" / "shipped.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class BuildWithPlaybook(build_py):
    def run(self):
        super().run()
        if getattr(self, "editable_mode", False):
            return
        shipped = _shipped()
        target = Path(self.build_lib) / "tooling" / shipped.PACKAGED
        files = shipped.shipped_files(HERE)
        if not any(f.startswith("docs/") for f in files):
            raise SystemExit(f"{HERE}: no docs/ to ship; build the wheel from a checkout or its sdist")
        for relative in files:
            (target / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(HERE / relative, target / relative)


setup(cmdclass={"build_py": BuildWithPlaybook})
