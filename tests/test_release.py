"""Release hygiene (issue 27, items 4 and 5): the extras, `tooling --version`, the changelog, and
the wheel and sdist built from the files a clean clone has, the wheel installed (not the checkout)
into a fresh virtual environment with the `training` extra alone: the primitives and lab 2 run
there, without mkdocs and the rest of the wiki extra, and `tooling` says in one line what it lacks.
"""
from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tarfile
import time
import tomllib
import zipfile
from importlib import metadata
from pathlib import Path

import pytest

import without_wiki
from support import CORPUS, PROJECT, tooling
from tooling import distribution

CONFIG = tomllib.loads((PROJECT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
EXTRAS = CONFIG["optional-dependencies"]
VERSION = CONFIG["version"]
WIKI_LINE = ("tooling: error: the command line and the site need the 'wiki' extra, not installed here (no module "
             "named {module!r}); install it: pip install 'resilience-playbook-tooling[wiki]'\n")
# the wiki extra's own modules, none of which the training extra brings (jinja2 comes with torch and
# Markdown with tensorboard: tests/test_floors.py proves that tooling.resilience imports neither)
SITE_MODULES = ("mkdocs", "material", "pymdownx", "yaml", "ruamel", "jsonschema", "fastjsonschema", "babel", "mike")
# tracked files of tooling/ that only the project's development reads (the wheel leaves them out)
DEVELOPMENT_ONLY = {
    "tooling/locale/README.md": "how the catalogues are extracted and compiled",
    "tooling/locale/babel.cfg": "pybabel extract's configuration",
    "tooling/locale/messages.pot": "the extracted template the .po files are updated from",
}


def name_of(requirement: str) -> str:
    return re.split(r"[\s\[<>=;!~]", requirement, maxsplit=1)[0].lower().replace("_", "-").replace(".", "-")


def test_the_base_install_is_the_standard_library_and_each_extra_has_its_part() -> None:
    assert CONFIG["dependencies"] == []  # what tooling.resilience needs (tests/test_floors.py proves it)
    assert "torch==2.13.0" in EXTRAS["training"]
    assert not [r for r in EXTRAS["wiki"] if name_of(r) in ("torch", "numpy", "tensorboard")]
    assert EXTRAS["labs"] == ["resilience-playbook-tooling[wiki,training]"]
    assert "resilience-playbook-tooling[wiki]" in EXTRAS["test"]


@pytest.mark.parametrize("extra", sorted(distribution.EXTRA_MODULES))
def test_the_modules_said_missing_by_extra_are_those_its_distributions_install(extra: str) -> None:
    """tooling.distribution words a missing module by the extra that installs it: its table holds
    every top-level module of each distribution the extra names (as installed here)."""
    provided = metadata.packages_distributions()
    by_distribution: dict[str, set[str]] = {}
    for module, names in provided.items():
        for name in names:
            by_distribution.setdefault(name_of(name), set()).add(module)
    wanted = {module for r in EXTRAS[extra] for module in by_distribution.get(name_of(r), ())}
    assert wanted - set(distribution.EXTRA_MODULES[extra]) == set()
    assert "torch" in distribution.EXTRA_MODULES["training"] and "mkdocs" in distribution.EXTRA_MODULES["wiki"]


def test_version_is_the_projects(tmp_path: Path) -> None:
    result = tooling("--version", cwd=tmp_path)
    assert (result.returncode, result.stdout, result.stderr) == (0, f"tooling {VERSION}\n", "")


def test_an_installed_package_reads_its_version_from_its_metadata(monkeypatch: pytest.MonkeyPatch,
                                                                   tmp_path: Path) -> None:
    monkeypatch.setattr(distribution, "CHECKOUT_PROJECT", tmp_path / "pyproject.toml")  # none beside the package
    assert distribution.version() == metadata.version(distribution.DISTRIBUTION)


@pytest.mark.parametrize(("args", "code", "stdout", "stderr"), [
    (["--version"], 0, f"tooling {VERSION}\n", ""),
    (["validate"], 1, "", None),
    (["--help"], 1, "", None),
    (["report", "--serve"], 1, "", None),
])
def test_without_the_wiki_extra_the_command_line_names_it_in_one_line(tmp_path: Path, args: list[str], code: int,
                                                                      stdout: str, stderr: str | None) -> None:
    done = without_wiki.run("import sys\nsys.argv[0] = 'tooling'\nfrom tooling.main import main\nsys.exit(main())\n",
                            *args, cwd=tmp_path)
    if stderr is None:
        module = re.search(r"no module named '([^']+)'", done.stderr)
        assert module, done.stderr
        stderr = WIKI_LINE.format(module=module[1])
        assert module[1].partition(".")[0] in distribution.EXTRA_MODULES["wiki"]
    assert (done.returncode, done.stdout, done.stderr) == (code, stdout, stderr)


def test_a_command_that_needs_torch_names_the_training_extra() -> None:
    assert distribution.missing_extra(ModuleNotFoundError("No module named 'torch'", name="torch.distributed")) == (
        "this needs PyTorch, which comes with the 'training' extra, not installed here (no module named "
        "'torch.distributed'); install it: pip install 'resilience-playbook-tooling[training]'")
    assert distribution.missing_extra(ModuleNotFoundError("No module named 'tooling.gone'", name="tooling.gone")) is None


def test_the_changelog_has_this_version_and_an_unreleased_section() -> None:
    text = (PROJECT / "CHANGELOG.md").read_text(encoding="utf-8")
    headings = re.findall(r"^## \[([^\]]+)\]", text, re.M)
    assert headings[0] == "Unreleased" and VERSION in headings


# -- the wheel and the sdist, from the files a clean clone has -------------------------------------------------


def clone_files() -> list[str]:
    """What a clean clone of this working tree holds: tracked files and new ones git does not
    ignore, as they are now (nothing built, no virtual environment, no caches)."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=PROJECT,
                            capture_output=True, check=True).stdout.decode().split("\0")
    return [name for name in listed if name and (PROJECT / name).is_file()]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, list[str]]:
    """(wheel, sdist, the clone's files): `python -m build` of a copy of the clone's files builds
    the sdist, then the wheel from that sdist (so the sdist alone must be enough for it)."""
    source, dist = tmp_path_factory.mktemp("clone"), tmp_path_factory.mktemp("dist")
    files = clone_files()
    for name in files:
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(PROJECT / name, source / name)
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(dist), str(source)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    print(f"wheel and sdist built in {time.monotonic() - started:.1f} s")
    [wheel], [sdist] = sorted(dist.glob("*.whl")), sorted(dist.glob("*.tar.gz"))
    return wheel, sdist, files


@pytest.mark.slow
def test_the_wheel_and_the_sdist_hold_every_file_of_the_package(built: tuple[Path, Path, list[str]]) -> None:
    wheel, sdist, files = built
    assert wheel.name == f"resilience_playbook_tooling-{VERSION}-py3-none-any.whl"
    package = [name for name in files if name.startswith("tooling/")]
    with zipfile.ZipFile(wheel) as archive:
        in_wheel = set(archive.namelist())
        [meta] = [n for n in in_wheel if n.endswith(".dist-info/METADATA")]
        extras = re.findall(r"^Provides-Extra: (\S+)$", archive.read(meta).decode(), re.M)
    assert [name for name in package if name not in in_wheel and name not in DEVELOPMENT_ONLY] == []
    assert {"wiki", "training", "labs", "test"} <= set(extras)
    with tarfile.open(sdist) as archive:
        in_sdist = {name.partition("/")[2] for name in archive.getnames()}
    wanted = [name for name in package if name not in DEVELOPMENT_ONLY] + ["pyproject.toml", "README.md", "CHANGELOG.md"]
    assert [name for name in wanted if name not in in_sdist] == []


@pytest.mark.slow
def test_the_training_extra_alone_runs_the_primitives_and_lab_2(built: tuple[Path, Path, list[str]],
                                                                 tmp_path: Path) -> None:
    """A fresh virtual environment (no system site-packages) with the wheel and its training extra:
    pip installs torch==2.13.0 from this machine's wheel (pip's find-links), the rest from the
    index. tooling.resilience imports there and mkdocs does not; lab 2's self-check runs from a copy
    of the lab outside the checkout, so that the installed package is the one it uses."""
    wheel = built[0]
    venv = tmp_path / "training-env"
    started = time.monotonic()
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    python, bin_dir = venv / "bin" / "python", venv / "bin"
    # --no-compile: pip's byte-compiling of every installed module (torch's thousands) cannot fail an
    # install, and was 16 of its 26 s of CPU; what runs here compiles what it imports, as it imports it
    install = subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                              "--no-compile", f"{wheel}[training]"], capture_output=True, text=True, timeout=900)
    assert install.returncode == 0, install.stderr[-3000:]
    installed = time.monotonic() - started
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(tmp_path), "OMP_NUM_THREADS": "1"}

    def run(*args: str, cwd: Path = tmp_path) -> subprocess.CompletedProcess[str]:
        return subprocess.run(list(args), cwd=cwd, env=env, capture_output=True, text=True, timeout=300)

    probe = run(str(python), "-c", (
        "import importlib.util, tooling, tooling.resilience\n"
        "from tooling.resilience import (CheckpointManager, DistributedCheckpointManager, KillSwitch, NaNGuard,\n"
        "    LossSpikeGuard, RunReporter, StragglerDetector, Watchdog, set_determinism)\n"
        "print(tooling.__file__)\n"
        f"print([m for m in {SITE_MODULES!r} if importlib.util.find_spec(m)])\n"))
    assert probe.returncode == 0, probe.stderr
    where, present = probe.stdout.splitlines()
    assert where.startswith(str(venv)) and present == "[]"
    assert run(str(python), "-c", "import mkdocs").returncode == 1

    assert run(str(bin_dir / "tooling"), "--version").stdout == f"tooling {VERSION}\n"
    cli = run(str(bin_dir / "tooling"), "validate")
    assert (cli.returncode, cli.stdout) == (1, "")
    assert re.fullmatch(re.escape(WIKI_LINE).replace(r"\{module!r\}", "'[a-z_.]+'"), cli.stderr), cli.stderr

    lab = tmp_path / "02-kill-switch"
    shutil.copytree(PROJECT / "labs" / "02-kill-switch", lab)
    checked = run(str(python), "check.py", cwd=lab)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "lab 2 self-check: passed" in checked.stdout

    # the run reporter's writes go to the wiki tooling of another environment (the project's own)
    repo = tmp_path / "records"
    for folder in ("incidents", "runbooks"):
        shutil.copytree(CORPUS / folder, repo / folder)
    reported = run(str(python), "-c", (
        "from tooling.resilience import RunReporter\n"
        f"with RunReporter('demo-7b', root={str(repo)!r}, tooling={str(Path(sys.executable).with_name('tooling'))!r}) "
        "as reporter:\n"
        "    reporter.step(12, loss=0.5)\n"
        "    assert reporter.flush(), 'not written'\n"))
    assert reported.returncode == 0, reported.stderr
    assert "  step: 12\n" in (repo / "runbooks" / "runs" / "demo-7b.yaml").read_text(encoding="utf-8")
    print(f"fresh environment with the training extra in {installed:.1f} s; "
          f"everything in {time.monotonic() - started:.1f} s")
