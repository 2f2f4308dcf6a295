"""Lab pages: each lab's README (and the charts it ships) copied into the site with its nav.

Lab READMEs are hand-written project documentation, not records, so they are taken as they
are; only links between lab folders are rewritten to the pages they become. A translation
beside a README (``README.ko.md``) becomes that page's edition (``labs/<lab>.ko.md``, the
suffix mkdocs-static-i18n reads); a lab without one falls back to English in that edition.
"""
from __future__ import annotations

import re
from pathlib import Path

from tooling.records.shipped import layered

# A link to another lab's README, in any edition: ](03-nan-guard/README.md) or README.ko.md
_README_LINK = re.compile(r"\]\(([\w.-]+)/README(?:\.[a-z]{2})?\.md\)")
# README.ko.md -> "ko"
_TRANSLATION = re.compile(r"README\.([a-z]{2})\.md")


def lab_pages(root: Path) -> dict[str, str]:
    """{path under the generated folder: text} for every lab page, asset and the labs nav, in
    every language a README is translated into."""
    labs = layered(root, "labs/README.md").parent  # a team's repository: the labs the package ships
    if not (labs / "README.md").is_file():
        return {}
    folders = sorted(p for p in labs.iterdir() if (p / "README.md").is_file())
    pages: dict[str, str] = {}
    for suffix in ["", *_languages(labs, folders)]:
        pages.update(_edition(labs, folders, suffix))
    for folder in folders:
        for chart in sorted(folder.glob("*.svg")):
            pages[f"labs/{chart.name}"] = chart.read_text(encoding="utf-8")
    return pages


def _languages(labs: Path, folders: list[Path]) -> list[str]:
    """The suffixes ('.ko') of the languages any README of the labs is translated into."""
    found = {m.group(1) for folder in [labs, *folders] for path in folder.glob("README.*.md")
             if (m := _TRANSLATION.fullmatch(path.name))}
    return [f".{lang}" for lang in sorted(found)]


def _edition(labs: Path, folders: list[Path], suffix: str) -> dict[str, str]:
    """One edition's lab pages (``suffix``: '' or '.ko'): only the READMEs translated into it,
    and its nav, which names every lab, by its translated title where there is one."""
    pages = {}
    index = _readme(labs, suffix)
    if index is not None:
        pages[f"labs/index{suffix}.md"] = _README_LINK.sub(r"](\1.md)", index)
    nav = [f"* [{_title(_readme(labs, suffix) or _readme(labs, ''), 'Labs')}](index.md)"]
    for folder in folders:
        text = _readme(folder, suffix)
        if text is not None:
            pages[f"labs/{folder.name}{suffix}.md"] = text
        nav.append(f"* [{_title(text or _readme(folder, ''), folder.name)}]({folder.name}.md)")
    pages[f"labs/SUMMARY{suffix}.md"] = "\n".join(nav) + "\n"
    return pages


def _readme(folder: Path, suffix: str) -> str | None:
    path = folder / f"README{suffix}.md"
    return path.read_text(encoding="utf-8") if path.is_file() else None


def _title(text: str | None, default: str) -> str:
    return next((line[2:].strip() for line in (text or "").splitlines() if line.startswith("# ")), default)
