"""Unit tests of ci/release_checks.py on throwaway workspaces (`nox -s ci-checks`)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from packaging.version import Version

sys.path.insert(0, str(Path(__file__).resolve().parent))
import release_checks as rc

PACKAGES = ["pkg-core", "pkg-eval", "pkg-app"]


def _package(root: Path, name: str, version: str, deps: list[str], changelog: str = "") -> None:
    folder = root / "packages" / name
    folder.mkdir(parents=True)
    listed = ", ".join(f'"{d}"' for d in deps)
    text = f'[project]\nname = "{name}"\nversion = "{version}"\ndependencies = [{listed}]\n'
    (folder / "pyproject.toml").write_text(text)
    (folder / "CHANGELOG.md").write_text(f"# Changelog of {name}\n\n{changelog}")


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """core 0.2.0 <- eval 0.1.0 <- app 0.1.0, every range admitting the current versions."""
    _package(tmp_path, "pkg-core", "0.2.0", ["numpy>=1.26"], "## 0.2.0\n- Faster.\n\n## 0.1.0\n")
    _package(tmp_path, "pkg-eval", "0.1.0", ["pkg-core>=0.2,<0.3"], "## [0.1.0] - 2025-01-31\n")
    _package(tmp_path, "pkg-app", "0.1.0", ["pkg-eval>=0.1,<0.2", "pkg-core>=0.2,<0.3"])
    return tmp_path


def test_package_name_must_be_a_workspace_package() -> None:
    assert rc.check_package_name("pkg-eval", PACKAGES) == "pkg-eval"
    with pytest.raises(rc.ReleaseCheckError, match="pkg-core, pkg-eval, pkg-app") as info:
        rc.check_package_name("pkg-nope", PACKAGES)
    assert info.value.field == "package"


def test_version_is_read_from_pyproject(workspace: Path) -> None:
    assert rc.package_version(workspace, "pkg-core") == Version("0.2.0")


def test_bumped_version_passes_and_tags_sort_by_version() -> None:
    tags = ["pkg-core-v0.9.0", "pkg-core-v0.10.0", "pkg-core-vnext", "pkg-eval-v3.0.0"]
    assert rc.last_tagged_version("pkg-core", tags) == Version("0.10.0")
    assert rc.check_version_bumped("pkg-core", Version("0.11.0"), tags) == Version("0.10.0")


def test_any_version_passes_without_tags() -> None:
    assert rc.check_version_bumped("pkg-core", Version("0.1.0"), []) is None


@pytest.mark.parametrize("version", ["0.10.0", "0.9.5"])
def test_version_not_bumped_fails(version: str) -> None:
    tags = ["pkg-core-v0.9.0", "pkg-core-v0.10.0"]
    with pytest.raises(rc.ReleaseCheckError, match=r"above 0\.10\.0") as info:
        rc.check_version_bumped("pkg-core", Version(version), tags)
    assert "version" in info.value.field


@pytest.mark.parametrize(
    "heading", ["## 0.2.0", "## [0.2.0]", "## [0.2.0] - 2025-01-31", "## 0.2.0 (2025-01-31)"]
)
def test_changelog_heading_forms_pass(tmp_path: Path, heading: str) -> None:
    changelog = tmp_path / "CHANGELOG.md"
    changelog.write_text(f"# Changelog\n\n## Unreleased\n\n{heading}\n- Things.\n\n## 0.1.0\n")
    assert rc.check_changelog(changelog, Version("0.2.0")) == heading


def test_changelog_without_the_version_fails(tmp_path: Path) -> None:
    changelog = tmp_path / "CHANGELOG.md"
    changelog.write_text("# Changelog\n\n## 0.1.0\n- First.\n\n### 0.2.0 is not level 2\n")
    with pytest.raises(rc.ReleaseCheckError, match=r"'## 0\.2\.0' or '## \[0\.2\.0\]'"):
        rc.check_changelog(changelog, Version("0.2.0"))


def test_changelog_with_only_unreleased_fails(tmp_path: Path) -> None:
    changelog = tmp_path / "CHANGELOG.md"
    changelog.write_text("# Changelog\n\n## [Unreleased]\n- Things.\n")
    with pytest.raises(rc.ReleaseCheckError, match="Only an 'Unreleased' section"):
        rc.check_changelog(changelog, Version("0.2.0"))


def test_changelog_heading_marked_unreleased_fails(tmp_path: Path) -> None:
    changelog = tmp_path / "CHANGELOG.md"
    changelog.write_text("# Changelog\n\n## 0.2.0 (unreleased)\n- Things.\n")
    with pytest.raises(rc.ReleaseCheckError, match="still says unreleased"):
        rc.check_changelog(changelog, Version("0.2.0"))


def test_missing_changelog_fails(tmp_path: Path) -> None:
    with pytest.raises(rc.ReleaseCheckError, match="no such file"):
        rc.check_changelog(tmp_path / "CHANGELOG.md", Version("0.2.0"))


def test_sibling_ranges_that_admit_pass(workspace: Path) -> None:
    assert rc.check_sibling_ranges(workspace, "pkg-core", PACKAGES) == {}
    expected = {"pkg-eval": Version("0.1.0"), "pkg-core": Version("0.2.0")}
    assert rc.check_sibling_ranges(workspace, "pkg-app", PACKAGES) == expected


def test_own_sibling_range_not_admitting_fails(tmp_path: Path) -> None:
    _package(tmp_path, "pkg-core", "0.2.0", [])
    _package(tmp_path, "pkg-eval", "0.2.0", ["pkg-core>=0.1,<0.2"])
    _package(tmp_path, "pkg-app", "0.1.0", [])
    expected = re.escape("pkg-eval requires 'pkg-core>=0.1,<0.2' but pkg-core is 0.2.0")
    with pytest.raises(rc.ReleaseCheckError, match=expected) as e:
        rc.check_sibling_ranges(tmp_path, "pkg-eval", PACKAGES)
    assert e.value.field == "sibling ranges"
    assert "admits 0.2.0" in e.value.allowed


def test_dependent_range_not_admitting_new_version_fails(tmp_path: Path) -> None:
    _package(tmp_path, "pkg-core", "0.3.0", [])
    _package(tmp_path, "pkg-eval", "0.1.0", ["pkg-core>=0.2,<0.3"])
    _package(tmp_path, "pkg-app", "0.1.0", [])
    with pytest.raises(
        rc.ReleaseCheckError, match=r"'pkg-core>=0\.2,<0\.3' but pkg-core is 0\.3\.0"
    ):
        rc.check_sibling_ranges(tmp_path, "pkg-core", PACKAGES)


def test_needed_siblings_are_transitive(tmp_path: Path) -> None:
    _package(tmp_path, "pkg-core", "0.2.0", [])
    _package(tmp_path, "pkg-eval", "0.1.0", ["pkg-core>=0.2"])
    _package(tmp_path, "pkg-app", "0.1.0", ["pkg-eval>=0.1"])
    assert rc.needed_siblings(tmp_path, "pkg-app", PACKAGES) == ["pkg-core", "pkg-eval"]
    assert rc.needed_siblings(tmp_path, "pkg-core", PACKAGES) == []
