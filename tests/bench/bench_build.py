"""Benchmark: `tooling build` on 1,000 incidents vs a bare `mkdocs build` of the same rendered pages,
and the site's two editions (English and Korean) vs an English-only build of the same records.

Run: ./dev bench   (or .venv/bin/python tests/bench/bench_build.py [--incidents N] [--tiny])
All builds run on the same generated repository in this run. `tooling build` starts from an
empty docs/generated/ each time (validate + analyse + render + mkdocs build); the bare build
gets the markdown it rendered. Target: at most 1.15x. The English-only build is the same
repository with the Korean edition taken out of mkdocs.yml (the i18n plugin's languages and
playbook-editions' options), as the site was before it had one: both editions may cost at most
2.3x of it. Also prints absolute times and the page weight of each edition: the mean and the
largest size of a page (its HTML file), and which page is the largest. The repository is the
generated records plus what this project's site links to (docs, labs, ladders, the stack), so
that the strict build passes as it does here.
`--tiny` (20 incidents, 1 repeat) is the smoke test's size: a few seconds, figures not meaningful.
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from records import generate

PROJECT = Path(__file__).resolve().parents[2]
NOW = "2026-11-29T12:00:00+00:00"


def prepare(root: Path, incidents: int) -> None:
    """Generated incidents and run, plus the rest of the site as tests/site/site_support.py copies it."""
    generate(root, incidents)  # incidents/ and runbooks/runs/ (the project's own records stay out)
    shutil.copytree(PROJECT / "docs", root / "docs", ignore=shutil.ignore_patterns("generated"))
    shutil.copytree(PROJECT / "labs", root / "labs", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(PROJECT / "runbooks" / "ladders", root / "runbooks" / "ladders")
    for stack in (PROJECT / "runbooks").glob("stack*.yaml"):  # and its Korean overlay
        shutil.copy(stack, root / "runbooks")
    shutil.copy(PROJECT / "mkdocs.yml", root)
    git = ["git", "-c", "user.name=Bench", "-c", "user.email=bench@test", "-C", str(root)]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "generated records"], check=True)


def english_only(config: str) -> str:
    """mkdocs.yml without its other editions: the i18n plugin's default language alone, and
    playbook-editions' options for it alone."""
    data = yaml.safe_load(config)
    for entry in data["plugins"]:
        options = entry.get("i18n") if isinstance(entry, dict) else None
        if options:
            options["languages"] = [lang for lang in options["languages"] if lang.get("default")]
            default = options["languages"][0]["locale"]
    for entry in data["plugins"]:
        options = entry.get("playbook-editions") if isinstance(entry, dict) else None
        for option in (options or {}).values():
            for locale in [key for key in option if key != default]:
                del option[locale]
    return yaml.safe_dump(data, allow_unicode=True, sort_keys=False)


def timed(command: list[str], root: Path) -> float:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    start = time.perf_counter()
    result = subprocess.run(command, cwd=root, capture_output=True, text=True, env=env)
    elapsed = time.perf_counter() - start
    if result.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{result.stderr[-3000:]}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--incidents", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--tiny", action="store_true", help="smoke-test size: 20 incidents, 1 repeat")
    args = parser.parse_args()
    if args.tiny:
        args.incidents, args.repeat = 20, 1
    bindir = Path(sys.executable).parent
    with tempfile.TemporaryDirectory() as tmp:
        root, english = Path(tmp) / "both", Path(tmp) / "english"
        prepare(root, args.incidents)
        shutil.copytree(root, english, symlinks=True)
        config = english / "mkdocs.yml"
        config.write_text(english_only(config.read_text(encoding="utf-8")), encoding="utf-8")
        build = [str(bindir / "tooling"), "build", "--now", NOW, "--site-dir", "site-tool"]
        tool, bare, alone = [], [], []
        for _ in range(args.repeat):
            for repo in (root, english):
                shutil.rmtree(repo / "docs" / "generated", ignore_errors=True)
            tool.append(timed(build, root))
            bare.append(timed([str(bindir / "mkdocs"), "build", "--strict", "--site-dir", "site-bare"], root))
            alone.append(timed(build, english))
        pages = list((root / "site-bare").rglob("*.html"))
        size = sum(p.stat().st_size for p in pages)
        korean = len(list((root / "site-bare" / "ko").rglob("*.html")))
        weights = page_weights(root / "site-bare")
    t, b, e = statistics.median(tool), statistics.median(bare), statistics.median(alone)
    print(f"build benchmark: {args.incidents} incidents, {len(pages)} HTML pages ({korean} of them in the "
          f"Korean edition), median of {args.repeat}")
    print(f"  bare mkdocs build --strict (rendered markdown) : {b:7.2f} s")
    print(f"  tooling build (validate+render+mkdocs, cold)   : {t:7.2f} s")
    print(f"  ratio tooling/bare                             : {t / b:7.2f}x  (target <= 1.15x)")
    print(f"  tooling build, English edition only            : {e:7.2f} s")
    print(f"  ratio both editions/English only               : {t / e:7.2f}x  (target <= 2.3x)")
    print(f"  site size per HTML page                        : {size / len(pages) / 1024:7.1f} KiB")
    for name, (count, mean, largest, page) in weights.items():
        label = f"page weight, {name} edition ({count} pages)"
        print(f"  {label:47s}: mean {mean / 1024:6.1f} KiB, max {largest / 1024:6.1f} KiB ({page})")


def page_weights(site: Path) -> dict[str, tuple[int, float, int, str]]:
    """Per edition: (pages, mean bytes, largest bytes, the largest page), the Korean edition
    being the pages under ko/."""
    sizes: dict[str, list[tuple[int, str]]] = {"English": [], "Korean": []}
    for page in site.rglob("*.html"):
        relative = page.relative_to(site).as_posix()
        sizes["Korean" if relative.startswith("ko/") else "English"].append((page.stat().st_size, relative))
    return {name: (len(found), sum(s for s, _ in found) / len(found), *max(found))
            for name, found in sizes.items() if found}


if __name__ == "__main__":
    main()
