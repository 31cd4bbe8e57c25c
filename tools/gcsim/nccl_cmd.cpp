// `gcsim nccl OP --topo F -b MIN -e MAX -f FACTOR`: the table nccl-tests would print for
// that collective on those GPUs, from the NCCL cost model, with the algorithm and
// protocol NCCL would choose.
#include <CLI/CLI.hpp>
#include <filesystem>
#include <iostream>

#include "models/collective/nccl_model.hpp"
#include "models/collective/nccl_tuning.hpp"
#include "tools/gcsim/cli_common.hpp"

namespace gcsim {

namespace {

namespace fs = std::filesystem;

struct NcclArgs {
  CLI::App* cmd = nullptr;
  std::string op, topo, gpu_model, tuning, algo, proto, transport = "ib", dtype = "float";
  std::string min_bytes = "32M", max_bytes = "32M", step_factor = "2";
  int nodes = 1, gpus_per_node = 0, gpus_per_process = 1;
  double nic_gbps = 0;
};

NcclArgs& args() {
  static NcclArgs a;
  return a;
}

// nccl-tests sizes: a byte count with an optional K, M or G suffix (powers of 1024).
int64_t parse_nccl_size(const std::string& s, const char* what) {
  const SourceLoc cli{"<command line>", 0, 0};
  size_t used = 0;
  long long v = -1;
  try {
    v = std::stoll(s, &used);
  } catch (const std::exception&) {
  }
  int64_t mult = 1;
  if (v >= 0 && used + 1 == s.size()) {
    switch (s.back()) {
      case 'K': case 'k': mult = 1LL << 10; break;
      case 'M': case 'm': mult = 1LL << 20; break;
      case 'G': case 'g': mult = 1LL << 30; break;
      default: v = -1;
    }
  } else if (used != s.size()) {
    v = -1;
  }
  if (v < 0) throw InputError(cli, std::string("invalid ") + what + " '" + s + "': expected bytes such as 8, 64K, 8G");
  return static_cast<int64_t>(v) * mult;
}

int cmd_nccl(const NcclArgs& a) {
  const SourceLoc cli{"<command line>", 0, 0};
  const auto op = parse_collective(a.op);
  if (!op) throw InputError(cli, "unknown collective '" + a.op + "' (all_reduce, all_gather, reduce_scatter, "
                                 "broadcast, reduce, alltoall, sendrecv)");
  ClusterArgs ca;
  ca.nodes = a.nodes;
  ca.gpu_model = a.gpu_model;
  ca.nic_gbps = a.nic_gbps;
  const Cluster cluster = load_cluster(a.topo, ca);
  if (a.nodes > static_cast<int>(cluster.nodes.size()))
    throw InputError(cli, "--nodes " + std::to_string(a.nodes) + " but " + a.topo + " has " +
                              std::to_string(cluster.nodes.size()) + " nodes");
  CommSpec spec;
  spec.cluster = &cluster;
  spec.options.gpus_per_process = a.gpus_per_process;
  spec.options.net_transport = a.transport;
  for (int n = 0; n < a.nodes; ++n) {
    const int have = static_cast<int>(cluster.tmpl(n).gpus.size());
    const int k = a.gpus_per_node > 0 ? a.gpus_per_node : have;
    if (k > have)
      throw InputError(cli, "--gpus-per-node " + std::to_string(k) + " but node " + cluster.nodes[n].name + " has " +
                                std::to_string(have) + " GPUs");
    for (int g = 0; g < k; ++g) spec.gpus.push_back({n, g});
  }
  if (spec.gpus.empty()) throw InputError(cli, a.topo + " has no GPUs");

  NcclTestsTableOptions opt;
  opt.dtype = a.dtype;
  if (!a.algo.empty()) {
    opt.algo = parse_nccl_algo(a.algo);
    if (!opt.algo) throw InputError(cli, "unknown --algo '" + a.algo + "' (Tree, Ring, CollNetDirect, CollNetChain, NVLS, NVLSTree, PAT)");
  }
  if (!a.proto.empty()) {
    opt.proto = parse_nccl_proto(a.proto);
    if (!opt.proto) throw InputError(cli, "unknown --proto '" + a.proto + "' (LL, LL128, Simple)");
  }
  const int64_t lo = parse_nccl_size(a.min_bytes, "-b");
  const int64_t hi = parse_nccl_size(a.max_bytes, "-e");
  const int64_t f = parse_nccl_size(a.step_factor, "-f");
  if (lo <= 0 || hi < lo) throw InputError(cli, "-b must be positive and at most -e");
  if (f < 2) throw InputError(cli, "-f must be at least 2");
  std::vector<int64_t> sizes;
  for (int64_t s = lo; s <= hi; s = s > hi / f ? hi + 1 : s * f) sizes.push_back(s);

  const NcclTuning tuning = load_nccl_tuning(a.tuning.empty() ? shipped_config("nccl/default.yaml") : a.tuning);
  std::unique_ptr<NcclModel> model;
  try {
    model = std::make_unique<NcclModel>(tuning, spec);
  } catch (const std::invalid_argument& e) {
    throw InputError(SourceLoc{a.topo, 0, 0}, e.what());
  }
  std::cout << format_nccl_tests_table(*model, spec, *op, sizes, opt);
  return 0;
}

}  // namespace

void add_nccl_commands(CLI::App& app) {
  NcclArgs& a = args();
  a = NcclArgs{};
  a.cmd = app.add_subcommand("nccl", "predict an nccl-tests table (time, algbw, busbw) for a collective on a topology");
  a.cmd->add_option("op", a.op, "all_reduce, all_gather, reduce_scatter, broadcast, reduce, alltoall, sendrecv")->required();
  a.cmd->add_option("--topo", a.topo, "anything --cluster takes, incl. a pasted nvidia-smi topo -m")->required();
  a.cmd->add_option("--gpu-model", a.gpu_model, "GPU model an nvidia-smi matrix does not name");
  a.cmd->add_option("--nodes", a.nodes, "nodes in the communicator")->capture_default_str();
  a.cmd->add_option("--gpus-per-node", a.gpus_per_node, "GPUs per node (default: all of them)");
  a.cmd->add_option("--nic-gbps", a.nic_gbps, "NIC line rate an nvidia-smi matrix does not give");
  a.cmd->add_option("-b,--minbytes", a.min_bytes, "smallest size (8, 64K, 8G)")->capture_default_str();
  a.cmd->add_option("-e,--maxbytes", a.max_bytes, "largest size")->capture_default_str();
  a.cmd->add_option("-f,--stepfactor", a.step_factor, "multiplication factor between sizes")->capture_default_str();
  a.cmd->add_option("-g,--ngpus", a.gpus_per_process, "GPUs one process drives (nccl-tests -g)")->capture_default_str();
  a.cmd->add_option("-d,--datatype", a.dtype, "element type (float, half, bfloat16, double, int8, ...)")->capture_default_str();
  a.cmd->add_option("--algo", a.algo, "force NCCL_ALGO");
  a.cmd->add_option("--proto", a.proto, "force NCCL_PROTO");
  a.cmd->add_option("--transport", a.transport, "network transport: ib, socket, tcpxo")->capture_default_str();
  a.cmd->add_option("--tuning", a.tuning, "NCCL tuning YAML (default configs/nccl/default.yaml)");
}

int run_nccl_command() {
  const NcclArgs& a = args();
  if (a.cmd && *a.cmd) return cmd_nccl(a);
  return -1;
}

}  // namespace gcsim
