// What the gcsim subcommands share: the exit status for bad input and the one
// loader for every cluster description `--cluster` takes.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "sim/cluster/cluster.hpp"
#include "sim/workload/job.hpp"

namespace CLI {
class App;
}

namespace gcsim {

constexpr int kExitBadInput = 2;

struct ClusterArgs {
  int nodes = 1;            // copies of an imported single-node description
  std::string gpu_model;    // what an nvidia-smi matrix does not say
  double nic_gbps = 0;
};

[[nodiscard]] bool ends_with(const std::string& s, std::string_view suf);

/// Native YAML, slurm.conf (+ gres.conf and topology.conf beside it), hwloc XML, NCCL
/// topology XML, `nvidia-smi topo -m` text, and the inventories that ship with GPU
/// traces (Alibaba v2023 node lists, Philly machine lists).
[[nodiscard]] Cluster load_cluster(const std::string& path, const ClusterArgs& ca = {});

/// --from/--to/--scale-arrivals, shared by `run` and the trace tools.
struct WindowArgs {
  std::string from, to;
  double scale_arrivals = 1.0;
};
void add_window_options(CLI::App* c, WindowArgs& w);
/// Resolves the window against the trace (dates need its unix_start) and applies it.
void apply_window_args(Trace& t, const WindowArgs& w);

/// A file shipped in configs/ (`rel` below it): beside the build directory of this
/// binary, else in the source tree it was built from.
[[nodiscard]] std::string shipped_config(const std::string& rel);

/// `gcsim trace stats|convert|gen`: registers the subcommands on `app`; after parsing,
/// run_trace_command() runs the one that was given (returns -1 when none was).
void add_trace_commands(CLI::App& app);
int run_trace_command();

/// `gcsim nccl`: the same pattern.
void add_nccl_commands(CLI::App& app);
int run_nccl_command();

/// `gcsim calibrate nccl`: the same pattern.
void add_calibrate_commands(CLI::App& app);
int run_calibrate_command();

/// `gcsim topo`'s output for a cluster: the nvidia-smi matrix, gres.conf or NodeName lines.
int cmd_topo(const Cluster& c, const std::string& node, const std::string& format);

/// `gcsim real topo|place|exec|bind|probe` (tools/gcsim/real_cmd.cpp). run_cli hands the
/// words after `--` over with set_real_command before parsing the rest.
void add_real_commands(CLI::App& app);
void set_real_command(std::vector<std::string> cmd);
int run_real_command();

/// `gcsim compare` (tools/gcsim/compare_cmd.cpp): the same pattern; `argv` goes to the manifest.
void add_compare_commands(CLI::App& app);
int run_compare_command(const std::vector<std::string>& argv);
/// `gcsim sweep` (tools/gcsim/sweep_cmd.cpp): the same pattern.
void add_sweep_commands(CLI::App& app);
int run_sweep_command(const std::vector<std::string>& argv);

}  // namespace gcsim
