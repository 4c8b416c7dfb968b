"""The wheel and sdist ``make dist`` builds: complete, valid metadata, one version everywhere.

Built offline with the installed build backend (``python -m build
--no-isolation``); ``make install-check`` installs the wheel into a clean
environment and runs it.
"""

from __future__ import annotations

import subprocess
import sys
import tarfile
import tomllib
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest

from prefrontal.serving.version import package_version

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "src" / "prefrontal"


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel and sdist built from this checkout into a fresh folder."""
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(ROOT)],
        check=True,
        capture_output=True,
    )
    return out


def _pyproject() -> dict[str, object]:
    with (ROOT / "pyproject.toml").open("rb") as file:
        project: dict[str, object] = tomllib.load(file)["project"]
        return project


def _wheel(dist: Path) -> zipfile.ZipFile:
    (wheel,) = dist.glob("prefrontal-*.whl")
    return zipfile.ZipFile(wheel)


def test_wheel_holds_every_module_and_data_file(dist: Path) -> None:
    """Every file of the package (modules, templates, styles, py.typed) is in the wheel."""
    wanted = {
        str(path.relative_to(PACKAGE.parent))
        for path in PACKAGE.rglob("*")
        if path.is_file() and "__pycache__" not in path.parts
    }
    with _wheel(dist) as wheel:
        held = set(wheel.namelist())
    assert wanted - held == set()
    assert "prefrontal/py.typed" in held


def test_wheel_metadata_matches_the_project(dist: Path) -> None:
    """The wheel's version, extras and command are the ones pyproject.toml declares."""
    project = _pyproject()
    with _wheel(dist) as wheel:
        info = next(n for n in wheel.namelist() if n.endswith(".dist-info/METADATA"))
        metadata = Parser().parsestr(wheel.read(info).decode())
        entry_points = wheel.read(info.replace("METADATA", "entry_points.txt")).decode()
    assert metadata["Version"] == project["version"]
    extras = project["optional-dependencies"]
    assert isinstance(extras, dict)
    assert set(metadata.get_all("Provides-Extra") or []) == set(extras)
    assert "prefrontal = prefrontal.cli:main" in entry_points


def test_the_version_comes_from_one_place(dist: Path) -> None:
    """The servers announce the version pyproject.toml declares; the sdist carries the same."""
    version = _pyproject()["version"]
    assert package_version() == version
    (sdist,) = dist.glob("prefrontal-*.tar.gz")
    assert sdist.name == f"prefrontal-{version}.tar.gz"
    with tarfile.open(sdist) as archive:
        names = archive.getnames()
    assert f"prefrontal-{version}/src/prefrontal/__init__.py" in names


def test_twine_accepts_both(dist: Path) -> None:
    """``twine check --strict`` passes the wheel and the sdist (metadata, README rendering)."""
    files = [str(p) for p in sorted(dist.iterdir())]
    done = subprocess.run(
        [sys.executable, "-m", "twine", "check", "--strict", *files],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("PASSED") == 2
