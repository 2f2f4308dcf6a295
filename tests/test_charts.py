"""The charts' own promises (issue 26 item 5), without a browser: every chart writes the window of
time it shows, in both editions; the layer colours differ from one another; a chart is framed to
keep its drawn size (the frame scrolls) rather than shrink to the page. The rendered sizes at
390 px are measured in Chromium by tests/site/test_chart_text_browser.py."""
from __future__ import annotations

import itertools
import re
from datetime import date, datetime, timedelta, timezone

import pytest
from markupsafe import Markup

from tooling.site import charts
from tooling.site.i18n import ENGLISH, Edition, edition

FIRST, LAST = date(2026, 11, 20), date(2026, 11, 28)
HOURS = [datetime(2026, 11, 28, 12, tzinfo=timezone.utc) + timedelta(hours=i) for i in range(24)]


def every_chart(t: Edition) -> dict[str, Markup]:
    weeks = [date(2026, 11, 16), date(2026, 11, 23)]
    return {
        "weekly": charts.weekly_stacked(weeks, {"driver": [1, 2], "scheduler": [0, 1]}, label="Weekly", t=t),
        "bars": charts.horizontal_bars([("driver", 12.5), ("nccl", 3.0)], label="GPU", unit="h", axis="Lost",
                                       between=(FIRST, LAST), t=t),
        "stack": charts.stack_diagram([("driver", "Driver", 2), ("nccl", "NCCL", 0)], label="Stack",
                                      between=(FIRST, LAST), t=t),
        "hourly": charts.hourly_bars(HOURS, list(range(24)), label="Steps", axis="Steps", hours_axis="Hour", t=t),
    }


def texts(svg: Markup) -> list[str]:
    return re.findall(r"<text[^>]*>([^<]*)</text>", str(svg))


def test_every_chart_writes_its_window_under_its_title() -> None:
    found = {name: texts(svg)[1] for name, svg in every_chart(ENGLISH).items()}
    assert found == {"weekly": "2026-11-16 – 2026-11-29 UTC", "bars": "2026-11-20 – 2026-11-28 UTC",
                     "stack": "2026-11-20 – 2026-11-28 UTC", "hourly": "2026-11-28 12:00 – 2026-11-29 12:00 UTC"}
    for name, svg in every_chart(ENGLISH).items():  # and the name a screen reader hears says it too
        assert f"({found[name]})" in re.search(r'aria-label="([^"]*)"', str(svg)).group(1), name


def test_the_korean_edition_writes_the_window_in_its_own_dates() -> None:
    found = {name: texts(svg)[1] for name, svg in every_chart(edition("ko")).items()}
    assert found["bars"] == "2026년 11월 20일 – 2026년 11월 28일 UTC"
    assert found["hourly"] == "2026년 11월 28일 12:00 – 2026년 11월 29일 12:00 UTC"


def test_a_chart_without_a_window_writes_none() -> None:
    svg = str(charts.horizontal_bars([], label="Nothing", unit="h", axis="Lost"))
    assert 'class="chart-window"' not in svg and 'aria-label="Nothing"' in svg


def test_a_chart_keeps_its_drawn_size_in_a_focusable_named_frame() -> None:
    for name, svg in every_chart(ENGLISH).items():
        frame = re.match(r'<span class="chart-frame" tabindex="0" role="group" aria-label="([^"]+)"><svg ', str(svg))
        assert frame, name
        assert "max-width" not in str(svg)  # the page's CSS (playbook.css: .chart-frame) sizes it
        width = re.search(r'viewBox="0 0 (\d+) (\d+)" width="(\d+)"', str(svg))
        assert width.group(1) == width.group(3), name  # drawn 1:1, so 12 px text is 12 px


def lab(colour: str) -> tuple[float, float, float]:
    """CIE L*a*b* (D65) of an sRGB colour '#rrggbb'."""
    linear = [int(colour[i:i + 2], 16) / 255 for i in (1, 3, 5)]
    r, g, b = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in linear]
    xyz = ((0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047, 0.2126 * r + 0.7152 * g + 0.0722 * b,
           (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883)
    x, y, z = [v ** (1 / 3) if v > 0.008856 else 7.787 * v + 16 / 116 for v in xyz]
    return 116 * y - 16, 500 * (x - y), 200 * (y - z)


def difference(one: str, other: str) -> float:
    """CIE76 colour difference: about 2.3 is the smallest a person notices; 40 is far apart."""
    return sum((p - q) ** 2 for p, q in zip(lab(one), lab(other))) ** 0.5


def test_no_two_layer_colours_are_alike() -> None:
    close = [(a, b, round(difference(charts.PALETTE[a], charts.PALETTE[b]))) for a, b
             in itertools.combinations(charts.PALETTE, 2) if difference(charts.PALETTE[a], charts.PALETTE[b]) < 40]
    assert close == []
    # the three the issue found alike on the trends page
    assert min(difference(charts.PALETTE[a], charts.PALETTE[b]) for a, b
               in itertools.combinations(["driver", "scheduler", "gpu-hardware"], 2)) > 45


@pytest.mark.parametrize("colour, other, far", [("#ffffff", "#000000", True), ("#dd3c3c", "#cc3567", False)])
def test_the_difference_measure_tells_far_from_near(colour: str, other: str, far: bool) -> None:
    assert (difference(colour, other) >= 40) is far
