"""What the wheels hold: ``pip install memcore`` is the runtime (memcore and workers), and
memcore_bench is the memcore-bench distribution that the ``bench`` extra requires
(README: Install). The wheels are built for real, from a copy of the sources (a ``build/``
left in the checkout by an earlier build would put its stale files in the wheel)."""

from __future__ import annotations

import email
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# What the runtime wheel is built from, and memcore_bench beside it: a find that took it
# in again would put it in the wheel, and this test would see it.
SOURCES = ("pyproject.toml", "README.md", "memcore", "workers", "memcore_bench")
_LEFTOVERS = shutil.ignore_patterns("__pycache__", "*.pyc", "build", "*.egg-info")


def _project(path: Path) -> dict[str, object]:
    project = tomllib.loads(path.read_text())["project"]
    assert isinstance(project, dict)
    return project


def _build(src: Path, out: Path) -> zipfile.ZipFile:
    """The wheel of the project in ``src``, built by pip into ``out``."""
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", str(src),
                           "-w", str(out)], capture_output=True, text=True, timeout=240,
                          check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    (wheel,) = out.glob("*.whl")
    return zipfile.ZipFile(wheel)


def _top_level(wheel: zipfile.ZipFile) -> set[str]:
    return {name.split("/", 1)[0] for name in wheel.namelist()}


def _requires(wheel: zipfile.ZipFile) -> list[str]:
    (metadata,) = [n for n in wheel.namelist() if n.endswith(".dist-info/METADATA")]
    return email.message_from_bytes(wheel.read(metadata)).get_all("Requires-Dist") or []


@pytest.fixture(scope="module")
def sources(tmp_path_factory: pytest.TempPathFactory) -> Path:
    copy = tmp_path_factory.mktemp("src")
    for name in SOURCES:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, copy / name, ignore=_LEFTOVERS)
        else:
            shutil.copy2(ROOT / name, copy / name)
    return copy


def test_runtime_wheel_holds_memcore_and_workers_only(sources: Path, tmp_path: Path) -> None:
    wheel = _build(sources, tmp_path)
    assert _top_level(wheel) == {"memcore", "workers", "memcore-0.1.0.dist-info"}
    assert not [n for n in wheel.namelist() if "memcore_bench" in n]
    # The bench extra brings memcore_bench as a distribution of its own.
    assert 'memcore-bench==0.1.0; extra == "bench"' in _requires(wheel)


def test_bench_wheel_holds_memcore_bench_alone(sources: Path, tmp_path: Path) -> None:
    wheel = _build(sources / "memcore_bench", tmp_path)
    assert _top_level(wheel) == {"memcore_bench", "memcore_bench-0.1.0.dist-info"}
    modules = {n for n in wheel.namelist() if n.startswith("memcore_bench/")}
    assert modules == {f"memcore_bench/{p.name}" for p in (ROOT / "memcore_bench").glob("*.py")}
    # What memcore.core.extras.BENCH checks for comes with it.
    assert {"memcore[embedded]==0.1.0", "matplotlib>=3.8"} <= set(_requires(wheel))


def test_the_two_distributions_pin_each_other_at_one_version() -> None:
    memcore = _project(ROOT / "pyproject.toml")
    bench = _project(ROOT / "memcore_bench" / "pyproject.toml")
    version = memcore["version"]
    assert bench["version"] == version
    extras = memcore["optional-dependencies"]
    assert isinstance(extras, dict)
    assert extras["bench"] == [f"memcore-bench=={version}"]
    dependencies = bench["dependencies"]
    assert isinstance(dependencies, list)
    assert f"memcore[embedded]=={version}" in dependencies
