#!/usr/bin/env bash
# Sets gcsim up on a Debian 12 machine and runs it:
#   tools/bootstrap.sh run    install missing packages, build, simulate the bundled default
#   tools/bootstrap.sh test   install missing packages, build, run the whole test suite
# Installs only the Debian packages that are missing, as root or through sudo.
set -euo pipefail
cd "$(dirname "$0")/.."

mode="${1:-run}"
case "$mode" in run|test|build) ;; *) echo "usage: $0 run|test|build" >&2; exit 2 ;; esac

packages=(cmake ninja-build g++ pkg-config git zlib1g-dev libyaml-cpp-dev libcli11-dev catch2
          libbenchmark-dev libboost-graph-dev libeigen3-dev libhwloc-dev libnuma-dev)
# The tests also run a real Slurm on loopback (tools/slurm/local_slurm.sh), render the
# compare report in headless Chromium (tests/report/), and run again under ASan+UBSan
# built by clang, with the libFuzzer harnesses (clang's runtimes: libclang-rt-14-dev).
if [[ "$mode" == test ]]; then packages+=(slurmctld slurmd slurm-client chromium clang libclang-rt-14-dev); fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "bootstrap: installing missing packages: ${missing[*]}" >&2
  if [[ $(id -u) -eq 0 ]]; then
    as_root=()
  elif command -v sudo >/dev/null; then
    as_root=(sudo)
  else
    echo "bootstrap: need root or sudo to install: ${missing[*]}" >&2
    exit 1
  fi
  "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

jobs="$(nproc 2>/dev/null || echo 2)"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGCSIM_WERROR=ON >/dev/null
cmake --build build -j "$jobs"

case "$mode" in
  run)
    # The bundled default: a 32-node DGX A100 pod running two weeks of real Microsoft
    # Philly multi-GPU jobs (traces/README.md) under EASY backfill, compared three ways:
    # NUMA-bound, unbound and Kubernetes-style (Topology Manager "none") placement, with
    # the step runtime model and input-bound training profiles (configs/profiles/).
    ./build/gcsim compare --cluster configs/dgx-a100-pod.yaml --trace traces/philly-d07-d21.csv \
      --start 2017-09-25T05:25:35 --policy easy --runtime-model step \
      --profiles configs/profiles/input-bound.yaml \
      --variant numa-bound:binding=numa-bound --variant unbound:binding=unbound \
      --variant k8s-none:binding=k8s-none --out runs/default
    ;;
  test)
    ctest --test-dir build --output-on-failure -j "$jobs"
    # The whole suite again under AddressSanitizer and UndefinedBehaviorSanitizer, built
    # by clang with -Werror (-O1: sanitizers need no more, and it builds twice as fast),
    # plus fuzz_smoke: 30 s of libFuzzer for every reader (tests/fuzz/). This build also
    # reverses the tie order of simultaneous events (GCSIM_REVERSED_TIES): every test
    # must pass with the other order too.
    CXX=clang++ cmake -S . -B build-sanitize -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only -DNDEBUG" \
      -DGCSIM_FUZZ=ON -DGCSIM_WERROR=ON -DGCSIM_REVERSED_TIES=ON -DGCSIM_BUILD_BENCH=OFF >/dev/null
    cmake --build build-sanitize -j "$jobs"
    ctest --test-dir build-sanitize --output-on-failure -j "$jobs"
    ;;
esac
