# Sourced by the scripts made for a borrowed GPU machine (two_bridge_gpu.sh, speed_gpu.sh): the
# packages are read from their source folders, with the version metadata they look up, in a
# Python that already holds jax with CUDA and the learners' libraries. Wheels carried in `.whl`
# (packages the machine lacks, e.g. JaxMARL for the SMAX peer) are unpacked to /tmp/site first.
# Sets PY, PYTHONPATH, PYTHONUNBUFFERED and XLA_PYTHON_CLIENT_PREALLOCATE=false (several
# processes may share the card, and peak memory then means what a figure used), prints versions.
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
PY=${PYTHON:-python3}
PIP=${PIP:-$PY -m pip}  # what unpacks the carried wheels (any pip: they are pure Python)
export PYTHONPATH=packages/marl-bgs-engine/src:packages/marl-bgs-eval/src:packages/marl-bgs-train/src
if compgen -G ".whl/*.whl" >/dev/null; then
  $PIP install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl || exit 1
  export PYTHONPATH=$PYTHONPATH:/tmp/site
fi
meta=/tmp/marl-bgs-gpu-meta
# Each package's name, version and entry points (the modes register through them), as an
# installed package would have them.
$PY - "$meta" <<'PYEOF' || exit 1
import pathlib, sys, tomllib
meta = pathlib.Path(sys.argv[1])
for pkg in ("engine", "eval", "train"):
    project = tomllib.loads(pathlib.Path(f"packages/marl-bgs-{pkg}/pyproject.toml").read_text())["project"]
    info = meta / f"marl_bgs_{pkg}-{project['version']}.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: {project['version']}\n"
    )
    groups = project.get("entry-points", {})
    (info / "entry_points.txt").write_text("".join(
        f"[{group}]\n" + "".join(f"{k} = {v}\n" for k, v in points.items()) + "\n"
        for group, points in groups.items()
    ))
PYEOF
export PYTHONPATH=$PYTHONPATH:$meta
export PYTHONUNBUFFERED=1
export XLA_PYTHON_CLIENT_PREALLOCATE=false

nvidia-smi --query-gpu=name,driver_version,memory.total,memory.used --format=csv 2>/dev/null
$PY - <<'PYEOF'
import jax, flax, optax, chex, orbax.checkpoint, sys
print("python", sys.version.split()[0], "jax", jax.__version__, "flax", flax.__version__,
      "optax", optax.__version__, "devices", jax.devices())
PYEOF
