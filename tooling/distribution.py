"""This install of the package: its version, and which extra a missing module comes with.

The base install is only what :mod:`tooling.resilience` needs in a training job (the standard
library); the command line and the site come with the ``wiki`` extra, PyTorch with ``training``
(pyproject.toml, README.md "Install"). A command run where its extra is missing ends in one line
that names the extra and the pip command, never in a traceback (:mod:`tooling.error_handler`).
Standard library only: it must answer in an install that has nothing else.
"""
from __future__ import annotations

import tomllib
from pathlib import Path

DISTRIBUTION = "resilience-playbook-tooling"
CHECKOUT_PROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"

# extra -> the top-level modules its requirements install (tests/test_release.py checks this
# against pyproject.toml's extras and the modules their distributions provide)
EXTRA_MODULES = {
    "wiki": ("yaml", "_yaml", "ruamel", "jsonschema", "fastjsonschema", "jinja2", "babel", "mkdocs", "material",
             "pymdownx", "mkdocs_literate_nav", "mkdocs_static_i18n", "mkdocs_git_revision_date_localized_plugin",
             "mike", "git", "rich", "hyperscan"),
    "training": ("torch", "functorch", "torchgen", "numpy", "tensorboard"),
}


def version() -> str:
    """The package's version: a checkout's pyproject.toml (an editable install's metadata may be
    older than the file), else the installed distribution's metadata, else ``unknown``."""
    try:
        project = tomllib.loads(CHECKOUT_PROJECT.read_text(encoding="utf-8")).get("project", {})
        if project.get("name") == DISTRIBUTION:
            return str(project["version"])
    except (OSError, tomllib.TOMLDecodeError, KeyError):
        pass
    from importlib import metadata  # here: 15 ms of every command's start, which a checkout never needs

    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return "unknown"


def extra_of(module: str | None) -> str | None:
    """The extra that installs ``module`` (dotted or not), or None for a module of no extra."""
    top = (module or "").partition(".")[0]
    return next((extra for extra, modules in EXTRA_MODULES.items() if top in modules), None)


def missing_extra(exc: ModuleNotFoundError) -> str | None:
    """One line for a module that an extra of this package installs and this install lacks
    (None for any other missing module: that is a bug, not an install)."""
    extra = extra_of(exc.name)
    if extra is None:
        return None
    needs = "the command line and the site need" if extra == "wiki" else "this needs PyTorch, which comes with"
    return (f"{needs} the '{extra}' extra, not installed here (no module named {exc.name!r}); "
            f"install it: pip install '{DISTRIBUTION}[{extra}]'")
