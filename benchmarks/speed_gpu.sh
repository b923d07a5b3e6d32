#!/usr/bin/env bash
# Issue 46's GPU measurement, prepared for one borrowed GPU machine (no network there): the
# side-by-side curve of TDM, JaxMARL's SMAX and Two-Bridge from 1,024 to 65,536 games with each
# figure's peak device memory, the largest TDM batch that fits (doubling until out of memory)
# with its bytes per game, the per-phase profile at the largest size of the curve, then
# recurrent MAPPO's training throughput at 1,024 games (the paper's GPU figure: 29,878 game
# steps/s, 5.0 GB) and at the batch the population trains with (the PPO presets' 512).
#
# JaxMARL is not on the machine: carry it as wheels (benchmarks/README.md, "On a borrowed GPU"),
# which benchmarks/gpu_env.sh unpacks. Each stage writes its own files under $OUT, the curve's
# after every size: a stage cut off by a call's limit goes on in the next call from the files
# that came back (FROM=a folder holding them, carried; the curve resumes, finished stages are
# skipped by naming the others in STAGES):
#   curve.json / curve.log    engine_throughput.py --gpu (the curve, largest batch, profile)
#   train-1024.json, train-512.json   train_throughput.py --presets mappo-rnn
#   trace-1024.json/.txt, trace-512.json/.txt   train_trace.py: where an update's time goes
#
#   STAGES="curve train trace" bash benchmarks/speed_gpu.sh  # on the GPU machine
#   GPU=0 bash benchmarks/speed_gpu.sh                         # the same steps on a CPU, tiny
set -u
OUT=${OUT:-out/speed-gpu}
STAGES=${STAGES:-"curve train trace"}
GPU=${GPU:-1}
. "$(dirname "$0")/gpu_env.sh"  # PY, PYTHONPATH from the source folders, carried wheels, versions
mkdir -p "$OUT"
RESUME=""
if [ -n "${FROM:-}" ]; then
  cp "$FROM"/* "$OUT"/ && RESUME="--resume"
fi
if [ "$GPU" = 1 ]; then
  CURVE_ARGS=${CURVE_ARGS:-"--gpu --ticks 200 --repeats 3"}
  TRAIN_SIZES=${TRAIN_SIZES:-"1024 512"}
  TRAIN_ARGS=${TRAIN_ARGS:-"--repeats 3"}
  TRACE_ARGS=${TRACE_ARGS:-"--repeats 3"}
else  # a smoke of every step at toy sizes, on the CPU
  export JAX_PLATFORMS=cpu
  CURVE_ARGS=${CURVE_ARGS:-"--num-envs 16 32 --ticks 10 --repeats 1 --processes 1 --largest --largest-limit 128"}
  TRAIN_SIZES=${TRAIN_SIZES:-"8"}
  TRAIN_ARGS=${TRAIN_ARGS:-"--repeats 1 --rollout 8"}
  TRACE_ARGS=${TRACE_ARGS:-"--repeats 1 --rollout 8"}
fi
$PY -c "import jaxmarl" || { echo "speed_gpu: JaxMARL is missing (carry its wheels)"; exit 1; }
for stage in $STAGES; do
  case $stage in
    curve)
      # shellcheck disable=SC2086
      $PY benchmarks/engine_throughput.py $CURVE_ARGS $RESUME --no-doc --out "$OUT/curve.json" \
        2>&1 | tee -a "$OUT/curve.log" ;;
    train)
      for n in $TRAIN_SIZES; do
        # shellcheck disable=SC2086
        $PY benchmarks/train_throughput.py --presets mappo-rnn --num-envs "$n" $TRAIN_ARGS \
          --out "$OUT/train-$n.json"
      done ;;
    trace)
      for n in $TRAIN_SIZES; do
        # shellcheck disable=SC2086
        $PY benchmarks/train_trace.py --preset mappo-rnn --num-envs "$n" $TRACE_ARGS \
          --out "/tmp/trace-$n" --out-json "$OUT/trace-$n.json" 2>&1 | tee "$OUT/trace-$n.txt"
      done ;;
    *) echo "speed_gpu: unknown stage $stage (curve, train, trace)"; exit 2 ;;
  esac
done
nvidia-smi --query-gpu=memory.used --format=csv 2>/dev/null
ls -l "$OUT"
