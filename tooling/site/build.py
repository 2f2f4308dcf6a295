"""`tooling build`: validate, analyse, render, then mkdocs build --strict, in one process."""
from __future__ import annotations

import logging
from datetime import datetime
from pathlib import Path

from tooling.analysis import Analysis, analyse
from tooling.errors import UserError
from tooling.records.findings import Severity
from tooling.records.kinds import RECORD_DIRS
from tooling.records.validate import validate
from tooling.site.history import record_history
from tooling.site.pages import GENERATED_DIR
from tooling.site.render import RenderResult, render_pages


def load_analysis(root: Path, *, now: datetime) -> Analysis:
    """Validated records turned into the analysis; any validation error stops the build."""
    report = validate([root / d for d in RECORD_DIRS if (root / d).is_dir()], root=root)
    errors = [f for f in report.findings if f.severity is Severity.ERROR]
    if errors:
        lines = "\n".join(f.format(relative_to=Path.cwd()) for f in errors[:50])
        raise UserError(f"records do not validate, site not built:\n{lines}")
    return analyse(report.records, now=now)


def render_site(root: Path, *, now: datetime) -> RenderResult:
    return render_pages(load_analysis(root, now=now), record_history(root), root=root.resolve(),
                        out_dir=root / GENERATED_DIR)


def mkdocs_build(root: Path, *, site_dir: Path | None = None, strict: bool = True) -> None:
    from mkdocs.commands.build import build
    from mkdocs.config import load_config
    from mkdocs.exceptions import MkDocsException

    _mkdocs_logging()
    try:
        config = load_config(str(root / "mkdocs.yml"), strict=strict,
                             site_dir=str(site_dir) if site_dir else None)
        build(config)
    except MkDocsException as exc:
        raise UserError(f"mkdocs build failed: {exc}") from None


def _mkdocs_logging() -> None:
    """Warnings and errors from mkdocs on stderr, as its own CLI would print them."""
    logger = logging.getLogger("mkdocs")
    if not any(getattr(h, "_tooling", False) for h in logger.handlers):
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("%(levelname)-7s -  %(message)s"))
        handler.setLevel(logging.WARNING)
        handler._tooling = True  # type: ignore[attr-defined]
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)
