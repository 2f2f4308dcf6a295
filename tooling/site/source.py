"""Where a generated page comes from: its record's file, the link to edit that file, and when
it last changed.

Hand-written pages get their edit button from mkdocs (``repo_url`` + ``edit_uri``) and their
date from the git-revision-date plugin. Generated pages are not in the repository, so
`tooling build` writes both into their front matter: ``edit_url`` (the record's YAML file, read
by docs/overrides/partials/actions.html) and ``revision_date`` (shown by the theme), in the form
the plugin is configured to print (``2026-11-29 12:00 UTC``). A record's date is its last
commit; a record not committed yet is dated by its file. A page drawn from many records (the
log, trends, the board) is as new as the newest of them.
"""
from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any
from urllib.parse import quote, urljoin

from pathspec import GitIgnoreSpec

from tooling.records.model import Record
from tooling.records.shipped import layered, shipped_root
from tooling.site.config import SiteConfig
from tooling.site.history import Change
from tooling.site.pages import GENERATED_DIR
from tooling.site.playbook import excluded_lines


@dataclass(frozen=True)
class Source:
    path: str  # the record's file, relative to the repository root, with '/' separators
    edit_url: str | None  # None when mkdocs.yml names no repository
    updated: str  # when the file last changed, in UTC: '2026-11-29 12:00 UTC'


def edit_base(config: dict[str, Any]) -> str | None:
    """The URL that a repository path is appended to for editing, from ``repo_url`` and
    ``edit_uri`` (which ends with the docs folder: 'edit/main/docs/' gives '.../edit/main/')."""
    repo_url, edit_uri = config.get("repo_url"), config.get("edit_uri")
    docs = str(config.get("docs_dir") or "docs").strip("/") + "/"
    if not repo_url or not edit_uri or not str(edit_uri).endswith(docs):
        return None  # no repository, or an edit path that does not say where the root is
    return urljoin(str(repo_url).rstrip("/") + "/", str(edit_uri)[: -len(docs)])


def utc_minute(moment: datetime) -> str:
    """A page's date as the site shows it: 2026-03-14 02:47 UTC."""
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def with_front_matter(text: str, fields: dict[str, str]) -> str:
    """``text`` with ``fields`` added to its YAML front matter (a new block if it has none)."""
    lines = "".join(f"{key}: {json.dumps(value)}\n" for key, value in fields.items())
    if text.startswith("---\n"):
        end = text.find("\n---\n", 3)
        if end >= 0:
            return text[: end + 1] + lines + text[end + 1:]
    return f"---\n{lines}---\n\n{text}"


class Sources:
    """The ``source(record)`` template global and the front matter of every generated page."""

    def __init__(self, root: Path, records: list[Record], history: dict[str, list[Change]],
                 site: SiteConfig) -> None:
        config = site.data
        self.roots = (os.path.abspath(root), os.path.realpath(root))  # records name it either way
        self.history = history  # records and labs (tooling.site.history), by absolute path
        self.edit_base = edit_base(config)
        docs_dir = str(config.get("docs_dir") or "docs")
        self.docs_prefix = Path(os.path.relpath(GENERATED_DIR, docs_dir)).as_posix() + "/"
        self.excluded = GitIgnoreSpec.from_lines(excluded_lines(config))
        self.newest = utc_minute(max((self._changed(r.path) for r in records),
                                default=datetime.fromtimestamp(0, timezone.utc)))
        self.known: dict[str, Source] = {}

    def __call__(self, record: Record) -> Source:
        known = self.known.get(record.path)
        if known is None:  # asked for each page of each edition: found once per render
            path, edit_url = self._relative(record.path), None
            if os.path.isabs(path):  # a record shipped with the package: no file of the repository to edit
                path = Path(os.path.relpath(record.path, shipped_root())).as_posix()
            else:
                edit_url = self._edit_url(path)
            known = self.known[record.path] = Source(path, edit_url, utc_minute(self._changed(record.path)))
        return known

    def front_matter(self, relative: str, item: Any, text: str) -> str:
        """A generated file's text with its date (and edit link, for a record's page) added,
        when mkdocs builds it as a page; navigation files and snippets are left alone."""
        docs_path = self.docs_prefix + relative
        if not relative.endswith(".md") or self.excluded.match_file(docs_path):
            return text
        record = item if isinstance(item, Record) else getattr(item, "record", None)
        if isinstance(record, Record):
            origin, path = self._relative(record.path), record.path
            origin = None if os.path.isabs(origin) else origin  # shipped with the package: nothing to edit
        elif (origin := _lab_origin(relative)) is not None:
            path = os.path.join(self.roots[0], origin)  # the history's key: under the root as given, made absolute
            if not os.path.exists(path):  # a team's repository: the lab pages the package ships
                path, origin = str(layered(Path(self.roots[0]), origin)), None
        else:  # drawn from many records
            return with_front_matter(text, {"revision_date": self.newest})
        fields = {"revision_date": utc_minute(self._changed(path))}
        if origin is not None and (url := self._edit_url(origin)) is not None:
            fields["edit_url"] = url
        return with_front_matter(text, fields)

    def _relative(self, path: str) -> str:
        """The path from the repository root; abspath first, since realpath stats every folder
        (strings, not pathlib: asked for every record at every render of `tooling serve`)."""
        for resolve in (os.path.abspath, os.path.realpath):
            candidate = resolve(path)
            for root in self.roots:
                inside = root.rstrip(os.sep) + os.sep
                if candidate == root:
                    return "."
                if candidate.startswith(inside):
                    return candidate[len(inside):].replace(os.sep, "/")
        return Path(path).as_posix()

    def _edit_url(self, relative: str) -> str | None:
        return None if self.edit_base is None else self.edit_base + quote(relative)

    def _changed(self, path: str) -> datetime:
        """The file's last commit, or its modification time while it is not committed."""
        changes = self.history.get(os.path.normpath(os.path.abspath(path)))
        if changes:
            return datetime.fromisoformat(changes[0].date)
        try:
            return datetime.fromtimestamp(os.stat(path).st_mtime, timezone.utc)
        except OSError:
            return datetime.fromtimestamp(0, timezone.utc)


# A lab page's file name: '03-nan-guard.md', or '03-nan-guard.ko.md' for its Korean edition.
_LAB_PAGE = re.compile(r"(?P<name>.+?)(?P<lang>\.[a-z]{2})?\.md")


def _lab_origin(relative: str) -> str | None:
    """The README a lab page is copied from (see tooling.site.labs), or None: 'labs/03-x.md'
    from labs/03-x/README.md, its Korean edition 'labs/03-x.ko.md' from labs/03-x/README.ko.md."""
    parts = relative.split("/")
    page = _LAB_PAGE.fullmatch(parts[1]) if len(parts) == 2 and parts[0] == "labs" else None
    if page is None:
        return None
    readme = f"README{page['lang'] or ''}.md"
    return f"labs/{readme}" if page["name"] == "index" else f"labs/{page['name']}/{readme}"
