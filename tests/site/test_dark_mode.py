"""The dark palette: it follows the OS, the toggle switches it, and the charts stay readable
(at least 3:1 for marks, 4.5:1 for text) on both backgrounds, with titles, axis labels,
round ticks and their numbers."""
from __future__ import annotations

import re
from datetime import date, timedelta

import pytest
from playwright.sync_api import Page, expect

from tabs import Tabs

from tooling.site import charts

LIGHT_BG, DARK_BG = "#ffffff", "#1e2129"  # mkdocs-material's default and slate backgrounds


def rgb(colour: str, under: tuple[float, ...] = (255, 255, 255)) -> tuple[float, ...]:
    """'#rrggbb', 'rgb(r, g, b)' or 'rgba(r, g, b, a)' as seen over the colour ``under``."""
    if colour.startswith("#"):
        return tuple(int(colour[i:i + 2], 16) for i in (1, 3, 5))
    *channels, alpha = [float(v) for v in re.findall(r"[\d.]+", colour)] + ([1.0] if colour.startswith("rgb(") else [])
    return tuple(alpha * c + (1 - alpha) * u for c, u in zip(channels, under))


def luminance(channels: tuple[float, ...]) -> float:
    """WCAG 2 relative luminance."""
    linear = [c / 255 / 12.92 if c / 255 <= 0.04045 else ((c / 255 + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast(colour: str, background: str) -> float:
    """WCAG 2 contrast ratio of ``colour`` painted on ``background`` (an opaque colour)."""
    under = rgb(background)
    high, low = sorted((luminance(rgb(colour, under)), luminance(under)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def test_every_chart_colour_keeps_3_to_1_on_both_backgrounds() -> None:
    colours = {**charts.PALETTE, "(other)": charts.OTHER}
    ratios = {name: (round(contrast(c, LIGHT_BG), 2), round(contrast(c, DARK_BG), 2)) for name, c in colours.items()}
    assert {name: r for name, r in ratios.items() if min(r) < 3} == {}
    assert len(set(charts.PALETTE.values())) == len(charts.PALETTE) == 12  # one colour per layer


def test_ticks_are_round_and_reach_the_peak() -> None:
    assert charts.ticks(2, integer=True) == [0, 1, 2]
    assert charts.ticks(3, integer=True) == [0, 1, 2, 3]
    assert charts.ticks(7, integer=True) == [0, 2, 4, 6, 8]
    assert charts.ticks(0, integer=True) == [0, 1]
    assert charts.ticks(3938) == [0, 1000, 2000, 3000, 4000]
    assert charts.ticks(1293) == [0, 500, 1000, 1500]
    assert charts.ticks(36.6) == [0, 10, 20, 30, 40]
    assert charts.ticks(0.8) == [0, 0.2, 0.4, 0.6, 0.8]


def _texts(svg: str) -> list[str]:
    return re.findall(r"<text[^>]*>([^<]*)</text>", svg)


def test_a_weekly_chart_has_its_title_axes_ticks_and_totals() -> None:
    weeks = [date(2026, 10, 5), date(2026, 10, 12)]
    svg = str(charts.weekly_stacked(weeks, {"nccl": [2, 0], "storage": [1, 1]}, label="Incidents per week"))
    assert _texts(svg) == ["Incidents per week", "2026-10-05 – 2026-10-18 UTC", "0", "1", "2", "3", "Incidents", "3",
                           "10-05", "1", "10-12", "Week starting (month-day)", "nccl", "storage"]
    assert svg.count('class="segment"') == 3 and 'aria-label="Incidents per week (2026-10-05 – 2026-10-18 UTC)"' in svg


def test_a_year_of_weeks_narrows_the_bars_instead_of_shrinking_the_ticks() -> None:
    weeks = [date(2026, 1, 5) + timedelta(weeks=i) for i in range(52)]
    svg = str(charts.weekly_stacked(weeks, {"nccl": [i % 5 for i in range(52)]}, label="A year"))
    assert re.search(r'viewBox="0 0 (\d+) ', svg).group(1) == "671"  # as wide as the page, not wider
    assert _texts(svg) == ["A year", "2026-01-05 – 2027-01-03 UTC", "0", "1", "2", "3", "4", "Incidents",  # totals: the table's job
                           *[w.strftime("%m-%d") for w in weeks[::4]], "Week starting (month-day)", "nccl"]


def test_a_bar_chart_has_its_title_axes_ticks_and_values() -> None:
    svg = str(charts.horizontal_bars([("nccl", 1293.0), ("storage", 555.0)], label="GPU-hours lost by layer",
                                     unit="GPU-h", axis="GPU-hours lost"))
    assert _texts(svg) == ["GPU-hours lost by layer", "Layer", "0", "500", "1,000", "1,500",
                           "GPU-hours lost (GPU-h)", "nccl", "1,293 GPU-h", "storage", "555 GPU-h"]


def test_the_stack_diagram_has_its_title_axes_and_counts() -> None:
    svg = str(charts.stack_diagram([("nccl", "NCCL", 2), ("storage", "Storage", 0)], label="Stack"))
    assert _texts(svg) == ["Stack", "Layer (top of the stack first)", "0", "1", "2", "Incidents in the log",
                           "NCCL", "2 incidents", "Storage", "0 incidents"]


@pytest.fixture
def dark_page(tabs: Tabs) -> Page:
    return tabs.tab(viewport={"width": 1400, "height": 1000}, color_scheme="dark")


def test_the_palette_follows_the_os_setting(page: Page, dark_page: Page, site_url: str) -> None:
    for tab, scheme, background in ((page, "default", "rgb(255, 255, 255)"), (dark_page, "slate", "rgb(30, 33, 41)")):
        tab.goto(site_url + "/")
        expect(tab.locator("body")).to_have_attribute("data-md-color-scheme", scheme)
        assert tab.evaluate("getComputedStyle(document.body).backgroundColor") == background


def test_the_toggle_switches_the_palette_and_the_choice_stays(page: Page, site_url: str) -> None:
    page.goto(site_url + "/")
    page.get_by_title("Switch to the dark palette").click()
    expect(page.locator("body")).to_have_attribute("data-md-color-scheme", "slate")
    page.goto(site_url + "/generated/trends/")
    expect(page.locator("body")).to_have_attribute("data-md-color-scheme", "slate")
    page.get_by_title("Switch to the light palette").click()
    expect(page.locator("body")).to_have_attribute("data-md-color-scheme", "default")


# Every painted part of every chart: (what, its colour as the browser computes it).
CHART_PARTS = """() => {
    const parts = [];
    for (const svg of document.querySelectorAll('svg.playbook-chart')) {
        for (const el of svg.querySelectorAll('rect, line, text')) {
            const style = getComputedStyle(el);
            const kind = el.tagName === 'text' ? 'text' : 'mark';
            if (style.fill !== 'none' && el.tagName !== 'line') parts.push([kind, style.fill, el.outerHTML.slice(0, 80)]);
            if (style.stroke !== 'none' && !el.classList.contains('segment') && !el.classList.contains('grid'))
                parts.push(['mark', style.stroke, el.outerHTML.slice(0, 80)]);
        }
    }
    return parts;
}"""


@pytest.mark.parametrize("path", ["/generated/trends/", "/generated/stack/", "/generated/runs/demo-7b/", "/"])
def test_charts_are_readable_in_both_palettes(page: Page, dark_page: Page, site_url: str, path: str) -> None:
    for tab in (page, dark_page):
        tab.goto(site_url + path)
        background = tab.evaluate("getComputedStyle(document.body).backgroundColor")
        parts = tab.evaluate(CHART_PARTS)
        assert len(parts) > 40
        low = [(kind, colour, html, round(contrast(colour, background), 2)) for kind, colour, html in parts
               if contrast(colour, background) < (4.5 if kind == "text" else 3)]
        assert low == []


def test_trends_charts_show_titles_axes_and_every_number(page: Page, site_url: str) -> None:
    page.goto(site_url + "/generated/trends/")
    charts_ = page.locator("svg.playbook-chart")
    expect(charts_).to_have_count(4)
    titles = [c.locator("text.chart-title").text_content() for c in charts_.all()]
    assert titles == ["Incidents per week by layer", "GPU-hours lost by layer", "Mean time to detect by layer",
                      "Mean time to resolve by layer"]
    weekly = charts_.nth(0).locator("text").all_text_contents()
    assert weekly[2:7] == ["0", "1", "2", "3", "Incidents"]  # every whole number up to the busiest week
    assert "Week starting (month-day)" in weekly
    table_totals = page.locator("article table").first.locator("tbody tr td:last-child").all_inner_texts()
    assert weekly[7:7 + 2 * len(table_totals):2] == table_totals  # each week's total above its bar
    gpu = charts_.nth(1).locator("text").all_text_contents()
    assert gpu[2:8] == ["Layer", "0", "1,000", "2,000", "3,000", "4,000"] and "GPU-hours lost (GPU-h)" in gpu
    for chart in charts_.all():  # drawn at full size: 12 px ticks stay 12 px
        assert chart.evaluate("svg => svg.getBoundingClientRect().width / svg.viewBox.baseVal.width") == 1
