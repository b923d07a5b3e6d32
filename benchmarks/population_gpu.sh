#!/usr/bin/env bash
# Issue 47's population at the paper's budget, one piece per borrowed-GPU lease (no network
# there, minutes of device time, 64 MiB carried each way). Each call unpacks the population
# folder from the parts in FROM (none: a new population), trains LEARNER for HOURS
# (`marl-bgs-train population --hours`: the update past the limit is saved and the same command
# continues exactly), and packs what the next piece needs into $OUT as `population.tgz.NN`
# parts of 15 MiB: population.json and, for each run, its newest checkpoint, its best and
# milestone copies, logs, curves and validation table (older checkpoints are left out: a
# recurrent IPPO checkpoint at the paper's settings is 13-17 MB on disk). QMIX's state holds its
# replay (2.8 GiB) and cannot travel: train it in one piece.
#
#   LEARNER=ippo-rnn HOURS=0.1 bash benchmarks/population_gpu.sh   # the first piece (6 minutes)
#   FROM=.pop LEARNER=ippo-rnn HOURS=0.1 bash benchmarks/population_gpu.sh   # the next ones
#   GPU=0 BUDGET=tiny LEARNER=ippo-ff HOURS=0 bash benchmarks/population_gpu.sh  # CPU, test size
#
# Each learner is a population of its own, `population-<learner>` in the parts (the population
# record pins its learners). Between pieces, here: `echo /.pop/ >> .git/info/exclude`, copy the
# returned parts into `.pop` and carry `.pop` (and `.whl` if the machine lacks a package). At
# the end, unpack each learner's last parts (`cat population.tgz.* | tar -xzf -`), then
# `marl-bgs-train population-join runs/population population-*` and
# `marl-bgs-tournament release runs/population`.
set -u
set -o pipefail
OUT=${OUT:-out/population-gpu}
LEARNER=${LEARNER:-ippo-rnn}
HOURS=${HOURS:-0.1}
BUDGET=${BUDGET:-paper}
GPU=${GPU:-1}
. "$(dirname "$0")/gpu_env.sh"  # PY, PYTHONPATH from the source folders, versions
[ "$GPU" = 1 ] || export JAX_PLATFORMS=cpu
WORK=/tmp/marl-bgs-population
rm -rf "$WORK" && mkdir -p "$WORK" "$OUT" || exit 1
if [ -n "${FROM:-}" ]; then
  cat "$FROM"/population.tgz.* | tar -xzf - -C "$WORK" || exit 1
fi
$PY -m marl_bgs_train.cli population --budget "$BUDGET" --learner "$LEARNER" \
  --out "$WORK/population-$LEARNER" --hours "$HOURS" --quiet 2>&1 | tee "$OUT/population.log" \
  || exit 1
# The piece's last update: where the learner is and how fast it trained.
$PY - "$WORK/population-$LEARNER" <<'PYEOF'
import csv, pathlib, sys
for log in sorted(pathlib.Path(sys.argv[1]).glob("*/*/log.csv")):
    last = list(csv.DictReader(log.open()))[-1]
    print(f"{log.parent}: update {last['update']}, {float(last['steps']):,.0f} game steps, "
          f"{float(last['steps_per_second']):,.0f} game steps/s")
PYEOF
# Every file of the folder but the checkpoints older than each manager's newest.
$PY - "$WORK" <<'PYEOF' > "$WORK/keep.txt" || exit 1
import pathlib, sys
base = pathlib.Path(sys.argv[1])
for path in sorted(base.glob("population-*/**/*")):
    parts = path.relative_to(base).parts
    if not path.is_file():
        continue
    if "checkpoints" in parts[:-1]:
        at = parts.index("checkpoints")
        folder = base.joinpath(*parts[: at + 1])
        steps = [int(p.name) for p in folder.iterdir() if p.name.isdigit()]
        if parts[at + 1].isdigit() and int(parts[at + 1]) != max(steps):
            continue
    print(path.relative_to(base))
PYEOF
tar -czf - -C "$WORK" -T "$WORK/keep.txt" | split -b 15M -d - "$OUT/population.tgz." || exit 1
parts=$(ls "$OUT"/population.tgz.* | wc -l)
if [ "$parts" -gt 4 ]; then
  echo "population_gpu: $parts parts of 15 MiB: over the 64 MiB a lease returns"; exit 1
fi
ls -l "$OUT"
