"""Lab pages: each lab's README (and the charts it ships) copied into the site with its nav.

Lab READMEs are hand-written project documentation, not records, so they are taken as they
are; only links between lab folders are rewritten to the pages they become.
"""
from __future__ import annotations

import re
from pathlib import Path

_README_LINK = re.compile(r"\]\(([\w.-]+)/README\.md\)")


def lab_pages(root: Path) -> dict[str, str]:
    """{path under the generated folder: text} for every lab page, asset and the labs nav."""
    labs = root / "labs"
    if not (labs / "README.md").is_file():
        return {}
    pages = {"labs/index.md": _README_LINK.sub(r"](\1.md)", (labs / "README.md").read_text(encoding="utf-8"))}
    nav = ["* [Labs](index.md)"]
    for folder in sorted(p for p in labs.iterdir() if (p / "README.md").is_file()):
        text = (folder / "README.md").read_text(encoding="utf-8")
        pages[f"labs/{folder.name}.md"] = text
        title = next((line[2:].strip() for line in text.splitlines() if line.startswith("# ")), folder.name)
        nav.append(f"* [{title}]({folder.name}.md)")
        for chart in sorted(folder.glob("*.svg")):
            pages[f"labs/{chart.name}"] = chart.read_text(encoding="utf-8")
    pages["labs/SUMMARY.md"] = "\n".join(nav) + "\n"
    return pages
