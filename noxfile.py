"""Every workflow of the workspace: tests per package, lint, typecheck, packaging, bench, demo.

Environments come from `uv.lock` (``uv sync --frozen``), so CI and new users get the same versions.
``nox -R`` reuses the environments and skips the install step.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import nox

nox.options.default_venv_backend = "uv"
nox.options.sessions = ["tests"]
nox.options.reuse_existing_virtualenvs = False

ROOT = Path(__file__).parent
PACKAGES = [
    "marl-bgs-engine",
    "marl-bgs-eval",
    "marl-bgs-train",
    "marl-bgs-clients",
    "marl-bgs-llm",
    "marl-bgs-tournament",
]
IMPORT_NAMES = {name: name.replace("marl-bgs-", "marl_bgs_") for name in PACKAGES}
IMPORT_NAMES["marl-bgs-engine"] = "marl_bgs"


def _sync(session: nox.Session, package: str | None, *args: str) -> None:
    """Install `package` (or the whole workspace) into the session's venv from the lock file."""
    target = ["--package", package] if package else ["--all-packages"]
    session.run_install(
        "uv",
        "sync",
        "--frozen",
        "--no-default-groups",
        *target,
        *args,
        env={"UV_PROJECT_ENVIRONMENT": session.virtualenv.location},  # type: ignore[union-attr]
    )


@nox.session
@nox.parametrize("package", PACKAGES, ids=PACKAGES)
def tests(session: nox.Session, package: str) -> None:
    """Install one package as a wheel with what it declares, check ranges, run its tests."""
    # The engine's adapter tests need the ecosystems they adapt to (its optional extras).
    extras = ["--extra", "jaxmarl", "--extra", "pettingzoo"] if package == "marl-bgs-engine" else []
    _sync(session, package, "--group", "test", "--no-editable", *extras)
    session.run("uv", "pip", "check", "--python", session.virtualenv.location)  # type: ignore[union-attr]
    session.run(
        "pytest",
        f"packages/{package}/tests",
        "-m",
        os.environ.get("MARL_BGS_TEST_MARKERS", "not slow"),
        *session.posargs,
        env={"JAX_PLATFORMS": os.environ.get("JAX_PLATFORMS", "cpu")},
    )


@nox.session
def lint(session: nox.Session) -> None:
    """ruff check and ruff format --check over the whole tree."""
    session.install("ruff>=0.8,<1")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")


@nox.session
def typecheck(session: nox.Session) -> None:
    """basedpyright over every package's sources (installs from PyPI alone, no node needed)."""
    _sync(session, None, "--group", "dev")
    session.run("basedpyright", *session.posargs)


@nox.session
def packaging(session: nox.Session) -> None:
    """Build every wheel, install each alone (plus the sibling wheels it needs) and import it."""
    dist = ROOT / "dist"
    shutil.rmtree(dist, ignore_errors=True)
    for package in PACKAGES:
        session.run("uv", "build", "--package", package, "--wheel", "--out-dir", str(dist))
    for package in PACKAGES:
        venv = Path(session.create_tmp()) / f"venv-{package}"
        shutil.rmtree(venv, ignore_errors=True)
        session.run("uv", "venv", "--quiet", "--python", sys.executable, str(venv))
        python = str(venv / "bin" / "python")
        session.run(
            "uv",
            "pip",
            "install",
            "--quiet",
            "--python",
            python,
            "--find-links",
            str(dist),
            package,
        )
        session.run("uv", "pip", "check", "--python", python)
        code = (
            f"import {IMPORT_NAMES[package]} as m, importlib.metadata as md;"
            f"assert m.__version__ == md.version('{package}');"
            "print(m.__name__, m.__version__, 'imports alone')"
        )
        session.run(python, "-c", code)
        if package == "marl-bgs-engine":
            check = "import marl_bgs; assert len(marl_bgs.maps.all_ids()) == 52, 'maps missing'"
            session.run(python, "-c", check)
            freeze = session.run("uv", "pip", "freeze", "--python", python, silent=True)
            session.log(f"engine venv holds: {' '.join(str(freeze).split())}")


@nox.session
def demo(session: nox.Session) -> None:
    """The main job: a few Team Deathmatch games with random legal actions."""
    _sync(session, "marl-bgs-engine", "--no-editable")
    session.run("python", "-m", "marl_bgs.demo", *session.posargs)


@nox.session
def bench(session: nox.Session) -> None:
    """CPU throughput, TDM vs SMAX side by side (see benchmarks/README.md); `-- --quick` smokes."""
    _sync(session, "marl-bgs-engine", "--no-editable", "--extra", "bench")
    session.run(
        "python", "benchmarks/engine_throughput.py", *session.posargs,
        env={"JAX_PLATFORMS": "cpu"},
    )  # fmt: skip


@nox.session(name="bench-gpu")
def bench_gpu(session: nox.Session) -> None:
    """The GPU curve to 8192 games; exits 0 with a message where no GPU is visible.

    Installs `jax[cuda12]` at the locked jax version (`MARL_BGS_CUDA=cuda13` for CUDA 13).
    """
    if shutil.which("nvidia-smi") is None:
        session.log("bench-gpu: no GPU visible (nvidia-smi not found); nothing to measure.")
        return
    _sync(session, "marl-bgs-engine", "--no-editable", "--extra", "bench")
    jax_version = session.run("python", "-c", "import jax; print(jax.__version__)", silent=True)
    cuda = os.environ.get("MARL_BGS_CUDA", "cuda12")
    session.install(f"jax[{cuda}]=={str(jax_version).strip()}")
    gpu_env = {"JAX_PLATFORMS": ""}  # let jax pick its GPU even where the shell pins cpu
    probe = "import jax\ntry: n = len(jax.devices('gpu'))\nexcept RuntimeError: n = 0\nprint(n)"
    seen = session.run("python", "-c", probe, silent=True, env=gpu_env)
    if int(str(seen).strip().splitlines()[-1]) == 0:
        session.log(f"bench-gpu: jax sees no GPU (with jax[{cuda}]); nothing to measure.")
        return
    session.run("python", "benchmarks/engine_throughput.py", "--gpu", *session.posargs, env=gpu_env)
