// `gcsim real probe`: measures this machine for the host model. For each pair (CPU NUMA
// domain, memory NUMA domain): STREAM triad bandwidth (a[i] = b[i] + s * c[i], 24 bytes
// per element, every allowed core of the CPU domain, best of several repetitions) and
// load-to-use latency (a pointer chase over a random cyclic permutation of cache lines,
// one core). Built with CUDA (GCSIM_HAVE_CUDA), also each GPU's pinned host-to-device and
// device-to-host bandwidth from a buffer on each NUMA domain. The result is a host
// calibration file (configs/host/README.md) for `gcsim run --host-calibration`.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "tools/real/real_mode.hpp"

namespace gcsim::real {

struct ProbeOptions {
  bool quick = false;         // small buffers, few repetitions: seconds
  std::string template_name;  // the node template the figures are for
};

struct ProbeMemoryPair {
  int cpu_numa = 0, mem_numa = 0;  // abstract domains of the node template
  int os_cpu_node = 0, os_mem_node = 0;
  int threads = 0;
  double triad_Bps = 0;
  double latency_ns = 0;
};

struct ProbeGpuCopy {
  int gpu = 0;
  int gpu_numa = 0;  // the GPU's own NUMA domain
  int mem_numa = 0;
  double h2d_Bps = 0, d2h_Bps = 0;
};

struct ProbeResult {
  std::string host, template_name;
  bool quick = false;
  bool numa_api = false;   // libnuma works here (else one domain, default allocation)
  bool cuda = false;       // built with CUDA and a device answered
  int64_t buffer_bytes = 0, chase_bytes = 0;
  std::vector<ProbeMemoryPair> memory;
  std::vector<ProbeGpuCopy> copies;
  std::vector<std::string> notes;
  double seconds = 0;
};

/// Runs the measurements on the allowed CPUs of `m` (which must be the live machine).
/// Progress lines go to `progress`. Throws std::runtime_error when nothing can be measured.
[[nodiscard]] ProbeResult run_probe(const Machine& m, const ProbeOptions& o, std::ostream& progress);

/// The measurements as a table (one row per pair, then per GPU copy).
[[nodiscard]] std::string format_probe_table(const ProbeResult& r);

/// The host calibration YAML (schema_version 1) with the template's `memory` pairs and,
/// with CUDA, its per-GPU `gpus` copy figures (local = the GPU's NUMA domain, remote =
/// the slowest domain of another socket).
[[nodiscard]] std::string probe_calibration_yaml(const ProbeResult& r);

}  // namespace gcsim::real
