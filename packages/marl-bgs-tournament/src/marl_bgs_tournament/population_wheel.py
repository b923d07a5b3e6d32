"""The population as an installable data wheel: `marl-bgs-population`.

The System files of a release are generated (trained, then released), never committed, so the
wheel is built from a release folder rather than from the source tree: `build_wheel` checks the
release (every member's size and sha256 against `release.json`), lays it out as the package
`marl_bgs_population` (its `release/` folder) and builds it with hatchling, the monorepo's own
build backend, in a child process. `pip install marl_bgs_population-*.whl` then makes `pop:`
names find it (`population.default_folder`); pip's RECORD holds each file's hash, and `pop:`
names check each member's size and sha256 again before opening it.
"""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
import subprocess
import sys
import tempfile
from importlib.metadata import version as installed_version
from pathlib import Path

from marl_bgs_tournament.errors import TournamentError

DISTRIBUTION = "marl-bgs-population"
PACKAGE = "marl_bgs_population"
RELEASE_DIR = "release"
_VERSION = r"^\d+(\.\d+){1,3}$"

# Every value goes in as a TOML basic string (JSON's escapes are TOML's): a release's budget is
# text from its release.json and must stay text.
PYPROJECT = """\
[build-system]
requires = ["hatchling>=1.25"]
build-backend = "hatchling.build"

[project]
name = {name}
version = {version}
description = {description}
requires-python = ">=3.11"
license = "Apache-2.0"
dependencies = ["marl-bgs-tournament>=0.1,<0.2"]

[tool.hatch.build.targets.wheel]
packages = [{package}]
"""

INIT = f'''"""The MARL-BattleGrounds population: `RELEASE` is its release folder, read by
`pop:<member>` names (marl_bgs_tournament.population)."""

from pathlib import Path

RELEASE = Path(__file__).parent / "{RELEASE_DIR}"
'''

BUILD = "import sys, hatchling.build; hatchling.build.build_wheel(sys.argv[1])"


def installed_release() -> Path | None:
    """The release folder of the installed `marl-bgs-population` wheel, or None."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or spec.origin is None:
        return None
    folder = Path(spec.origin).parent / RELEASE_DIR
    return folder if folder.is_dir() else None


def build_wheel(release: str | Path, out: str | Path, version: str | None = None) -> Path:
    """Build the `marl-bgs-population` wheel of the release folder `release` into `out`
    (version: `version`, default this package's); returns the wheel's path."""
    from marl_bgs_tournament.population import RELEASE_FILE, member_file, read_release

    release, out = Path(release), Path(out)
    version = version or installed_version("marl-bgs-tournament")
    if not isinstance(version, str) or not re.fullmatch(_VERSION, version):
        raise TournamentError(f"version: expected a release number like 0.1.0, got {version!r}")
    if out.exists() and not out.is_dir():
        raise TournamentError(f"out: {out} is not a folder")
    names = [member_file(m, release).name for m in read_release(release)["members"]]
    with tempfile.TemporaryDirectory(prefix="marl-bgs-population-") as tmp:
        project = Path(tmp)
        data = project / PACKAGE / RELEASE_DIR
        data.mkdir(parents=True)
        for name in [RELEASE_FILE, *names]:
            shutil.copyfile(release / name, data / name)
        index = read_release(data)  # the copies are what goes in: checked again
        for member in index["members"]:
            member_file(member, data)
        text = f"The MARL-BattleGrounds population ({index['budget']} budget) as pop: names."
        fields = {"name": DISTRIBUTION, "version": version, "description": text,
                  "package": PACKAGE}  # fmt: skip
        toml = {k: json.dumps(v, ensure_ascii=False) for k, v in fields.items()}
        (project / "pyproject.toml").write_text(PYPROJECT.format(**toml))
        (project / PACKAGE / "__init__.py").write_text(INIT)
        dist = project / "dist"
        done = subprocess.run([sys.executable, "-c", BUILD, str(dist)], cwd=project,
                              capture_output=True, text=True, check=False,
                              timeout=600)  # fmt: skip
        built = sorted(dist.glob("*.whl")) if dist.is_dir() else []
        if done.returncode or len(built) != 1:
            raise TournamentError(f"wheel: hatchling failed:\n{done.stderr[-2000:]}")
        out.mkdir(parents=True, exist_ok=True)
        target = out / built[0].name
        shutil.copyfile(built[0], target)
    return target
