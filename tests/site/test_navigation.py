"""Finding one's way: tabs, one entry per page, previous/next, edit links, dates, links
between what is counted and what counts it, and the automation state that agrees with the
action-item board."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path
from urllib.parse import urljoin

import pytest
from mkdocs.config import load_config
from mkdocs.structure.files import get_files
from mkdocs.structure.nav import Navigation, Section, get_navigation
from mkdocs.structure.pages import Page as DocPage
from playwright.sync_api import Locator, Page, expect

from site_support import NOW, copy_project
from tooling.site.source import edit_base, with_front_matter

TABS = ["Home", "Playbook", "Diagnostic ladders", "Labs", "Incidents", "Analysis", "Reference"]
TABS_KO = ["홈", "플레이북", "진단 사다리", "실습", "인시던트", "분석", "참고 자료"]  # docs/SUMMARY.ko.md
EDITIONS = {"en": "", "ko": "ko/"}  # each language's folder in the built site
REPO = "https://github.com/example/resilience-playbook"
DATE = re.compile(r'<aside class="md-source-file">.*?(\d{4}-\d\d-\d\d \d\d:\d\d UTC)', re.S)


def site_nav(root: Path, language: str = "en") -> Navigation:
    """The navigation mkdocs builds for one edition of the copy at ``root`` (its generated
    pages in place)."""
    config = load_config(str(root / "mkdocs.yml"))
    config.plugins["i18n"].current_language = language  # the edition mkdocs-static-i18n builds
    config = config.plugins.on_config(config)
    files = config.plugins.on_files(get_files(config), config=config)
    return config.plugins.on_nav(get_navigation(files, config), config=config, files=files)


def visible_labels(items: list) -> list[str]:
    """The labels a reader sees: a section's index page is shown as the section itself."""
    labels = []
    for item in items:
        labels.append(item.title)
        if isinstance(item, Section):
            children = item.children
            if children and isinstance(children[0], DocPage) and children[0].file.name == "index":
                children = children[1:]
            labels += visible_labels(children)
    return labels


def _edition_pages(site: Path, language: str) -> list[str]:
    """The pages of one edition that mkdocs wrote (site-relative index.html paths)."""
    folder = site / EDITIONS[language]
    others = [site / prefix for lang, prefix in EDITIONS.items() if lang != language and prefix]
    return sorted(str(p.relative_to(site)) for p in folder.rglob("index.html")
                  if p.parent != folder / "search" and not any(p.is_relative_to(o) for o in others))


@pytest.mark.parametrize("language, expected", [("en", TABS), ("ko", TABS_KO)])
def test_tabs_are_the_top_sections_and_no_entry_appears_twice(built_site: Path, language: str,
                                                              expected: list[str]) -> None:
    nav = site_nav(built_site.parent, language)
    assert [item.title for item in nav.items] == expected
    labels = visible_labels(nav.items)
    assert [label for label, n in Counter(labels).items() if n > 1] == []
    pages = sorted(p.file.dest_uri for p in nav.pages)
    assert pages == _edition_pages(built_site, language)  # every page in the navigation, and each once
    home = (built_site / EDITIONS[language] / "index.html").read_text()
    tabs = re.findall(r'class="md-tabs__link">\s*(.*?)\s*</a>', home)
    assert tabs == expected


@pytest.mark.parametrize("language", list(EDITIONS))
def test_every_page_links_to_the_previous_and_next_page_of_the_navigation(built_site: Path, language: str) -> None:
    pages = site_nav(built_site.parent, language).pages
    urls = ["/" + p.url for p in pages]
    for i, page in enumerate(pages):
        html = (built_site / page.file.dest_uri).read_text()
        found = {kind: urljoin(urls[i], href) for href, kind in
                 re.findall(r'<a href="([^"]*)" class="md-footer__link md-footer__link--(prev|next)"', html)}
        expected = {k: v for k, v in (("prev", urls[i - 1] if i else None),
                                      ("next", urls[i + 1] if i + 1 < len(urls) else None)) if v}
        assert found == expected, page.file.src_uri


def _commit_date(root: Path) -> str:
    when = subprocess.run(["git", "-C", str(root), "log", "-1", "--format=%aI"], capture_output=True,
                          text=True, check=True).stdout.strip()
    return datetime.fromisoformat(when).astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def test_every_page_shows_when_it_last_changed_with_its_time_zone(built_site: Path) -> None:
    # The copy is one commit, so every page, hand-written or generated, dates from it.
    expected = _commit_date(built_site.parent)
    pages = sorted(p for p in built_site.rglob("index.html") if p.parent.name != "search")
    dates = {str(p.relative_to(built_site)): DATE.findall(p.read_text()) for p in pages}
    assert len(dates) == sum(len(site_nav(built_site.parent, language).pages) for language in EDITIONS)
    assert {path: found for path, found in dates.items() if found != [expected]} == {}


def test_the_edit_base_comes_from_repo_url_and_edit_uri() -> None:
    assert edit_base({"repo_url": REPO, "edit_uri": "edit/main/docs/"}) == f"{REPO}/edit/main/"
    assert edit_base({"repo_url": "https://gitlab.example.org/ml/playbook/", "edit_uri": "-/edit/trunk/site/",
                      "docs_dir": "site"}) == "https://gitlab.example.org/ml/playbook/-/edit/trunk/"
    assert edit_base({"repo_url": REPO, "edit_uri": f"{REPO}/edit/dev/docs/"}) == f"{REPO}/edit/dev/"
    assert edit_base({"repo_url": REPO, "edit_uri": "edit/main/"}) is None  # where is the root?
    assert edit_base({"edit_uri": "edit/main/docs/"}) is None and edit_base({}) is None


def test_front_matter_is_added_to_a_page_with_or_without_one() -> None:
    fields = {"revision_date": "2026-11-29 12:00 UTC", "edit_url": f"{REPO}/edit/main/a b.yaml"}
    assert with_front_matter("---\ntitle: T\n---\n\n# T\n", fields) == (
        '---\ntitle: T\nrevision_date: "2026-11-29 12:00 UTC"\n'
        f'edit_url: "{REPO}/edit/main/a b.yaml"\n---\n\n# T\n')
    assert with_front_matter("# T\n", {"revision_date": "x"}) == '---\nrevision_date: "x"\n---\n\n# T\n'


def _row(page: Page, name: str) -> Locator:
    """The row of the page's table whose first cell is exactly ``name``."""
    first = page.locator("td:first-child", has_text=re.compile(f"^{re.escape(name)}$"))
    return page.locator("article tr").filter(has=first)


def test_record_pages_name_their_file_and_link_to_edit_it(page: Page, site_url: str) -> None:
    edit = f"{REPO}/edit/main/"
    for path, source in (("/generated/incidents/INC-0004/", "incidents/INC-0004.yaml"),
                         ("/generated/postmortems/PM-0001/", "incidents/PM-0001.yaml")):
        page.goto(site_url + path)
        expect(page.locator("a.md-content__button[rel=edit]")).to_have_attribute("href", edit + source)
        row = _row(page, "Record")
        expect(row.locator("code")).to_have_text(source)
        expect(row.get_by_role("link", name="edit it")).to_have_attribute("href", edit + source)
    for path, source in (("/generated/runs/demo-7b/", "runbooks/runs/demo-7b.yaml"),
                         ("/generated/ladders/hang/", "runbooks/ladders/hang.yaml"),
                         ("/generated/labs/03-nan-guard/", "labs/03-nan-guard/README.md"),
                         ("/playbook/checkpoint-cadence/", "docs/playbook/checkpoint-cadence.md")):
        page.goto(site_url + path)
        expect(page.locator("a.md-content__button[rel=edit]")).to_have_attribute("href", edit + source)
    for path in ("/generated/trends/", "/generated/incidents/", "/generated/repeats/"):
        page.goto(site_url + path)  # drawn from many records: no one file to edit
        expect(page.locator("a.md-content__button[rel=edit]")).to_have_count(0)


def _tag_section_size(page: Page, anchor: str) -> int:
    """How many pages the tags page lists under the tag whose heading has id ``anchor``."""
    return page.evaluate("""id => {
        const heading = document.getElementById(id);
        let count = 0;
        for (let node = heading.nextElementSibling; node && !/^H[1-6]$/.test(node.tagName); node = node.nextElementSibling)
            count += node.querySelectorAll('a').length;
        return count;
    }""", anchor)


def test_counts_link_to_what_they_count(page: Page, site_url: str) -> None:
    page.goto(site_url + "/generated/stack/")
    links = page.locator("article a", has_text=re.compile(r"^\d+ incidents? in the log$"))
    counted = {link.get_attribute("href"): int(link.inner_text().split()[0]) for link in links.all()}
    assert counted == {"../tags/#tag:layer-model-code": 4, "../tags/#tag:layer-network-fabric": 3,
                       "../tags/#tag:layer-driver": 1, "../tags/#tag:layer-gpu-hardware": 2,
                       "../tags/#tag:layer-storage": 4, "../tags/#tag:layer-scheduler": 1}  # 4: INC-0015 (Korean)
    page.goto(site_url + "/generated/tags/")
    assert {href: _tag_section_size(page, href.split("#")[1]) for href in counted} == counted


def test_an_incident_links_its_facets_to_their_tags(page: Page, site_url: str) -> None:
    """Its severity links to the severity's definition instead (tests/site/test_status_strip_browser.py);
    the page's tags still lead to the other incidents of that severity."""
    page.goto(site_url + "/generated/incidents/INC-0004/")
    severity = _row(page, "Severity").get_by_role("link").get_attribute("href")
    assert severity == "../../../playbook/incident-response/#sev2"
    hrefs = {name: _row(page, name).get_by_role("link").get_attribute("href") for name in ("Status", "Symptom", "Layer")}
    assert hrefs == {"Status": "../../tags/#tag:status-resolved", "Symptom": "../../tags/#tag:symptom-hang",
                     "Layer": "../../tags/#tag:layer-network-fabric"}
    page.goto(site_url + "/generated/tags/")
    for href in hrefs.values():
        section = page.locator(f"[id='{href.split('#')[1]}'] + *")
        expect(section.get_by_role("link", name=re.compile("INC-0004"))).to_have_count(1)


def _board(page: Page, site_url: str) -> dict[tuple[str, int], tuple[str, str]]:
    """(postmortem, item number) -> (kind, status), read from the action-item board."""
    page.goto(site_url + "/generated/postmortems/action-items/")
    table = page.locator("article table").first
    headings = [h.strip() for h in table.locator("thead th").all_inner_texts()]
    rows = [dict(zip(headings, (c.strip() for c in row.locator("td").all_inner_texts())))
            for row in table.locator("tbody tr").all()]
    return {(r["Postmortem"], int(r["#"])): (r["Kind"], r["Status"]) for r in rows}


def _candidates(page: Page, site_url: str) -> dict[str, tuple[str, dict[tuple[str, int], str]]]:
    """Candidate title -> (state, {(postmortem, item number): status}) from the candidates page."""
    page.goto(site_url + "/generated/repeats/")
    out = {}
    for section in page.locator("article h2", has_text=re.compile(r"^\d+\. ")).all():
        table = section.locator("xpath=following-sibling::*[1]")
        state = table.locator("tr", has_text="State").locator("td").nth(1).inner_text().strip()
        items = table.locator("tr", has_text="Action items").locator("td").nth(1).inner_text()
        refs = re.findall(r"(PM-\d+) #(\d+): (\S+?),", items + ",")
        out[section.inner_text().rstrip("¶").split(". ", 1)[1].strip()] = (state, {(pm, int(n)): s for pm, n, s in refs})
    return out


def test_the_candidates_state_comes_from_the_action_board(page: Page, site_url: str) -> None:
    candidates, board = _candidates(page, site_url), _board(page, site_url)
    assert candidates == {
        "Turn a silent collective hang into a fast, diagnosed restart": ("automated", {("PM-0001", 3): "done"}),
        # The drain-and-swap item of the hang postmortem automates the ECC failure, not the hang.
        "Drain and swap a failing GPU node automatically": (
            "automation in progress", {("PM-0001", 6): "in-progress", ("PM-0900", 1): "open"}),
        # three storage failures seen once each, which the one storage guard would each have handled
        "Watch quota and inodes, clean up before the save fails": ("automation planned", {("PM-0002", 5): "open"}),
    }
    for state, items in candidates.values():
        assert {key: board[key] for key in items} == {key: ("automate", s) for key, s in items.items()}
        statuses = set(items.values())
        assert state == ("automated" if statuses == {"done"} else "automation in progress"
                         if statuses & {"done", "in-progress"} else "automation planned")


def test_the_candidates_page_links_its_items_and_playbook_sections(page: Page, site_url: str) -> None:
    page.goto(site_url + "/generated/repeats/")
    article = page.locator("article")
    expect(article.get_by_role("link", name="PM-0001 #6")).to_have_attribute("href", "../postmortems/PM-0001/#action-items")
    playbook = article.get_by_role("link", name="Spare nodes: drain on xid and ecc")
    expect(playbook).to_have_attribute("href", "../../playbook/spare-nodes/#drain-on-xid-and-ecc")
    playbook.click()
    expect(page.locator("#drain-on-xid-and-ecc")).to_have_count(1)
    page.goto(site_url + "/generated/postmortems/PM-0001/")
    automates = page.locator("article tr", has_text="Automatic node drain and swap").get_by_role("link", name="candidate")
    expect(automates).to_have_text("candidate INC-0002, INC-0011")
    automates.click()
    expect(page).to_have_url(re.compile(r"/generated/repeats/#candidate-inc-0002$"))
    expect(page.locator("#candidate-inc-0002")).to_contain_text("Drain and swap a failing GPU node automatically")


def _config(html: str) -> dict:
    return json.loads(re.search(r'<script id="__config" type="application/json">(.*?)</script>', html).group(1))


def test_only_a_published_copy_has_the_version_selector(built_site: Path, tmp_path: Path) -> None:
    assert _config((built_site / "index.html").read_text())["version"] is None  # no /versions.json to ask
    root = copy_project(tmp_path)
    env = {"GIT_AUTHOR_NAME": "P", "GIT_AUTHOR_EMAIL": "p@test", "GIT_COMMITTER_NAME": "P", "GIT_COMMITTER_EMAIL": "p@test"}
    result = subprocess.run([sys.executable, "-m", "tooling", "publish", "1.0", "--now", NOW], cwd=root,
                            capture_output=True, text=True, timeout=300, env={**os.environ, **env})
    assert result.returncode == 0, result.stderr
    published = subprocess.run(["git", "-C", str(root), "show", "gh-pages:1.0/index.html"], capture_output=True,
                               text=True, check=True).stdout
    assert _config(published)["version"] == {"provider": "mike"}
    assert sorted(p.name for p in root.glob(".tooling-publish-*")) == []  # the extra config is gone


def test_a_site_without_a_repository_builds_without_edit_links(tmp_path: Path) -> None:
    root = copy_project(tmp_path)
    config = root / "mkdocs.yml"
    config.write_text(re.sub(r"(?m)^(repo_url|edit_uri): .*\n", "", config.read_text()))
    result = subprocess.run([sys.executable, "-m", "tooling", "build", "--now", NOW], cwd=root,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    incident = (root / "site" / "generated" / "incidents" / "INC-0004" / "index.html").read_text()
    assert re.search(r"<td>Record</td>\s*<td><code>incidents/INC-0004.yaml</code></td>", incident)
    assert 'rel="edit"' not in incident and "edit it" not in incident
    assert 'rel="edit"' not in (root / "site" / "playbook" / "index.html").read_text()
