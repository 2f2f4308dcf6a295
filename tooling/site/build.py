"""`tooling build`: validate, analyse, render, then mkdocs build --strict, in one process."""
from __future__ import annotations

import logging
import re
from datetime import datetime
from pathlib import Path
from typing import Any

from tooling.errors import UserError
from tooling.records.findings import shown_path
from tooling.site.config import SiteConfig
from tooling.site.history import site_history
from tooling.site.markup_check import check_site
from tooling.site.output import discard, new_build_dir, site_target, swap_in
from tooling.site.pages import GENERATED_DIR
from tooling.site.render import RenderResult, render_pages
from tooling.site.rerender import Rerender
from tooling.analysis import load_analysis
from tooling.rules.validate import Checked

SHOWN = 50  # problems listed in one error, as `tooling validate` lists records'
# The environment of an mkdocs (or mike) child: mkdocs-material and properdocs each print a long
# notice about MkDocs 2 when imported, each silenced by its own variable.
MKDOCS_ENV = {"NO_MKDOCS_2_WARNING": "1", "DISABLE_MKDOCS_2_WARNING": "true"}
DOC_FILE = re.compile(r"^Doc file '([^']+)' (.*)\Z", re.S)


def render_site(root: Path, *, now: datetime, site: SiteConfig, checked: Checked | None = None,
                rerender: Rerender | None = None) -> RenderResult:
    """Validate, analyse, render (``site``: mkdocs.yml as this build read it; git is asked once
    here). ``checked``, ``rerender``: what `tooling serve`'s last render checked and rendered,
    done again only where the records changed."""
    try:
        analysis = load_analysis(root, now=now, checked=checked)
    except UserError as exc:
        raise UserError(f"site not built: {exc}") from None
    return render_pages(analysis, site_history(root), root=root.resolve(),
                        out_dir=root / GENERATED_DIR, site=site, rerender=rerender)


def mkdocs_build(root: Path, site: SiteConfig, *, site_dir: Path | None = None, strict: bool = True) -> Path:
    """Every edition of the site (mkdocs-static-i18n builds them all in one build), checked, then
    swapped in whole (tooling.site.output): a failed build leaves the previous site as it was.
    mkdocs reads the bytes of mkdocs.yml this build read (``site``). Returns the site folder."""
    from mkdocs.commands.build import build
    from mkdocs.config import load_config
    from mkdocs.exceptions import MkDocsException
    from pymdownx.snippets import SnippetMissingError

    problems = _mkdocs_logging()
    try:
        config = load_config(site.stream(), strict=strict)
    except MkDocsException as exc:
        raise UserError(f"{site.path}: {_said(problems, exc, root / 'docs')}") from None
    target = site_target(root, site_dir, site)
    docs_dir = Path(config.docs_dir)
    config.site_dir = str(new_build_dir(target))
    try:
        build(config)
        # Markdown that the build left as text on a generated page fails it too (see markup_check).
        check_site(Path(config.site_dir), generated=root / GENERATED_DIR, docs_dir=docs_dir,
                   editions=site_editions(config), shown_as=target)
        swap_in(Path(config.site_dir), target)
    except (MkDocsException, SnippetMissingError) as exc:  # a page including a file that is not there
        raise UserError(f"site not built, {shown_path(target)}/ left as it was: {_said(problems, exc, docs_dir)}") from None
    except OSError as exc:  # a full disk: name the site folder, not the temporary one
        raise OSError(exc.errno, exc.strerror, str(target)) from None
    finally:
        discard(Path(config.site_dir))
    return target


def _said(problems: list[str], exc: Exception, docs_dir: Path) -> str:
    """What mkdocs logged as warnings or errors, one line each, located at the page where it
    names one ("Doc file 'x.md' contains ..."); mkdocs itself raises only a summary."""
    if not problems:
        return str(exc)
    docs = shown_path(docs_dir)
    lines = list(dict.fromkeys(f"{docs}/{m[1]}: {m[2]}" if (m := DOC_FILE.match(p)) else p for p in problems))
    more = [f"... and {len(lines) - SHOWN} more"] if len(lines) > SHOWN else []
    return "\n".join(lines[:SHOWN] + more)


def site_editions(config: Any) -> list[str]:
    """The folder of each edition in the built site: '' for the default language at the root,
    'ko/' for Korean; [''] for a site without mkdocs-static-i18n."""
    from tooling.site.edition_site import edition_prefix  # imports mkdocs: only when building

    i18n = config.plugins.get("i18n")
    if i18n is None:
        return [""]
    return [edition_prefix(lang, i18n.default_language) for lang in i18n.build_languages]


def _mkdocs_logging() -> list[str]:
    """mkdocs' warnings and errors, collected for the error message instead of printed as they
    come (its strict mode ends with a bare "Aborted with N warnings"); a fresh list per build."""
    logger = logging.getLogger("mkdocs")
    for old in [h for h in logger.handlers if getattr(h, "_tooling", False)]:
        logger.removeHandler(old)
    handler = _Collect()
    handler.setLevel(logging.WARNING)
    handler._tooling = True  # type: ignore[attr-defined]
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    return handler.problems


class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.problems: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.problems.append(record.getMessage().strip())
