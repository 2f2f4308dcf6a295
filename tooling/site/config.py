"""mkdocs.yml, read once per build: its bytes, which mkdocs parses for the build, and what tooling
itself asks of them (the site folder, the docs folder, the editions, the repository's edit link).

`tooling build` read the file four times (the site folder checked, the editions, the pages'
sources, the site folder again) and mkdocs a fifth; one reading handed down also means that an
edit of the file during a build cannot give its parts two different configurations.
"""
from __future__ import annotations

import io
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import yaml

from tooling.errors import UserError
from tooling.records.load import yaml_finding
from tooling.records.shipped import note_config

CONFIG_FILE = "mkdocs.yml"


class _Loader(yaml.SafeLoader):
    """mkdocs.yml may hold tags for mkdocs itself (!ENV, !!python/name:...): read them as null."""


_Loader.add_multi_constructor("", lambda loader, suffix, node: None)
_Loader.add_multi_constructor("tag:yaml.org,2002:python/", lambda loader, suffix, node: None)


class _Named(io.BytesIO):
    """The file's bytes as mkdocs opens a file: it takes the file's path (and an INHERIT's
    folder) from the stream's name."""

    def __init__(self, data: bytes, name: str) -> None:
        super().__init__(data)
        self.name = name


@dataclass(frozen=True)
class SiteConfig:
    path: Path  # the file, whether or not it exists
    text: bytes | None  # None: there is no such file
    data: dict[str, Any]  # its mapping as tooling reads it ({} for no file, or one that is not a mapping)

    def stream(self) -> BinaryIO | str:
        """What mkdocs' load_config reads: the bytes read here, or the path, for mkdocs to say
        that the file is missing in its own words."""
        return str(self.path) if self.text is None else _Named(self.text, os.path.abspath(self.path))


def read_site_config(root: Path) -> SiteConfig:
    """The file under ``root``; one that does not parse is refused where it fails, as a record is."""
    path = root / CONFIG_FILE
    try:
        text = path.read_bytes()
    except FileNotFoundError:
        return SiteConfig(path, None, {})
    note_config(path, text)  # whether it takes the shipped playbook, asked by the records' layout
    try:
        data = yaml.load(text.decode("utf-8"), Loader=_Loader)
    except yaml.MarkedYAMLError as exc:
        raise UserError(yaml_finding(str(path), exc).format(relative_to=Path.cwd())) from None
    return SiteConfig(path, text, data if isinstance(data, dict) else {})
