"""`tooling build`: validate, analyse, render, then mkdocs build --strict, in one process."""
from __future__ import annotations

import logging
from datetime import datetime
from pathlib import Path
from typing import Any

from tooling.errors import UserError
from tooling.site.history import record_history
from tooling.site.markup_check import check_site
from tooling.site.pages import GENERATED_DIR
from tooling.site.render import RenderResult, render_pages
from tooling.workspace import load_analysis


def render_site(root: Path, *, now: datetime) -> RenderResult:
    try:
        analysis = load_analysis(root, now=now)
    except UserError as exc:
        raise UserError(f"site not built: {exc}") from None
    return render_pages(analysis, record_history(root), root=root.resolve(),
                        out_dir=root / GENERATED_DIR)


def mkdocs_build(root: Path, *, site_dir: Path | None = None, strict: bool = True) -> None:
    """Every edition of the site (mkdocs-static-i18n builds them all in one build), checked."""
    from mkdocs.commands.build import build
    from mkdocs.config import load_config
    from mkdocs.exceptions import MkDocsException
    from pymdownx.snippets import SnippetMissingError

    _mkdocs_logging()
    try:
        config = load_config(str(root / "mkdocs.yml"), strict=strict,
                             site_dir=str(site_dir) if site_dir else None)
        build(config)
    except (MkDocsException, SnippetMissingError) as exc:  # a page including a file that is not there
        raise UserError(f"mkdocs build failed: {exc}") from None
    # Markdown that the build left as text on a generated page fails it too (see markup_check).
    check_site(Path(config.site_dir), generated=root / GENERATED_DIR, docs_dir=Path(config.docs_dir),
               editions=site_editions(config))


def site_editions(config: Any) -> list[str]:
    """The folder of each edition in the built site: '' for the default language at the root,
    'ko/' for Korean; [''] for a site without mkdocs-static-i18n."""
    from tooling.site.editions import edition_prefix  # imports mkdocs: only when building

    i18n = config.plugins.get("i18n")
    if i18n is None:
        return [""]
    return [edition_prefix(lang, i18n.default_language) for lang in i18n.build_languages]


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
