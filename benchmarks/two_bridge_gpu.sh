#!/usr/bin/env bash
# Two-Bridge on one GPU, in one go: game steps/s of Two-Bridge beside TDM (fresh process per
# figure), then one 10M-step run of each paper baseline (MaskPPO, MAPPO, QMIX on V1_Navigate,
# seed 0), the three runs sharing the GPU at once, each with its checkpoint evaluations.
#
# Runs from a checkout in any Python that already holds jax with CUDA and the packages'
# dependencies (flax, optax, orbax-checkpoint, pandas, rich, typer): the packages are read from
# their source folders (benchmarks/gpu_env.sh). Last, TDM's recurrent MAPPO at 1,024 games (the
# paper's GPU figure, as `nox -s bench-gpu` measures it). Results go to $OUT (default out/two-bridge-gpu): bench.jsonl,
# one checkpoints CSV per run, runs.log and train_throughput_gpu.json.
#
#   bash benchmarks/two_bridge_gpu.sh                      # the full measurement
#   STEPS=200000 SIZES="256" RUN_LIMIT=120 bash benchmarks/two_bridge_gpu.sh   # a short smoke
set -u
OUT=${OUT:-out/two-bridge-gpu}
STEPS=${STEPS:-10000000}
SIZES=${SIZES:-"1024 8192"}
RUN_LIMIT=${RUN_LIMIT:-300}  # seconds each training run may take before it is stopped
TRAIN_LIMIT=${TRAIN_LIMIT:-100}  # seconds for the TDM training-throughput figure
. "$(dirname "$0")/gpu_env.sh"  # to the checkout; PY, PYTHONPATH from the source folders
mkdir -p "$OUT"
cat /proc/loadavg

for n in $SIZES; do
  for figure in tdm two-bridge; do
    timeout 75 $PY benchmarks/engine_throughput.py --worker "$figure" --num-envs "$n" \
      --ticks 300 --repeats 3 | tee -a "$OUT/bench.jsonl"
  done
done

runs=/tmp/two-bridge-gpu-runs
rm -rf "$runs"
started=$(date +%s)
for algo in maskppo mappo qmix; do
  every=33  # checkpoints every 50K environment steps: 50,000 / (96 x 16), QMIX 50,000 / (64 x 8)
  [ "$algo" = qmix ] && every=98
  timeout "$RUN_LIMIT" $PY -m marl_bgs_train.cli "$algo" --mode two-bridge \
    --variant V1_Navigate --steps "$STEPS" --seed 0 --out "$runs/$algo" --quiet --validate \
    --save-every "$every" >"$runs-$algo.log" 2>&1 &
done
wait
echo "three runs ended after $(($(date +%s) - started)) s"
for algo in maskppo mappo qmix; do
  cp "$runs/$algo/validation.csv" "$OUT/$algo.csv" 2>/dev/null
  { echo "== $algo"; cat "$runs-$algo.log"; } >>"$OUT/runs.log"
  echo "== $algo: $(wc -l <"$OUT/$algo.csv" 2>/dev/null) lines"; tail -n 2 "$OUT/$algo.csv" 2>/dev/null
done
timeout "$TRAIN_LIMIT" $PY benchmarks/train_throughput.py --presets mappo-rnn --num-envs 1024 \
  --out "$OUT/train_throughput_gpu.json"
nvidia-smi --query-gpu=memory.used --format=csv 2>/dev/null
cat /proc/loadavg
