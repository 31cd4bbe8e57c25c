#!/usr/bin/env bash
# Fuzzes every reader with libFuzzer under ASan+UBSan (tests/fuzz/).
#   tools/fuzz.sh [SECONDS] [TARGET...]   default 600 s per target, all targets
# Builds build-fuzz/ with clang (-DGCSIM_FUZZ=ON), seeds each target's corpus from the
# real fixtures in the repo (traces/, configs/, tests/data/, tests/oracle/, the
# invalid-input corpus), runs it, and writes build-fuzz/fuzz-summary.tsv: executions,
# corpus size, findings. A finding (crash, leak, timeout, OOM) leaves its input in
# build-fuzz/findings/TARGET/ and makes the script exit 1.
# SECONDS=0 only replays the seeds and tests/fuzz/regressions/TARGET/ (inputs of past
# findings). FUZZ_JOBS runs that many targets at once;
# FUZZ_BUILD names the build dir (default build-fuzz); FUZZ_NO_BUILD=1 skips building;
# FUZZ_FRESH=1 fuzzes from the seeds alone (corpus-smoke/), not the kept corpus/, with
# libFuzzer's -seed=1 (CI's smoke run: repeatable up to the time limit).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
seconds="${1:-600}"; shift || true
out=${FUZZ_BUILD:-build-fuzz}
all=(swf sbatch_trace sbatch_options sacct slurm_conf cluster_yaml hwloc_xml nvidia_smi nccl_xml
     philly alibaba research_traces nccl_tests_log accounts model_yaml trace_file)
targets=("$@"); ((${#targets[@]})) || targets=("${all[@]}")
corpus_root=$out/corpus
if [[ -n ${FUZZ_FRESH:-} ]]; then corpus_root=$out/corpus-smoke; rm -rf "$corpus_root"; fi

if [[ -z ${FUZZ_NO_BUILD:-} ]]; then
  if [[ ! -f $out/build.ninja ]]; then
    CXX=clang++ cmake -S . -B "$out" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only -DNDEBUG" -DGCSIM_FUZZ=ON \
      -DGCSIM_BUILD_TESTS=OFF -DGCSIM_BUILD_BENCH=OFF >/dev/null
  fi
  cmake --build "$out" -j "$(nproc)" --target "${targets[@]/#/fuzz_}"
fi

# --- seeds -------------------------------------------------------------------------
seed() {  # seed TARGET [PREFIX_BYTE] < content: one seed file, named by its SHA-1 as libFuzzer names them
  local dir=$seed_root/$1; mkdir -p "$dir"
  local tmp; tmp=$(mktemp -p "$dir" .seed.XXXXXX)
  if [[ -n ${2:-} ]]; then { printf "\\x$(printf %02x "$2")"; head -c 65536; } >"$tmp"
  else head -c 65536 >"$tmp"; fi
  mv "$tmp" "$dir/$(sha1sum <"$tmp" | cut -c1-40)"
}
files() {  # files TARGET PREFIX FILE...: one seed per file (gzip inflated)
  local t=$1 pre=$2; shift 2
  for f in "$@"; do [[ -f $f ]] || continue
    case $f in *.gz) gzip -dc "$f" | seed "$t" "$pre" ;; *) seed "$t" "$pre" <"$f" ;; esac; done
}
joined() {  # joined TARGET PREFIX FILE...: the files as one input, `%%` lines between
  local t=$1 pre=$2; shift 2; local first=1
  { for f in "$@"; do ((first)) || printf '%%%%\n'; first=0; [[ -f $f ]] && cat "$f"; done; } | seed "$t" "$pre"
}
make_seeds() {
  seed_root=$out/corpus-seeds.tmp; rm -rf "$seed_root"
  shopt -s nullglob globstar
  set +o pipefail  # `gzip -dc BIG | head -c N` ends gzip with SIGPIPE
  files swf "" traces/*.swf traces/*.swf.gz tests/inputs/invalid/trace/swf_*.swf
  files sbatch_trace "" traces/*.csv tests/data/sched/*.csv tests/oracle/*/trace.csv tests/inputs/invalid/trace/csv_*.csv
  for f in tests/oracle/*/trace.csv tests/data/sched/*.csv; do
    tail -n +2 "$f" | head -20 | sed -E 's/^[^,]*,[^,]*,[^,]*,//; s/^"//; s/"(,.*)?$//' | while IFS= read -r l; do
      printf '%s' "$l" | seed sbatch_options; done
  done
  files sacct "" tests/oracle/*/run1/sacct.txt
  for d in tests/data/slurm/*/ configs/curie/ tests/oracle/*/ tests/inputs/invalid/slurm/*/; do
    joined slurm_conf "" "$d/slurm.conf" "$d/gres.conf" "$d/topology.conf"
  done
  files cluster_yaml "" configs/*.yaml tests/data/sched/*.yaml tests/inputs/invalid/cluster/*.yaml
  files hwloc_xml "" tests/data/hwloc/**/*.xml
  files nvidia_smi "" tests/data/nvidia-smi/**/*.txt
  files nccl_xml "" tests/data/nccl-xml/**/*.xml
  # Philly: the first 12 records of the sampled job log (a complete JSON array), machine lists.
  gzip -dc tests/data/traces/philly/philly_sampled_jobs_4206.json.gz |
    awk '/^  },?$/ { if (++n == 12) { print "  }"; print "]"; exit } } { print }' | seed philly 1
  files philly 0 tests/data/traces/philly/*machine_list.csv
  for f in tests/data/traces/alibaba/gpu-v2023/openb_pod_list_*.csv; do head -300 "$f" | seed alibaba 0; done
  for f in tests/data/traces/alibaba/gpu-v2023/openb_node_list_*.csv; do head -300 "$f" | seed alibaba 1; done
  joined alibaba 2 tests/data/traces/alibaba/gpu-v2020/pai_machine_spec.header tests/data/traces/alibaba/gpu-v2020/pai_machine_spec.csv
  files research_traces 0 tests/data/traces/helios/helios_sample_handwritten.csv
  files research_traces 1 tests/data/traces/gavel/small_test.trace
  files research_traces 2 tests/data/traces/pollux/*/workload-1.csv
  files research_traces 3 tests/data/traces/tiresias/*.csv
  files research_traces 4 tests/data/traces/chronus/*.csv.gz
  printf '60\n3600\n86400\n' | seed research_traces 5
  files nccl_tests_log "" tests/data/nccl/logs/*.log
  files accounts "" tests/oracle/fairshare/accounts.cfg tests/oracle/fairshare/sacctmgr.txt
  files model_yaml 0 configs/profiles/*.yaml
  files model_yaml 1 configs/host/default.yaml tests/inputs/invalid/host/params_*.yaml
  files model_yaml 2 tests/inputs/invalid/host/calibration_*.yaml
  files model_yaml 3 tests/data/generator/*.yaml tests/inputs/invalid/generator/*.yaml
  files model_yaml 4 configs/nccl/*.yaml
  # Whole files as `--trace` opens them, gzip included.
  for f in traces/hpc2n_first3171.swf traces/accasim_tests_workload.swf; do
    head -c 20000 "$f" | gzip -c | seed trace_file 0; head -c 20000 "$f" | seed trace_file 4; done
  head -c 20000 traces/philly-d07-d21.csv | gzip -c | seed trace_file 1
  head -c 20000 traces/philly-d07-d21.csv | seed trace_file 5
  files trace_file 2 tests/oracle/fairshare/run1/sacct.txt
  files trace_file 0 tests/inputs/invalid/trace/swf_truncated.swf.gz
  set -o pipefail
  rm -rf "$out/corpus-seeds"; mv "$seed_root" "$out/corpus-seeds"
}
make_seeds

# --- runs --------------------------------------------------------------------------
summary=$out/fuzz-summary.tsv
printf 'target\tseconds\texecutions\tseed_files\tcorpus_files\tcorpus_bytes\tfindings\n' >"$summary.tmp"
status=0
run_one() {
  local t=$1 corpus=$corpus_root/$1 find=$out/findings/$1 log=$out/logs/$1.log
  rm -rf "$find"; mkdir -p "$corpus" "$find" "$out/logs"
  local max_len=65536
  case $t in hwloc_xml|nccl_xml) max_len=262144 ;; esac
  local args=(-timeout=30 -rss_limit_mb=2048 -max_len=$max_len -print_final_stats=1
              -artifact_prefix="$find/" -close_fd_mask=3)
  local regress=()
  [[ -d $root/tests/fuzz/regressions/$t ]] && regress=("$root/tests/fuzz/regressions/$t")
  if ((seconds > 0)); then
    args+=(-max_total_time="$seconds")
    # A fresh (smoke) run mutates with a fixed seed, so it tries the same inputs in the
    # same order every time, up to where its time limit cuts it: CI's 30 s explore a
    # prefix of what a longer run of the same command explores here, not a new draw.
    [[ -n ${FUZZ_FRESH:-} ]] && args+=(-seed=1)
    cp -n "$out/corpus-seeds/$t"/* "$corpus/" 2>/dev/null || true
    TMPDIR=$(mktemp -d) "$out/tests/fuzz/fuzz_$t" "${args[@]}" "$corpus" "${regress[@]}" >"$log" 2>&1 || true
  else
    TMPDIR=$(mktemp -d) "$out/tests/fuzz/fuzz_$t" "${args[@]}" -runs=0 "$out/corpus-seeds/$t" "${regress[@]}" \
      >"$log" 2>&1 || true
  fi
}
export LSAN_OPTIONS="suppressions=$root/tests/fuzz/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
export -f run_one; export out seconds root corpus_root
printf '%s\n' "${targets[@]}" | xargs -P "${FUZZ_JOBS:-1}" -I{} bash -c 'run_one {}'
for t in "${targets[@]}"; do
  log=$out/logs/$t.log
  execs=$(sed -nE 's/^stat::number_of_executed_units: *([0-9]+).*/\1/p' "$log" | tail -1)
  secs=$(sed -nE 's/^stat::.*//; s/^Done ([0-9]+) runs in ([0-9]+) second.*/\2/p' "$log" | tail -1)
  nseed=$(ls "$out/corpus-seeds/$t" | wc -l)
  ncorp=$(ls "$corpus_root/$t" 2>/dev/null | wc -l)
  bytes=$(cat "$corpus_root/$t"/* 2>/dev/null | wc -c)
  nfind=$(ls "$out/findings/$t" 2>/dev/null | wc -l)
  if grep -qE '^==[0-9]+==ERROR|^SUMMARY: |deadly signal|ALARM: working on|out-of-memory' "$log"; then
    nfind=$((nfind > 0 ? nfind : 1))
  fi
  ((nfind == 0)) || { status=1; echo "fuzz: $t: finding, see $log and $out/findings/$t/" >&2; }
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$t" "${secs:-0}" "${execs:-0}" "$nseed" "$ncorp" "$bytes" "$nfind" >>"$summary.tmp"
done
mv "$summary.tmp" "$summary"
column -t -s $'\t' "$summary"
exit $status
