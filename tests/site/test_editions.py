"""The two editions of the site, English at the root and Korean under /ko/ (mkdocs-static-i18n
and tooling/site/editions.py): the language menu, the page language, the "not yet translated"
note, the navigation of each edition and each edition's own search, in real Chromium."""
from __future__ import annotations

import html.parser
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Iterator

import pytest
import yaml
from babel.messages.pofile import read_po
from playwright.sync_api import Browser, Page, expect

from site_support import PROJECT, served
from test_navigation import site_nav
from test_site_browser import search
from tooling.site.config import read_site_config
from tooling.site.i18n import catalogue_path, edition
from tooling.site.labs import lab_pages

HANGUL = re.compile(r"[\uac00-\ud7a3]")
NOTE = "아직 번역되지 않았습니다 (not yet translated)"
LANG = re.compile(r'<html lang="([^"]+)"')


def _pages(folder: Path, skip: Path | None = None) -> list[Path]:
    return sorted(p for p in folder.rglob("index.html")
                  if p.parent.name != "search" and not (skip and p.is_relative_to(skip)))


# --- the built site, file by file ---------------------------------------------------------------

def test_every_page_is_in_both_editions_with_its_language(built_site: Path) -> None:
    english = _pages(built_site, skip=built_site / "ko")
    korean = _pages(built_site / "ko")
    assert [p.relative_to(built_site) for p in english] == [p.relative_to(built_site / "ko") for p in korean]
    assert {p: LANG.search(p.read_text()).group(1) for p in english} == {p: "en" for p in english}
    assert {p: LANG.search(p.read_text()).group(1) for p in korean} == {p: "ko" for p in korean}
    home = (built_site / "ko" / "index.html").read_text()
    assert 'aria-label="어두운 팔레트로 전환"' in home and 'aria-label="밝은 팔레트로 전환"' in home


def test_a_headings_permalink_says_so_in_the_editions_language(built_site: Path) -> None:
    titles = {folder: set(re.findall(r'<a class="headerlink" href="[^"]*" title="([^"]*)"',
                                     (built_site / folder / "playbook" / "checkpoint-cadence" / "index.html").read_text()))
              for folder in ("", "ko")}
    assert titles == {"": {"Permanent link"}, "ko": {"이 제목의 고정 링크"}}


def test_a_korean_page_without_its_translation_says_so_and_no_other_does(built_site: Path) -> None:
    """The note is there exactly on the Korean pages whose file is the English one."""
    nav = site_nav(built_site.parent, "ko")
    assert nav.pages
    wrong = {}
    for page in nav.pages:
        translated = page.file.src_uri.endswith(".ko.md")
        text = (built_site / page.file.dest_uri).read_text()
        if (NOTE in text) == translated or ('<div lang="en">' in text) == translated:
            wrong[page.file.src_uri] = "note missing" if not translated else "note on a translated page"
    assert wrong == {}
    for page in _pages(built_site, skip=built_site / "ko"):
        assert NOTE not in page.read_text(), page


def test_a_korean_page_links_to_edit_its_own_file(built_site: Path) -> None:
    edit = re.compile(r'<a href="https://github.com/example/resilience-playbook/edit/main/([^"]+)" title="[^"]*" '
                      r'class="md-content__button md-icon" rel="edit">')
    for page, source in (("generated/labs/03-nan-guard", "labs/03-nan-guard/README.ko.md"),
                         ("generated/labs", "labs/README.ko.md"), ("playbook/nan-guard", "docs/playbook/nan-guard.ko.md"),
                         ("generated/incidents/INC-0004", "incidents/INC-0004.yaml")):  # records are not translated
        assert edit.findall((built_site / "ko" / page / "index.html").read_text()) == [source], page


def test_the_korean_navigation_lists_the_same_pages_as_the_english_one() -> None:
    """docs/SUMMARY.ko.md is docs/SUMMARY.md with Korean titles: same links, same order, same depth."""
    def outline(name: str) -> list[tuple[int, str]]:
        lines = (PROJECT / "docs" / name).read_text(encoding="utf-8").splitlines()
        return [(len(m["indent"]), m["link"] or "") for line in lines
                if (m := re.match(r"(?P<indent> *)\* (?:\[[^\]]*\]\((?P<link>[^)]*)\)|\S.*)$", line))]

    english, korean = outline("SUMMARY.md"), outline("SUMMARY.ko.md")
    assert len(english) >= 25 and korean == english


def _fonts(page: Page, selector: str) -> dict[str, int]:
    """{font family: glyphs} Chromium drew the element's text with (after the web fonts loaded)."""
    page.evaluate("document.fonts.ready.then(() => true)")
    cdp = page.context.new_cdp_session(page)
    cdp.send("DOM.enable")
    cdp.send("CSS.enable")
    root = cdp.send("DOM.getDocument")["root"]["nodeId"]
    node = cdp.send("DOM.querySelector", {"nodeId": root, "selector": selector})["nodeId"]
    return {f["familyName"]: f["glyphCount"] for f in cdp.send("CSS.getPlatformFontsForNode", {"nodeId": node})["fonts"]}


def test_hangul_is_drawn_with_a_korean_font_even_where_the_machine_has_none(fresh_page: Page, site_url: str) -> None:
    """This machine has no Korean font (Hangul would be empty boxes): the vendored Noto Sans KR
    draws every syllable of a Korean title, fetched from the site itself, and no Latin letter."""
    failed: list[str] = []
    fresh_page.on("requestfailed", lambda r: failed.append(r.url))
    fresh_page.goto(site_url + "/ko/generated/ladders/hang/")
    fresh_page.wait_for_load_state("networkidle")
    title = fresh_page.locator("article h1").inner_text()
    syllables = sum(1 for c in title if "\uac00" <= c <= "\ud7a3")
    korean = {family: glyphs for family, glyphs in _fonts(fresh_page, "article h1").items() if "KR" in family}
    assert syllables > 10 and sum(korean.values()) == syllables and failed == [], (title, korean, failed)
    fresh_page.goto(site_url + "/generated/ladders/hang/")
    assert not any("KR" in family for family in _fonts(fresh_page, "article h1"))


# --- generated pages in Korean: their words come from the catalogue (tooling/locale/ko) --------

def _korean(msgid: str) -> str:
    """The Korean catalogue's translation of ``msgid``, which must be one."""
    text = edition("ko").gettext(msgid)
    assert text != msgid and HANGUL.search(text), f"the Korean catalogue does not translate {msgid!r}"
    return text


def test_the_korean_home_page_shows_the_run_cards_banner_and_on_call_in_korean(page: Page, site_url: str) -> None:
    page.goto(site_url + "/ko/")
    cards = page.locator(".run-cards")
    expect(cards).to_contain_text("Demo 7B pretraining, 3T tokens on atlas")  # record text stays as written
    for label in ("Last good checkpoint:", "On call now:", "next:", "Known issues:", "Debugging in progress:"):
        expect(cards).to_contain_text(_korean(label))
    for english in ("Last good checkpoint", "On call now", "Known issues", "Debugging in progress"):
        expect(cards).not_to_contain_text(english)
    banner = page.locator(".admonition.stale")
    expect(banner).to_have_count(1)
    title = _korean("%(title)s: this page is %(hours)s hours old") % {"title": "Stale 13B finetune", "hours": "220"}
    expect(banner.locator(".admonition-title")).to_have_text(title)


class _Labels(html.parser.HTMLParser):
    """The words a page shows as labels: headings, table headers and first cells, strong text,
    admonition titles, tags, chart texts and the navigation; and the data-label, aria-label and
    title attributes. Record text in table bodies, paragraphs and links is left out."""

    ELEMENTS = {"h1", "h2", "h3", "h4", "th", "strong", "b", "dt", "caption", "text", "title", "summary"}
    CLASSES = {"admonition-title", "md-tag", "md-ellipsis"}
    EMPTY = {"br", "img", "input", "meta", "link", "hr", "path", "rect", "line", "circle", "wbr"}

    def __init__(self) -> None:
        super().__init__()
        self.open: list[list[str] | None] = []  # per open element: its text so far, when it is a label
        self.cells = 0  # cells so far in the current table row
        self.found: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.found += [value for key, value in attrs if key in ("data-label", "aria-label", "title") and value]
        if tag in self.EMPTY:
            return
        classes = set((dict(attrs).get("class") or "").split())
        label = tag in self.ELEMENTS or bool(classes & self.CLASSES) or (tag == "td" and self.cells == 0)
        self.cells = 0 if tag == "tr" else self.cells + (tag in ("td", "th"))
        self.open.append([] if label else None)

    def handle_endtag(self, tag: str) -> None:
        if tag in self.EMPTY or not self.open:
            return
        words = self.open.pop()
        if words is not None:
            self.found.append("".join(words))

    def handle_data(self, data: str) -> None:
        for words in self.open:
            if words is not None:
                words.append(data)


def _matcher(msgid: str) -> re.Pattern[str] | None:
    """A message as a pattern of the text it becomes (placeholders match anything), or None for
    one with too few words of its own to tell it from record text ('{person} from {start}')."""
    parts = re.split(r"%\(\w+\)[sd]|%[sd]|\{\w*\}", msgid.strip().rstrip(":").strip())
    words = re.findall(r"[A-Za-z]{2,}", " ".join(parts))
    if sum(map(len, words)) < 4 or (len(words) < 2 and not parts[0].strip()):
        return None
    return re.compile(".+?".join(re.escape(part) for part in parts))


def _english_labels(site: Path, folder: str) -> dict[str, list[str]]:
    """{page: the labels on it that are an English message of the Korean catalogue}, for the
    generated pages and the home page of the edition in ``site/folder``."""
    with catalogue_path("ko").open("rb") as po:
        catalogue = read_po(po)
    matchers = {}
    for message in catalogue:
        ids = message.id if isinstance(message.id, tuple) else (message.id,)
        same = message.string if isinstance(message.string, tuple) else (message.string,)
        for msgid in ids:
            # a word Korean engineers keep as it is ('Loss') is the same in both: not a leak
            if msgid and msgid not in same and (pattern := _matcher(msgid)) is not None:
                matchers[msgid] = pattern
    found = {}
    edition_root = site / folder
    for path in [*sorted((edition_root / "generated").rglob("*.html")), edition_root / "index.html"]:
        parser = _Labels()
        parser.feed(path.read_text(encoding="utf-8"))
        labels = {" ".join(text.split()).rstrip(":").strip() for text in parser.found}
        english = sorted(f"{label!r} ({msgid!r})" for label in labels for msgid, pattern in matchers.items()
                         if label and pattern.fullmatch(label))
        if english:
            found[str(path.relative_to(site))] = english
    return found


def test_no_generated_page_of_the_korean_edition_shows_an_english_label(built_site: Path) -> None:
    # The same search on the English edition finds its labels: it would see a label left in English.
    assert len(_english_labels(built_site, "")) >= 40
    assert _english_labels(built_site, "ko") == {}


def test_an_english_label_on_a_korean_page_is_found(tmp_path: Path) -> None:
    page = tmp_path / "ko" / "generated" / "runs" / "x" / "index.html"
    page.parent.mkdir(parents=True)
    page.write_text('<table><tr><td>Severity</td><td>sev2 <strong>On call now:</strong></td></tr></table>'
                    '<td data-label="심각도">open</td><p>Severity, On call now: record text stays</p>')
    (tmp_path / "ko" / "index.html").write_text("<h2>학습 위키</h2>")
    assert _english_labels(tmp_path, "ko") == {
        "ko/generated/runs/x/index.html": ["'On call now' ('On call now:')", "'Severity' ('Severity')"]}


# --- the language menu, in Chromium ------------------------------------------------------------

def _choose(page: Page, language: str) -> None:
    """Open the header's language menu and pick ``language`` (its hreflang)."""
    page.locator(".md-header__option .md-select").hover()
    page.locator(f".md-select__link[hreflang={language}]").click()


@pytest.mark.parametrize("path", ["/", "/playbook/checkpoint-cadence/", "/generated/incidents/INC-0004/",
                                  "/generated/runs/demo-7b/", "/generated/labs/03-nan-guard/",
                                  "/generated/ladders/hang/"])
def test_the_language_menu_leads_to_the_same_page_in_the_other_edition(page: Page, site_url: str,
                                                                       path: str) -> None:
    page.goto(site_url + path)
    expect(page.locator("html")).to_have_attribute("lang", "en")
    _choose(page, "ko")
    expect(page).to_have_url(site_url + "/ko" + path)
    expect(page.locator("html")).to_have_attribute("lang", "ko")
    _choose(page, "en")
    expect(page).to_have_url(site_url + path)
    expect(page.locator("html")).to_have_attribute("lang", "en")


# --- each edition's own search, in Chromium -----------------------------------------------------

def _results(page: Page) -> list[str]:
    """The href of every search result shown, once the first one is."""
    expect(page.locator(".md-search-result__item").first).to_be_visible(timeout=15_000)
    return page.locator(".md-search-result__item > a").evaluate_all("links => links.map(a => a.href)")


def test_korean_search_finds_the_checkpoint_cadence_page(page: Page, site_url: str) -> None:
    page.goto(site_url + "/ko/")
    search(page, "체크포인트")
    hrefs = _results(page)
    assert any(h.split("?")[0] == f"{site_url}/ko/playbook/checkpoint-cadence/" for h in hrefs), hrefs
    assert all(h.startswith(f"{site_url}/ko/") for h in hrefs), hrefs


def test_korean_search_still_finds_the_incident_by_its_error_signature(page: Page, site_url: str) -> None:
    page.goto(site_url + "/ko/generated/incidents/")
    search(page, "Xid 79")
    hrefs = _results(page)
    assert any(re.match(rf"{re.escape(site_url)}/ko/generated/incidents/INC-00(02|11)/", h) for h in hrefs), hrefs
    assert all(h.startswith(f"{site_url}/ko/") for h in hrefs), hrefs


def test_english_search_shows_only_the_english_edition(page: Page, site_url: str) -> None:
    page.goto(site_url + "/")
    search(page, "Xid 79")
    hrefs = _results(page)
    assert hrefs and not any(h.startswith(f"{site_url}/ko/") for h in hrefs), hrefs


# --- the plugin on a site of four pages: fallback, snippets, search per edition ----------------

TINY_PAGES = {
    "index.md": '# Home\n\n--8<-- "part.md"\n\nXid 79 on node7 during the checkpoint save.\n',
    "index.ko.md": '# 홈\n\n--8<-- "part.md"\n\nnode7 에서 Xid 79 가 났고, 학습은 체크포인트를 쓰는 도중에 멈췄습니다.\n',
    "part.md": "The English part of the page.\n",
    "part.ko.md": "페이지의 한국어 부분입니다.\n",
    "other.md": "# Other\n\nOnly in English so far.\n",
}


def _plugin(config: dict, name: str) -> dict:
    """The options this project's mkdocs.yml gives the plugin ``name``."""
    for entry in config["plugins"]:
        if isinstance(entry, dict) and name in entry:
            return entry
    raise AssertionError(f"mkdocs.yml has no {name} plugin")


@pytest.fixture(scope="module")
def tiny_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Four pages built with this project's i18n, search and editions settings and its theme
    overrides: English and Korean home, a snippet in both languages, a page in English only."""
    root = tmp_path_factory.mktemp("tiny-editions")
    project = read_site_config(PROJECT).data
    config = {"site_name": "Tiny", "strict": True, "exclude_docs": "part*.md\n",
              "theme": {"name": "material", "font": False, "custom_dir": "overrides",
                        "palette": project["theme"]["palette"]},  # the Korean edition names its toggles
              "plugins": [_plugin(project, "search"), _plugin(project, "i18n"), _plugin(project, "playbook-editions")],
              "markdown_extensions": ["admonition", {"pymdownx.snippets": {"base_path": ["docs"], "check_paths": True}}]}
    (root / "mkdocs.yml").write_text(yaml.safe_dump(config, allow_unicode=True), encoding="utf-8")
    shutil.copytree(PROJECT / "docs" / "overrides", root / "overrides")
    (root / "docs").mkdir()
    for name, text in TINY_PAGES.items():
        (root / "docs" / name).write_text(text, encoding="utf-8")
    result = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict"], cwd=root, capture_output=True,
                            text=True, timeout=120, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert result.returncode == 0, result.stderr
    return root / "site"


def test_a_page_without_a_translation_is_shown_in_english_with_the_note(tiny_site: Path) -> None:
    other = (tiny_site / "ko" / "other" / "index.html").read_text()
    assert NOTE in other and LANG.search(other).group(1) == "ko"
    assert re.search(r'<div lang="en">\s*<h1 id="other">Other</h1>\s*<p>Only in English so far.</p>\s*</div>', other)
    for translated in ("ko/index.html", "index.html", "other/index.html"):
        assert NOTE not in (tiny_site / translated).read_text(), translated


def test_snippets_follow_the_edition(tiny_site: Path) -> None:
    korean, english = (tiny_site / "ko" / "index.html").read_text(), (tiny_site / "index.html").read_text()
    assert "페이지의 한국어 부분입니다." in korean and "The English part" not in korean
    assert "The English part of the page." in english and "페이지의 한국어 부분" not in english


def test_the_language_menu_links_are_relative_and_the_head_names_no_alternates(tiny_site: Path) -> None:
    menu = re.compile(r'<a href="([^"]*)" hreflang="([a-z]+)" class="md-select__link">')
    assert menu.findall((tiny_site / "ko" / "other" / "index.html").read_text()) == [("../../other/", "en"), ("./", "ko")]
    assert menu.findall((tiny_site / "index.html").read_text()) == [("./", "en"), ("ko/", "ko")]
    assert menu.findall((tiny_site / "ko" / "index.html").read_text()) == [("../", "en"), ("./", "ko")]
    for page in _pages(tiny_site):  # the theme's script would ask each of them for a sitemap.xml
        assert '<link rel="alternate"' not in page.read_text(), page


def test_each_edition_has_its_own_index_in_its_own_languages(tiny_site: Path) -> None:
    english = json.loads((tiny_site / "search" / "search_index.json").read_text())
    korean = json.loads((tiny_site / "ko" / "search" / "search_index.json").read_text())
    assert english["config"]["lang"] == ["en"] and korean["config"]["lang"] == ["ko", "en"]
    assert {d["location"].split("#")[0] for d in english["docs"]} == {"", "other/"}
    assert {d["location"].split("#")[0] for d in korean["docs"]} == {"ko/", "ko/other/"}
    assert not any("번역" in d["text"] for d in korean["docs"])  # the note is not content


@pytest.fixture(scope="module")
def tiny_url(tiny_site: Path) -> Iterator[str]:
    with served(tiny_site) as url:
        yield url


@pytest.fixture
def tiny_page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    yield context.new_page()
    context.close()


def test_korean_search_finds_a_word_with_its_particle_and_an_english_signature(tiny_page: Page, tiny_url: str) -> None:
    requests: list[str] = []
    tiny_page.on("request", lambda request: requests.append(request.url))
    tiny_page.goto(tiny_url + "/ko/other/")
    search(tiny_page, "체크포인트")  # the page says 체크포인트를
    assert [h.split("?")[0] for h in _results(tiny_page)][:1] == [f"{tiny_url}/ko/"]
    tiny_page.locator("input[data-md-component=search-query]").fill("")
    search(tiny_page, "Xid 79")
    assert {h.split("?")[0].split("#")[0] for h in _results(tiny_page)} == {f"{tiny_url}/ko/"}
    assert f"{tiny_url}/ko/search/search_index.json" in requests
    assert f"{tiny_url}/search/search_index.json" not in requests
    lunr = {u.rsplit("/", 1)[1] for u in requests if "/lunr/min/" in u}
    assert {"lunr.ko.min.js", "lunr.multi.min.js"} <= lunr  # from the site itself: search works offline
    assert [u for u in requests if not u.startswith(tiny_url)] == []


def test_english_search_finds_nothing_of_the_korean_edition(tiny_page: Page, tiny_url: str) -> None:
    tiny_page.goto(tiny_url + "/other/")
    search(tiny_page, "Xid 79")
    assert {h.split("?")[0].split("#")[0] for h in _results(tiny_page)} == {f"{tiny_url}/"}
    tiny_page.locator("input[data-md-component=search-query]").fill("")
    search(tiny_page, "체크포인트")
    expect(tiny_page.locator(".md-search-result__meta")).to_have_text("No matching documents", timeout=15_000)


# --- lab pages: a README's translation beside it ---------------------------------------------------

def test_a_translated_lab_readme_becomes_the_korean_lab_page(tmp_path: Path) -> None:
    readmes = {"README.md": "# Labs\n\n[1](01-a/README.md)\n", "README.ko.md": "# 실습\n\n[1](01-a/README.ko.md)\n",
               "01-a/README.md": "# Lab 1\n", "01-a/README.ko.md": "# 실습 1\n", "02-b/README.md": "# Lab 2\n"}
    for relative, text in readmes.items():
        (tmp_path / "labs" / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "labs" / relative).write_text(text, encoding="utf-8")
    pages = lab_pages(tmp_path)
    assert sorted(pages) == ["labs/01-a.ko.md", "labs/01-a.md", "labs/02-b.md", "labs/SUMMARY.ko.md",
                             "labs/SUMMARY.md", "labs/index.ko.md", "labs/index.md"]
    assert pages["labs/index.ko.md"] == "# 실습\n\n[1](01-a.md)\n"  # static-i18n resolves it per edition
    assert pages["labs/01-a.ko.md"] == "# 실습 1\n"
    assert pages["labs/SUMMARY.ko.md"] == "* [실습](index.md)\n* [실습 1](01-a.md)\n* [Lab 2](02-b.md)\n"
    assert pages["labs/SUMMARY.md"] == "* [Labs](index.md)\n* [Lab 1](01-a.md)\n* [Lab 2](02-b.md)\n"
