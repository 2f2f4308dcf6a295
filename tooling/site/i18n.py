"""Editions of the generated pages: one per language, with its words from a gettext catalogue.

Translation is a layer of the render step (DESIGN.md): the analysis is computed once, and each
edition renders it with its own catalogue installed, so templates and the Python that writes
page text take every word from ``tooling/locale/<lang>/LC_MESSAGES/messages.po``; record text
is never translated. English is the source language: its edition has no catalogue, the
messages are its words.

The catalogues ship as ``.po`` only and are compiled in memory when a build first needs them
(a few milliseconds): nothing compiled is kept in git or in the package, so no ``.mo`` can
disagree with the ``.po`` it came from, and editing a translation needs no extra step.
A message whose translation is missing or fuzzy falls back to English; the catalogue test
(tests/test_messages.py) fails on any such message, so none reaches a release.

Which editions a build writes follows mkdocs.yml: English always, and each other language the
``i18n`` plugin (mkdocs-static-i18n) lists that has a catalogue here. A site without the plugin
gets English alone, written exactly as before the Korean edition existed.
"""
from __future__ import annotations

import gettext
from dataclasses import dataclass, field
from functools import lru_cache
from io import BytesIO
from pathlib import Path
from typing import Any

from babel import Locale
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from babel.support import Translations


DEFAULT = "en"  # the source language, and the site's default edition
LOCALE_DIR = Path(__file__).resolve().parent.parent / "locale"
DOMAIN = "messages"


def catalogue_path(lang: str) -> Path:
    return LOCALE_DIR / lang / "LC_MESSAGES" / f"{DOMAIN}.po"


@lru_cache(maxsize=None)
def translations(lang: str) -> gettext.NullTranslations:
    """The language's catalogue compiled in memory; fuzzy and empty entries are left out, so
    that they fall back to English rather than to a guess."""
    if lang == DEFAULT:
        return gettext.NullTranslations()
    with catalogue_path(lang).open("rb") as po:
        catalog = read_po(po, locale=lang, domain=DOMAIN)
    compiled = BytesIO()
    write_mo(compiled, catalog, use_fuzzy=False)
    compiled.seek(0)
    return Translations(compiled, domain=DOMAIN)


@dataclass(frozen=True)
class Edition:
    """One language of the site: its catalogue and its locale's conventions."""

    lang: str
    translations: gettext.NullTranslations = field(compare=False, repr=False)

    @property
    def default(self) -> bool:
        return self.lang == DEFAULT

    @property
    def locale(self) -> Locale:
        return _locale(self.lang)

    def gettext(self, message: str) -> str:
        return self.translations.gettext(message)

    def ngettext(self, singular: str, plural: str, n: int) -> str:
        return self.translations.ngettext(singular, plural, n)

    def page(self, relative: str) -> str:
        """Where this edition's copy of a generated page goes: ``P.md`` for the default
        language, ``P.ko.md`` beside it for Korean (mkdocs-static-i18n's suffix structure)."""
        if self.default or not relative.endswith(".md"):
            return relative
        return f"{relative[:-3]}.{self.lang}.md"


@lru_cache(maxsize=None)
def _locale(lang: str) -> Locale:
    return Locale.parse(lang)


@lru_cache(maxsize=None)
def edition(lang: str) -> Edition:
    return Edition(lang, translations(lang))


ENGLISH = Edition(DEFAULT, gettext.NullTranslations())


def site_languages(config: dict[str, Any]) -> tuple[str, ...]:
    """The editions mkdocs.yml asks for (``config``: its parsed text), default first: the
    locales of the ``i18n`` plugin that have a catalogue here."""
    langs = [DEFAULT]
    for entry in config.get("plugins") or []:
        options = entry.get("i18n") if isinstance(entry, dict) else None
        for language in (options or {}).get("languages") or []:
            lang = str(language.get("locale", "")) if isinstance(language, dict) else ""
            if lang and lang not in langs and catalogue_path(lang).is_file():
                langs.append(lang)
    return tuple(langs)
