#include "tools/gcsim/app.hpp"
#include "tools/gcsim/cli_common.hpp"
#include "tools/gcsim/interrupt.hpp"
#include "tools/gcsim/run_core.hpp"

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>

#include "models/collective/nccl_tuning.hpp"
#include "models/host/host_model.hpp"
#include "models/placement/placement.hpp"
#include "models/runtime/step_runtime.hpp"
#include "models/sched/registry.hpp"
#include "sim/cluster/cluster_yaml.hpp"
#include "sim/cluster/import_node.hpp"
#include "sim/cluster/inventories.hpp"
#include "sim/cluster/inventory_alibaba.hpp"
#include "sim/cluster/import_slurm_conf.hpp"
#include "sim/cluster/sinfo.hpp"
#include "sim/cluster/topo_views.hpp"
#include "sim/core/hostlist.hpp"
#include "sim/core/input_file.hpp"
#include "sim/io/json_writer.hpp"
#include "sim/io/run_outputs.hpp"
#include "sim/metrics/summary.hpp"
#include "sim/placement/allocator.hpp"
#include "sim/sched/simulation.hpp"
#include "sim/workload/slurm_time.hpp"
#include "sim/workload/trace_readers.hpp"

namespace gcsim {

namespace {

Cluster from_node(NodeTemplate t, const std::string& path, const ClusterArgs& ca, Diagnostics& warnings) {
  if (t.name.empty()) t.name = "imported";
  std::cerr << warnings.format();
  return make_homogeneous_cluster(t.name, std::move(t), std::max(1, ca.nodes), path);
}

}  // namespace

bool ends_with(const std::string& s, std::string_view suf) {
  return s.size() >= suf.size() && s.compare(s.size() - suf.size(), suf.size(), suf) == 0;
}

std::string shipped_config(const std::string& rel) {
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const auto near = exe.parent_path() / ".." / "configs" / rel;
    if (std::filesystem::exists(near)) return near.lexically_normal().string();
  }
  return std::string(GCSIM_SOURCE_DIR) + "/configs/" + rel;
}

Cluster load_cluster(const std::string& path, const ClusterArgs& ca) {
  if (ends_with(path, ".yaml") || ends_with(path, ".yml")) return load_cluster_yaml(path);
  Diagnostics warnings;
  if (ends_with(path, ".conf")) {
    Cluster c = load_slurm_conf(path, warnings);
    std::cerr << warnings.format();
    return c;
  }
  {
    // Inventories that ship with GPU traces.
    const std::string text = read_input_file(path);
    const std::string head = text.substr(0, text.find('\n'));
    if (head.rfind("sn,", 0) == 0 && head.find("cpu_milli") != std::string::npos) {
      Cluster c = parse_alibaba_v2023_nodes(text, path, warnings);
      std::cerr << warnings.format();
      return c;
    }
    if (head.rfind("machineId", 0) == 0 || head.rfind(",machineId", 0) == 0) {
      Cluster c = parse_philly_machines(text, path, philly_default_node(), warnings);
      std::cerr << warnings.format();
      return c;
    }
  }
  NodeImportOptions opt;
  opt.gpu_model = ca.gpu_model;
  opt.nic_bandwidth_bps = ca.nic_gbps * 1e9;
  if (auto t = import_node_description(path, opt, warnings)) return from_node(std::move(*t), path, ca, warnings);
  throw InputError(SourceLoc{path, 0, 0},
                   "unknown cluster format (expected YAML, slurm.conf, hwloc XML, NCCL topology XML or "
                   "nvidia-smi topo -m text)");
}

namespace {

struct RunArgs {
  RunSpec spec;
  std::string out = "runs/latest";
  bool no_progress = false;
  std::vector<std::string> set;
};

int cmd_run(RunArgs a, const std::vector<std::string>& argv) {
  apply_set_options(a.spec, a.set);
  auto p = prepare_run(a.spec, argv);
  for (const auto& d : p->warnings.all()) std::cerr << d.str() << "\n";
  if (p->inferred)
    std::cerr << "gcsim: note: no --cluster given; inferred " << p->cluster.nodes.size() << " nodes x "
              << p->cluster.templates[0].cores() << " cores (CPU only, memory not modelled) from "
              << (a.spec.nodes > 0 || a.spec.cores_per_node > 0 ? "--nodes/--cores-per-node" : "the SWF header")
              << "\n";
  ProgressBar bar(!a.no_progress && ::isatty(STDERR_FILENO));
  StagedDir out(a.out);  // refuses an --out that is not a gcsim output, before simulating
  const RunOutput r = execute_run(
      *p, out.path(), [&](size_t done, size_t total) { bar.update(done, total); }, interrupt_flag());
  out.publish();
  report_interrupt(a.out);
  // Jobs no node can ever run were rejected at submission, as sbatch refuses them; say
  // where each came from (the full list is rejected.txt).
  size_t rejected = 0;
  for (size_t j = 0; j < r.outcomes.size(); ++j) {
    if (r.outcomes[j].status != JobStatus::kRejected) continue;
    if (++rejected > 10) continue;
    const Job& job = p->trace.jobs[j];
    std::cerr << Diagnostic{Severity::kWarning, SourceLoc{a.spec.trace, job.source_line, 0},
                            "job '" + job.name + "' can never run here and was rejected: " + r.outcomes[j].reject_reason}
                     .str()
              << "\n";
  }
  if (rejected > 10)
    std::cerr << a.spec.trace << ": warning: " << rejected - 10 << " more jobs rejected (" << a.out
              << "/rejected.txt lists all " << rejected << ")\n";
  print_run_summary(*p, r, a.out);
  return exit_status_after_interrupt(r.result.completed ? 0 : 1);
}

// Node names of each template, as one hostlist per template (cluster order).
std::vector<std::pair<int, std::string>> template_groups(const Cluster& c) {
  std::vector<std::pair<int, std::string>> out;
  for (size_t t = 0; t < c.templates.size(); ++t) {
    std::vector<std::string> names;
    for (const auto& n : c.nodes)
      if (n.template_index == static_cast<int>(t)) names.push_back(n.name);
    if (!names.empty()) out.emplace_back(static_cast<int>(t), hostlist::compress(names));
  }
  return out;
}

}  // namespace

int cmd_topo(const Cluster& c, const std::string& node, const std::string& format) {
  std::vector<std::pair<int, std::string>> groups;
  if (!node.empty()) {
    const int n = c.find_node(node);
    if (n < 0) {
      std::cerr << "gcsim: error: no node '" << node << "' in " << c.source << "\n";
      return kExitBadInput;
    }
    groups.emplace_back(c.nodes[n].template_index, node);
  } else {
    groups = template_groups(c);
  }
  for (size_t i = 0; i < groups.size(); ++i) {
    const auto& [t, names] = groups[i];
    const NodeTemplate& tmpl = c.templates[t];
    if (format == "gres") {
      std::cout << format_gres_conf(tmpl, names);
    } else if (format == "slurm") {
      std::cout << format_slurm_node(tmpl, names) << (format_slurm_node(tmpl, names).ends_with("\n") ? "" : "\n");
    } else {
      if (groups.size() > 1) std::cout << (i ? "\n" : "") << "# " << names << "\n";
      const std::string m = format_nvidia_smi_topo(tmpl);
      std::cout << (m.empty() ? std::string("(no GPUs)\n") : m);
    }
  }
  return 0;
}

int run_cli(const std::vector<std::string>& args) {
  CLI::App app{"gcsim: a discrete-event simulator of GPU clusters run by Slurm", "gcsim"};
  app.require_subcommand(1);
  app.set_version_flag("--version", gcsim_version() + " (" + gcsim_git_sha() + ")");

  RunArgs ra;
  auto* run = app.add_subcommand("run", "simulate a trace on a cluster and write a run directory");
  add_run_spec_options(run, ra.spec, ra.set);
  run->add_option("--out", ra.out, "run directory to write (jobs.sacct, summary.json, manifest.json)")
      ->capture_default_str();
  run->add_flag("--no-progress", ra.no_progress, "never draw the progress bar");

  std::string sinfo_cluster;
  auto* sinfo = app.add_subcommand("sinfo", "print the per-node breakdown as sinfo -N -o \"%N %P %c %m %G\" does");
  sinfo->add_option("--cluster", sinfo_cluster, "cluster description (.yaml)")->required();

  std::string topo_cluster, topo_node, topo_format = "matrix";
  ClusterArgs topo_ca;
  auto* topo = app.add_subcommand("topo", "print a node's topology: the nvidia-smi topo -m matrix, gres.conf or slurm.conf lines");
  topo->add_option("--cluster", topo_cluster, "cluster description")->required();
  topo->add_option("--node", topo_node, "node name (default: one node of each template)");
  topo->add_option("--format", topo_format, "matrix (nvidia-smi topo -m), gres (gres.conf) or slurm (NodeName line)")
      ->check(CLI::IsMember({"matrix", "gres", "slurm"}))
      ->capture_default_str();
  topo->add_option("--nodes", topo_ca.nodes, "copies of an imported single-node description")->capture_default_str();
  topo->add_option("--gpu-model", topo_ca.gpu_model, "GPU model an nvidia-smi matrix does not name");
  topo->add_option("--nic-gbps", topo_ca.nic_gbps, "NIC line rate an nvidia-smi matrix does not give");

  auto* policies = app.add_subcommand("policies", "list the scheduling policies and their parameters");
  add_trace_commands(app);
  add_nccl_commands(app);
  add_calibrate_commands(app);
  add_real_commands(app);
  add_compare_commands(app);
  add_sweep_commands(app);

  // `gcsim real exec|bind ... -- CMD ARGS`: the command is not for CLI11.
  std::vector<std::string> own = args;
  if (args.size() > 2 && args[1] == "real") {
    auto dd = std::find(own.begin(), own.end(), "--");
    if (dd != own.end()) {
      set_real_command(std::vector<std::string>(dd + 1, own.end()));
      own.erase(dd, own.end());
    }
  }
  std::vector<std::string> rev(own.rbegin(), own.rend() - 1);
  try {
    app.parse(rev);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // The form every other input error takes (CLI11 would add "Run with --help").
    std::cerr << "<command line>: error: " << e.what() << "\n";
    return kExitBadInput;
  }
  try {
    if (*run) return cmd_run(ra, args);
    if (const int rc = run_trace_command(); rc >= 0) return rc;
    if (const int rc = run_nccl_command(); rc >= 0) return rc;
    if (const int rc = run_calibrate_command(); rc >= 0) return rc;
    if (const int rc = run_real_command(); rc >= 0) return rc;
    if (const int rc = run_compare_command(args); rc >= 0) return rc;
    if (const int rc = run_sweep_command(args); rc >= 0) return rc;
    if (*sinfo) {
      std::cout << format_sinfo(load_cluster(sinfo_cluster));
      return 0;
    }
    if (*topo) return cmd_topo(load_cluster(topo_cluster, topo_ca), topo_node, topo_format);
    if (*policies) {
      for (const auto& p : policy_list()) {
        std::cout << p.name << "\t" << p.summary << "\n";
        auto pol = make_policy(p.name);
        for (const auto& [k, v] : pol->parameters()) std::cout << "    " << k << " = " << v << "\n";
      }
      return 0;
    }
  } catch (const InputError& e) {
    std::cerr << e.diagnostics().format();
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::cerr << "gcsim: error: " << e.what() << "\n";
    return kExitBadInput;
  }
  return 0;
}

}  // namespace gcsim
