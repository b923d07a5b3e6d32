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

PYPROJECT = """\
[build-system]
requires = ["hatchling>=1.25"]
build-backend = "hatchling.build"

[project]
name = "{name}"
version = "{version}"
description = "The MARL-BattleGrounds population ({budget} budget, {count} members) as pop: names."
requires-python = ">=3.11"
license = "Apache-2.0"
dependencies = ["marl-bgs-tournament>=0.1,<0.2"]

[tool.hatch.build.targets.wheel]
packages = ["{package}"]
"""

INIT = '''"""The MARL-BattleGrounds population ({budget} budget): `RELEASE` is its release folder,
read by `pop:<member>` names (marl_bgs_tournament.population)."""

from pathlib import Path

RELEASE = Path(__file__).parent / "{release}"
'''

BUILD = "import sys, hatchling.build; print(hatchling.build.build_wheel(sys.argv[1]))"


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
    if not re.match(_VERSION, version):
        raise TournamentError(f"version: expected a release number like 0.1.0, got {version!r}")
    index = read_release(release)
    files = [member_file(m, release) for m in index["members"]]  # sizes and hashes checked
    with tempfile.TemporaryDirectory(prefix="marl-bgs-population-") as tmp:
        project = Path(tmp)
        data = project / PACKAGE / RELEASE_DIR
        data.mkdir(parents=True)
        for path in [release / RELEASE_FILE, *files]:
            shutil.copyfile(path, data / path.name)
        fields = {"name": DISTRIBUTION, "version": version, "budget": index["budget"],
                  "count": len(files), "package": PACKAGE, "release": RELEASE_DIR}  # fmt: skip
        (project / "pyproject.toml").write_text(PYPROJECT.format(**fields))
        (project / PACKAGE / "__init__.py").write_text(INIT.format(**fields))
        dist = project / "dist"
        done = subprocess.run([sys.executable, "-c", BUILD, str(dist)], cwd=project,
                              capture_output=True, text=True, check=False)  # fmt: skip
        if done.returncode:
            raise TournamentError(f"wheel: hatchling failed:\n{done.stderr[-2000:]}")
        built = dist / done.stdout.strip().splitlines()[-1]
        out.mkdir(parents=True, exist_ok=True)
        target = out / built.name
        shutil.copyfile(built, target)
    return target
