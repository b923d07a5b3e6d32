"""The pure checks behind `nox -s release -- <package>`: no building, no network, no git calls.

Each check raises `ReleaseCheckError` naming what is wrong (`field`), what it holds (`value`) and
what would pass (`allowed`). Tested by `ci/test_release_checks.py` (`nox -s ci-checks`).
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

__all__ = [
    "ReleaseCheckError",
    "check_changelog",
    "check_package_name",
    "check_sibling_ranges",
    "check_version_bumped",
    "last_tagged_version",
    "needed_siblings",
    "package_version",
    "read_project",
    "tag_name",
]

# A level-2 heading whose first word is a version, bare or in brackets: `## 0.2.0`,
# `## [0.2.0] - 2025-01-31`, `## 0.2.0 (2025-01-31)`; also `## Unreleased` / `## [Unreleased]`.
_HEADING = re.compile(r"^##\s+\[?(?P<label>[^\]\s]+)\]?(?P<rest>.*)$")


class ReleaseCheckError(Exception):
    """A release check failed: `field` holds `value`, but only `allowed` would pass."""

    def __init__(self, field: str, value: object, allowed: str, hint: str = "") -> None:
        self.field = field
        self.value = value
        self.allowed = allowed
        self.hint = hint
        message = f"{field}: got {value!s}; allowed: {allowed}"
        super().__init__(f"{message}. {hint}" if hint else message)


def check_package_name(name: str, packages: Sequence[str]) -> str:
    """Return `name` if it is one of the workspace's `packages`."""
    if name not in packages:
        raise ReleaseCheckError("package", repr(name), ", ".join(packages))
    return name


def read_project(root: Path, package: str) -> dict[str, Any]:
    """The `[project]` table of `packages/<package>/pyproject.toml` under the workspace `root`."""
    path = root / "packages" / package / "pyproject.toml"
    with path.open("rb") as f:
        return tomllib.load(f)["project"]


def package_version(root: Path, package: str) -> Version:
    """The static `[project] version` of `package`."""
    raw = read_project(root, package).get("version")
    field = f"packages/{package}/pyproject.toml [project] version"
    if not isinstance(raw, str):
        raise ReleaseCheckError(field, repr(raw), "a static PEP 440 version string")
    try:
        return Version(raw)
    except InvalidVersion:
        raise ReleaseCheckError(field, repr(raw), "a PEP 440 version such as '0.2.0'") from None


def tag_name(package: str, version: Version | str) -> str:
    """The release tag of one package version: `<package>-v<version>`."""
    return f"{package}-v{version}"


def last_tagged_version(package: str, tags: Iterable[str]) -> Version | None:
    """The highest version among `tags` named `<package>-v<version>` (others are ignored)."""
    prefix = f"{package}-v"
    versions = []
    for raw in tags:
        tag = raw.strip()
        if not tag.startswith(prefix):
            continue
        try:
            versions.append(Version(tag.removeprefix(prefix)))
        except InvalidVersion:
            continue  # not a release tag of this package (e.g. `<package>-vnext`)
    return max(versions, default=None)


def check_version_bumped(package: str, version: Version, tags: Iterable[str]) -> Version | None:
    """Fail unless `version` is above the last tagged release; return that release (or None)."""
    last = last_tagged_version(package, tags)
    if last is not None and version <= last:
        raise ReleaseCheckError(
            f"packages/{package}/pyproject.toml [project] version",
            str(version),
            f"a version above {last} (last tag: {tag_name(package, last)})",
            "Bump the version before releasing",
        )
    return last


def check_changelog(changelog: Path, version: Version) -> str:
    """Return the heading of `version` in `changelog`; fail if missing or marked unreleased."""
    allowed = f"a heading '## {version}' or '## [{version}]', optionally followed by its date"
    if not changelog.is_file():
        raise ReleaseCheckError(str(changelog), "no such file", allowed)
    labels: list[str] = []
    for line in changelog.read_text(encoding="utf-8").splitlines():
        match = _HEADING.match(line.strip())
        if match is None:
            continue
        label = match["label"]
        labels.append(label)
        try:
            same = Version(label) == version
        except InvalidVersion:
            continue
        if same and "unreleased" in match["rest"].lower():
            raise ReleaseCheckError(
                str(changelog),
                repr(line.strip()),
                allowed,
                "The heading still says unreleased: replace that with the release date",
            )
        if same:
            return line.strip()
    only_unreleased = bool(labels) and all(label.lower() == "unreleased" for label in labels)
    hint = (
        f"Only an 'Unreleased' section exists: rename it to {version}"
        if only_unreleased
        else f"Add a section for {version} describing its changes"
    )
    found = ", ".join(repr(label) for label in labels) or "none"
    raise ReleaseCheckError(f"{changelog} headings", found, allowed, hint)


def _sibling_requirements(
    project: dict[str, Any], packages: Sequence[str], *, extras: bool
) -> list[tuple[str, Requirement]]:
    """(text, parsed) requirements of `project` on `packages` (with its extras if `extras`)."""
    raw = list(project.get("dependencies", []))
    if extras:
        for group in project.get("optional-dependencies", {}).values():
            raw.extend(group)
    siblings = {canonicalize_name(p) for p in packages}
    requirements = []
    for text in raw:
        try:
            requirement = Requirement(text)
        except InvalidRequirement as exc:
            raise ReleaseCheckError(
                f"{project.get('name')} dependency", repr(text), "a PEP 508 requirement"
            ) from exc
        if canonicalize_name(requirement.name) in siblings:
            requirements.append((text, requirement))
    return requirements


def check_sibling_ranges(root: Path, package: str, packages: Sequence[str]) -> dict[str, Version]:
    """Fail unless `package`'s ranges on its siblings, and its dependents' ranges on it, admit
    the workspace's current versions. Return the current versions of the siblings it requires.
    """
    by_name = {canonicalize_name(p): p for p in packages}
    versions = {p: package_version(root, p) for p in packages}
    problems: list[str] = []
    allowed: list[str] = []
    needed: dict[str, Version] = {}

    def admit(owner: str, text: str, requirement: Requirement) -> None:
        sibling = by_name[canonicalize_name(requirement.name)]
        current = versions[sibling]
        if not requirement.specifier.contains(current, prereleases=True):
            problems.append(f"{owner} requires '{text}' but {sibling} is {current}")
            allowed.append(f"a range on {sibling} that admits {current}")

    for text, requirement in _sibling_requirements(
        read_project(root, package), packages, extras=True
    ):
        admit(package, text, requirement)
        sibling = by_name[canonicalize_name(requirement.name)]
        needed[sibling] = versions[sibling]
    for other in packages:
        if other == package:
            continue
        project = read_project(root, other)
        for text, requirement in _sibling_requirements(project, packages, extras=True):
            if canonicalize_name(requirement.name) == canonicalize_name(package):
                admit(other, text, requirement)
    if problems:
        raise ReleaseCheckError(
            "sibling ranges",
            "; ".join(problems),
            "; ".join(dict.fromkeys(allowed)),
            "Widen the ranges (in pyproject.toml, then `uv lock`) so the workspace stays coherent",
        )
    return needed


def needed_siblings(root: Path, package: str, packages: Sequence[str]) -> list[str]:
    """The siblings `package` needs at runtime, transitively, in the order of `packages`."""
    by_name = {canonicalize_name(p): p for p in packages}
    seen: set[str] = set()
    todo = [package]
    while todo:
        current = todo.pop()
        project = read_project(root, current)
        for _, requirement in _sibling_requirements(project, packages, extras=False):
            sibling = by_name[canonicalize_name(requirement.name)]
            if sibling not in seen and sibling != package:
                seen.add(sibling)
                todo.append(sibling)
    return [p for p in packages if p in seen]
