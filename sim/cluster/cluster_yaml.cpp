#include "sim/cluster/cluster_yaml.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <initializer_list>
#include <limits>
#include <optional>
#include <map>
#include <set>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/cluster/import_node.hpp"
#include "sim/core/hostlist.hpp"
#include "sim/core/input_file.hpp"
#include "sim/core/units.hpp"
#include "sim/core/yaml_check.hpp"

namespace gcsim {

namespace {

class Loader : public YamlChecker {
 public:
  using YamlChecker::YamlChecker;
  using Entry = YamlEntry;

  // --- sections -------------------------------------------------------------------------

  void load(const YAML::Node& root, Cluster& c);

 private:
  void load_defaults(const Entry& e, Cluster& c);
  void load_templates(const Entry& e, Cluster& c);
  void load_template(const YAML::Node& key, const YAML::Node& node, NodeTemplate& t);
  void import_template(const YAML::Node& key, const YAML::Node& node, NodeTemplate& t);
  void load_pcie_switches(const Entry& e, NodeTemplate& t);
  void load_gpus(const Entry& e, NodeTemplate& t);
  void load_nvlink(const Entry& e, NodeTemplate& t, const std::string& tname);
  void load_nics(const Entry& e, NodeTemplate& t);
  /// The NUMA and PCIe switch of a device entry (GPU or NIC); false on error.
  bool device_attachment(const std::map<std::string, Entry>& m, const YAML::Node& node, const NodeTemplate& t,
                         const std::string& what, int& numa, int& sw);
  void load_nodes(const Entry& e, Cluster& c);
  void load_partitions(const Entry& e, Cluster& c);
  void load_network(const Entry& e, Cluster& c);
  /// Node indices named by a hostlist (or ALL); unknown names are reported.
  std::optional<std::vector<int>> resolve_nodes(const Entry& e, const Cluster& c, const std::string& owner,
                                                bool allow_all);

  std::map<std::string, int> template_index_;
  std::map<std::string, int> node_line_;  // node name -> line of its node set
  std::map<std::string, int> node_index_;  // node name -> index in Cluster::nodes, once nodes are read
  bool shape_ok_ = true;                  // the current template's sockets/NUMA counts are valid
};

const std::vector<std::string> kTopKeys = {"schema_version", "name",  "description", "defaults",
                                           "node_templates", "nodes", "partitions",  "network"};
const std::vector<std::string> kDefaultsKeys = {"def_mem_per_cpu", "def_mem_per_gpu"};
const std::vector<std::string> kTemplateKeys = {
    "description",      "boards", "sockets", "numa_per_socket", "cores_per_numa", "threads_per_core",
    "memory",           "pcie_switches", "gpus", "nvlink", "nics"};
const std::vector<std::string> kImportKeys = {"description", "import", "gpu_model", "gres_type", "memory", "sockets"};
const std::vector<std::string> kSwitchKeys = {"name", "numa", "gen", "width"};
const std::vector<std::string> kGpuKeys = {"type", "model", "memory", "numa", "pcie_switch", "count"};
const std::vector<std::string> kNvlinkKeys = {"kind", "links_per_gpu", "link_bandwidth", "pairs"};
const std::vector<std::string> kNicKeys = {"name", "speed", "numa", "pcie_switch", "count"};
const std::vector<std::string> kNodeSetKeys = {"names", "count", "template", "weight", "features"};
const std::vector<std::string> kPartitionKeys = {"name",        "nodes",        "default", "max_time",
                                                 "default_time", "priority_tier"};
const std::vector<std::string> kNetworkKeys = {"kind", "nodes_per_leaf", "link", "oversubscription",
                                               "hop_latency", "switches"};
const std::vector<std::string> kNetSwitchKeys = {"name", "nodes", "switches", "uplink"};

void Loader::load(const YAML::Node& root, Cluster& c) {
  if (root.IsNull()) {
    diags_.error({path_, 0, 0}, "empty cluster description");
    return;
  }
  if (!root.IsMap()) {
    error(root, "expected a map at the top level, got " + describe(root));
    return;
  }
  auto top = map_of(root, "cluster description", kTopKeys);

  if (const Entry* e = require(top, root, "schema_version", "cluster description")) {
    if (auto v = get_int(*e, 0, 1'000'000)) {
      if (*v != 1)
        error(e->value, "unsupported schema_version " + std::to_string(*v) + " (this gcsim reads 1)");
      else
        c.schema_version = 1;
    }
  }
  if (const Entry* e = require(top, root, "name", "cluster description"))
    if (auto v = get_string(*e)) c.name = *v;
  if (const Entry* e = find(top, "description")) scalar_or_error(*e, "a string");
  if (const Entry* e = find(top, "defaults")) load_defaults(*e, c);
  if (const Entry* e = require(top, root, "node_templates", "cluster description")) load_templates(*e, c);
  if (const Entry* e = require(top, root, "nodes", "cluster description")) load_nodes(*e, c);
  if (const Entry* e = require(top, root, "partitions", "cluster description")) load_partitions(*e, c);
  if (const Entry* e = find(top, "network")) load_network(*e, c);
}

void Loader::load_defaults(const Entry& e, Cluster& c) {
  auto m = map_of(e.value, "defaults", kDefaultsKeys);
  if (const Entry* x = find(m, "def_mem_per_cpu"))
    if (auto v = get_bytes(*x)) c.def_mem_per_cpu_mb = units::bytes_to_mib(*v);
  if (const Entry* x = find(m, "def_mem_per_gpu"))
    if (auto v = get_bytes(*x)) c.def_mem_per_gpu_mb = units::bytes_to_mib(*v);
}

void Loader::load_templates(const Entry& e, Cluster& c) {
  if (!e.value.IsMap()) {
    error(e.value.IsNull() ? e.key_node : e.value,
          "expected a map of template name to spec for 'node_templates', got " + describe(e.value));
    return;
  }
  std::map<std::string, int> first_line;
  for (auto it = e.value.begin(); it != e.value.end(); ++it) {
    const YAML::Node k = it->first;
    if (!k.IsScalar() || k.Scalar().empty()) {
      error(k, "expected a template name");
      continue;
    }
    const std::string name = k.Scalar();
    if (auto prev = first_line.find(name); prev != first_line.end()) {
      error(k, "duplicate node template " + quote(name) + " (first defined at line " +
                   std::to_string(prev->second) + ")");
      continue;
    }
    first_line[name] = line_of(k);
    NodeTemplate t;
    t.name = name;
    if (it->second.IsMap() && it->second["import"]) {
      import_template(k, it->second, t);
    } else {
      load_template(k, it->second, t);
    }
    template_index_[name] = static_cast<int>(c.templates.size());
    c.templates.push_back(std::move(t));
  }
  if (c.templates.empty()) error(e.key_node, "no node templates defined");
}

// `import: FILE` (hwloc XML, NCCL topology XML or nvidia-smi topo -m), relative to
// this YAML file, with optional `gpu_model`, `gres_type` and `memory` overrides.
void Loader::import_template(const YAML::Node& key, const YAML::Node& node, NodeTemplate& t) {
  auto m = map_of(node, "imported node template", kImportKeys);
  const Entry* x = find(m, "import");
  const auto file = x ? get_string(*x) : std::nullopt;
  if (!file) return;
  std::string full = *file;
  if (!full.empty() && full.front() != '/') {
    const size_t slash = path_.rfind('/');
    if (slash != std::string::npos) full = path_.substr(0, slash + 1) + full;
  }
  NodeImportOptions opt;
  if (const Entry* g = find(m, "gpu_model"))
    if (auto v = get_string(*g)) opt.gpu_model = *v;
  if (const Entry* so = find(m, "sockets"))
    if (auto v = get_int32(*so, 1, 64)) opt.sockets = *v;
  Diagnostics warnings;
  try {
    auto imported = import_node_description(full, opt, warnings);
    if (!imported) {
      error(x->value, "cannot import " + quote(*file) +
                          ": not an hwloc XML, NCCL topology XML or nvidia-smi topo -m file");
      return;
    }
    const std::string name = t.name;
    t = std::move(*imported);
    t.name = name;
  } catch (const InputError& e) {
    for (const auto& d : e.diagnostics().all())
      if (d.severity == Severity::kError) error(x->value, "in imported " + quote(*file) + ": " + d.str());
    return;
  }
  if (const Entry* g = find(m, "gres_type"))
    if (auto v = get_string(*g))
      for (auto& gpu : t.gpus) gpu.gres_type = *v;
  if (const Entry* mem = find(m, "memory"))
    if (auto v = get_bytes(*mem)) t.memory_mb = units::bytes_to_mib(*v);
  (void)key;
}

void Loader::load_template(const YAML::Node& key, const YAML::Node& node, NodeTemplate& t) {
  const std::string& name = t.name;
  const std::string what = "node template";
  auto m = map_of(node, what, kTemplateKeys);
  if (!node.IsMap()) return;
  const std::string req_what = "node template " + quote(name);
  const size_t errors_before = diags_.error_count();
  if (const Entry* x = find(m, "description")) scalar_or_error(*x, "a string");
  if (const Entry* x = find(m, "boards"))
    if (auto v = get_int32(*x, 1, 64)) t.boards = *v;
  if (const Entry* x = require(m, node, "sockets", req_what, &key))
    if (auto v = get_int32(*x, 1, 64)) t.sockets = *v;
  if (const Entry* x = find(m, "numa_per_socket"))
    if (auto v = get_int32(*x, 1, 64)) t.numa_per_socket = *v;
  if (const Entry* x = require(m, node, "cores_per_numa", req_what, &key))
    if (auto v = get_int32(*x, 1, 4096)) t.cores_per_numa = *v;
  if (const Entry* x = find(m, "threads_per_core"))
    if (auto v = get_int32(*x, 1, 16)) t.threads_per_core = *v;
  // NUMA indexes are checked only against a shape that was itself valid.
  shape_ok_ = diags_.error_count() == errors_before;
  if (shape_ok_) {
    const int64_t cpus = int64_t{t.boards} * t.sockets * t.numa_per_socket * t.cores_per_numa * t.threads_per_core;
    if (cpus > kMaxNodeCpus) {
      error(key, "node template " + quote(name) + " has " + std::to_string(cpus) + " CPUs; a node has at most " +
                     std::to_string(kMaxNodeCpus) + " (Slurm counts a node's CPUs in 16 bits)");
      shape_ok_ = false;
    }
  }
  if (const Entry* x = require(m, node, "memory", req_what, &key)) {
    if (auto v = get_bytes(*x)) {
      t.memory_mb = units::bytes_to_mib(*v);
      if (t.memory_mb <= 0) error(x->value, "'memory' must be at least 1MiB");
    }
  }
  // Switches first: GPUs and NICs refer to them by name.
  if (const Entry* x = find(m, "pcie_switches")) load_pcie_switches(*x, t);
  if (const Entry* x = find(m, "gpus")) load_gpus(*x, t);
  if (const Entry* x = find(m, "nvlink")) load_nvlink(*x, t, name);
  if (const Entry* x = find(m, "nics")) load_nics(*x, t);
}

void Loader::load_pcie_switches(const Entry& e, NodeTemplate& t) {
  if (!sequence_or_error(e)) return;
  for (const auto& item : e.value) {
    auto m = map_of(item, "PCIe switch entry", kSwitchKeys);
    if (!item.IsMap()) continue;
    PcieSwitchSpec s;
    bool ok = true;
    if (const Entry* x = require(m, item, "name", "PCIe switch entry")) {
      if (auto v = get_string(*x)) {
        s.name = *v;
        for (const auto& other : t.pcie_switches)
          if (other.name == s.name) {
            error(x->value, "duplicate PCIe switch name " + quote(s.name));
            ok = false;
          }
      } else {
        ok = false;
      }
    } else {
      ok = false;
    }
    if (const Entry* x = require(m, item, "numa", "PCIe switch entry")) {
      if (auto v = get_int32(*x, 0)) {
        if (shape_ok_ && *v >= t.numa_domains()) {
          error(x->value, "NUMA index " + std::to_string(*v) + " out of range (the template has " +
                              std::to_string(t.numa_domains()) + " NUMA domains: 0-" +
                              std::to_string(t.numa_domains() - 1) + ")");
        } else {
          s.numa = *v;
        }
      }
    }
    if (const Entry* x = find(m, "gen"))
      if (auto v = get_int32(*x, 1, 7)) s.gen = *v;
    if (const Entry* x = find(m, "width")) {
      if (auto v = get_int32(*x, 1, 32)) {
        if (*v != 1 && *v != 2 && *v != 4 && *v != 8 && *v != 16 && *v != 32)
          error(x->value, "'width' must be 1, 2, 4, 8, 16 or 32 lanes, got " + std::to_string(*v));
        else
          s.width = *v;
      }
    }
    // Keep entries with a bad name out so that references to them are reported as unknown
    // only when the name really is unknown.
    if (ok) t.pcie_switches.push_back(std::move(s));
  }
}

bool Loader::device_attachment(const std::map<std::string, Entry>& m, const YAML::Node& node,
                               const NodeTemplate& t, const std::string& what, int& numa, int& sw) {
  sw = -1;
  numa = -1;
  bool ok = true;
  if (const Entry* x = find(m, "pcie_switch")) {
    if (auto v = get_string(*x)) {
      for (size_t i = 0; i < t.pcie_switches.size(); ++i)
        if (t.pcie_switches[i].name == *v) sw = static_cast<int>(i);
      if (sw < 0) {
        std::vector<std::string> names;
        for (const auto& s : t.pcie_switches) names.push_back(s.name);
        error(x->value, "unknown PCIe switch " + quote(*v) + did_you_mean(*v, names));
        ok = false;
      }
    } else {
      ok = false;
    }
  }
  if (const Entry* x = find(m, "numa")) {
    if (auto v = get_int32(*x, 0)) {
      if (shape_ok_ && *v >= t.numa_domains()) {
        error(x->value, "NUMA index " + std::to_string(*v) + " out of range (the template has " +
                            std::to_string(t.numa_domains()) + " NUMA domains: 0-" +
                            std::to_string(t.numa_domains() - 1) + ")");
        ok = false;
      } else {
        numa = *v;
        if (sw >= 0 && t.pcie_switches[sw].numa != numa) {
          error(x->value, what + " on NUMA " + std::to_string(numa) + " but its PCIe switch " +
                              quote(t.pcie_switches[sw].name) + " hangs off NUMA " +
                              std::to_string(t.pcie_switches[sw].numa));
          ok = false;
        }
      }
    } else {
      ok = false;
    }
  } else if (sw >= 0) {
    numa = t.pcie_switches[sw].numa;  // inherits the switch's NUMA domain
  } else if (ok) {
    error(node, "missing required key 'numa' in " + what + " entry (or a 'pcie_switch' to take it from)");
    ok = false;
  }
  return ok && numa >= 0;
}

void Loader::load_gpus(const Entry& e, NodeTemplate& t) {
  if (!sequence_or_error(e)) return;
  for (const auto& item : e.value) {
    auto m = map_of(item, "GPU entry", kGpuKeys);
    if (!item.IsMap()) continue;
    GpuSpec g;
    int count = 1;
    if (const Entry* x = require(m, item, "type", "GPU entry"))
      if (auto v = get_string(*x)) g.gres_type = *v;
    if (const Entry* x = find(m, "model"))
      if (auto v = get_string(*x)) g.model = *v;
    if (const Entry* x = require(m, item, "memory", "GPU entry"))
      if (auto v = get_bytes(*x)) g.memory_bytes = *v;
    if (const Entry* x = find(m, "count"))
      if (auto v = get_int32(*x, 1, 1024)) count = *v;
    if (!device_attachment(m, item, t, "GPU", g.numa, g.pcie_switch)) g.numa = 0;
    for (int i = 0; i < count; ++i) t.gpus.push_back(g);
  }
}

void Loader::load_nvlink(const Entry& e, NodeTemplate& t, const std::string& tname) {
  auto m = map_of(e.value, "nvlink", kNvlinkKeys);
  if (!e.value.IsMap()) return;
  const Entry* kind = require(m, e.value, "kind", "nvlink");
  if (!kind) return;
  auto k = get_string(*kind);
  if (!k) return;
  NvlinkSpec& nv = t.nvlink;
  if (*k == "none") {
    nv.kind = NvlinkKind::kNone;
  } else if (*k == "nvswitch") {
    nv.kind = NvlinkKind::kNvswitch;
  } else if (*k == "pairs") {
    nv.kind = NvlinkKind::kPairs;
  } else {
    error(kind->value, "unknown nvlink kind " + quote(*k) + unknown_choice(*k, {"none", "nvswitch", "pairs"}));
    return;
  }
  if (nv.kind == NvlinkKind::kNone) {
    for (const char* key : {"links_per_gpu", "link_bandwidth", "pairs"})
      if (const Entry* x = find(m, key)) error(x->key_node, quote(key) + " does not apply to nvlink kind 'none'");
    return;
  }
  if (t.gpus.size() < 2)
    error(kind->value, "nvlink kind " + quote(*k) + " in node template " + quote(tname) + " needs at least 2 GPUs");
  if (const Entry* x = require(m, e.value, "link_bandwidth", "nvlink"))
    if (auto v = get_bandwidth(*x)) nv.link_bandwidth_bps = *v;
  if (nv.kind == NvlinkKind::kNvswitch) {
    if (const Entry* x = require(m, e.value, "links_per_gpu", "nvlink"))
      if (auto v = get_int32(*x, 1, 64)) nv.links_per_gpu = *v;
    if (const Entry* x = find(m, "pairs")) error(x->key_node, "'pairs' only applies to nvlink kind 'pairs'");
    return;
  }
  // kPairs
  if (const Entry* x = find(m, "links_per_gpu"))
    if (auto v = get_int32(*x, 1, 64)) nv.links_per_gpu = *v;
  const Entry* pairs = require(m, e.value, "pairs", "nvlink");
  if (!pairs || !sequence_or_error(*pairs)) return;
  const int ngpu = static_cast<int>(t.gpus.size());
  std::set<std::pair<int, int>> seen;
  for (const auto& p : pairs->value) {
    auto bad = [&](const YAML::Node& at, const std::string& why) { error(at, "bad nvlink pair: " + why); };
    if (!p.IsSequence() || p.size() != 3) {
      bad(p, "expected [gpu_a, gpu_b, links], got " + describe(p));
      continue;
    }
    int v[3] = {0, 0, 0};
    bool ok = true;
    for (size_t i = 0; i < 3; ++i) {
      const YAML::Node n = p[i];
      Entry tmp{i == 2 ? "links" : (i == 0 ? "gpu_a" : "gpu_b"), n, n};
      auto x = get_int32(tmp, i == 2 ? 1 : 0, 1024);
      if (!x) {
        ok = false;
        continue;
      }
      if (i < 2 && *x >= ngpu) {
        error(n, "GPU index " + std::to_string(*x) + " out of range in nvlink pair (the template has " +
                     std::to_string(ngpu) + " GPUs" + (ngpu > 0 ? ": 0-" + std::to_string(ngpu - 1) : "") +
                     ")");
        ok = false;
        continue;
      }
      v[i] = *x;
    }
    if (!ok) continue;
    if (v[0] == v[1]) {
      bad(p, "a GPU cannot link to itself");
      continue;
    }
    const auto key = std::minmax(v[0], v[1]);
    if (!seen.insert(key).second) {
      bad(p, "GPUs " + std::to_string(key.first) + " and " + std::to_string(key.second) + " are listed twice");
      continue;
    }
    nv.pairs.push_back({v[0], v[1], v[2]});
  }
}

void Loader::load_nics(const Entry& e, NodeTemplate& t) {
  if (!sequence_or_error(e)) return;
  for (const auto& item : e.value) {
    auto m = map_of(item, "NIC entry", kNicKeys);
    if (!item.IsMap()) continue;
    NicSpec nic;
    std::vector<std::string> names;
    if (const Entry* x = require(m, item, "name", "NIC entry")) {
      if (auto v = get_hostlist(*x)) names = *v;
      if (const Entry* c = find(m, "count")) {
        if (auto n = get_int32(*c, 1, 1024); n && !names.empty() && static_cast<int>(names.size()) != *n) {
          error(c->value, "'count' " + std::to_string(*n) + " does not match the " + count_of(names.size(), "name") +
                              " in " + quote(x->value.Scalar()) +
                              " (write the name as a range, e.g. 'mlx5_[0-1]')");
          names.clear();
        }
      }
      for (const auto& n : names)
        for (const auto& other : t.nics)
          if (other.name == n) error(x->value, "duplicate NIC name " + quote(n));
    }
    if (const Entry* x = require(m, item, "speed", "NIC entry"))
      if (auto v = get_bandwidth(*x)) nic.bandwidth_bps = *v;
    if (!device_attachment(m, item, t, "NIC", nic.numa, nic.pcie_switch)) nic.numa = 0;
    for (const auto& n : names) {
      nic.name = n;
      t.nics.push_back(nic);
    }
  }
}

void Loader::load_nodes(const Entry& e, Cluster& c) {
  if (!sequence_or_error(e)) return;
  if (e.value.size() == 0) {
    error(e.value, "no nodes defined");
    return;
  }
  std::vector<std::string> template_names;
  for (const auto& t : c.templates) template_names.push_back(t.name);
  for (const auto& item : e.value) {
    auto m = map_of(item, "node set", kNodeSetKeys);
    if (!item.IsMap()) continue;
    Node proto;
    bool ok = true;
    if (const Entry* x = require(m, item, "template", "node set")) {
      if (auto v = get_string(*x)) {
        auto it = template_index_.find(*v);
        if (it == template_index_.end()) {
          error(x->value, "unknown node template " + quote(*v) + did_you_mean(*v, template_names));
          ok = false;
        } else {
          proto.template_index = it->second;
        }
      } else {
        ok = false;
      }
    } else {
      ok = false;
    }
    if (const Entry* x = find(m, "weight"))
      if (auto v = get_int32(*x, 0, 2'000'000'000)) proto.weight = *v;
    if (const Entry* x = find(m, "features"))
      if (auto v = get_string_list(*x)) proto.features = *v;
    const Entry* names_entry = require(m, item, "names", "node set");
    std::optional<std::vector<std::string>> names;
    if (names_entry) names = get_hostlist(*names_entry);
    if (!names) continue;
    if (node_line_.size() + names->size() > max_cluster_nodes()) {
      error(names_entry->value, "the cluster would have more than " + std::to_string(max_cluster_nodes()) +
                                    " nodes with the " + count_of(names->size(), "name") + " of this set");
      return;
    }
    if (const Entry* x = find(m, "count")) {
      if (auto v = get_int32(*x, 0); v && *v != static_cast<int>(names->size())) {
        error(x->value, "'count' " + std::to_string(*v) + " does not match the " + count_of(names->size(), "name") +
                            " in " + quote(names_entry->value.Scalar()));
        ok = false;
      }
    }
    // Duplicates: within this set and against earlier sets.
    std::string first_dup;
    int first_dup_line = 0;
    size_t dups = 0;
    std::set<std::string> here;
    for (const auto& n : *names) {
      auto prev = node_line_.find(n);
      if (prev != node_line_.end() || here.count(n)) {
        if (dups++ == 0) {
          first_dup = n;
          first_dup_line = prev != node_line_.end() ? prev->second : line_of(names_entry->value);
        }
      }
      here.insert(n);
    }
    if (dups > 0) {
      std::string msg = "duplicate node name " + quote(first_dup) + " (first defined at line " +
                        std::to_string(first_dup_line) + ")";
      if (dups > 1) msg += " and " + std::to_string(dups - 1) + " more";
      error(names_entry->value, msg);
      ok = false;
    }
    const int line = line_of(names_entry->value);
    for (const auto& n : *names) node_line_.emplace(n, line);
    if (!ok) continue;
    for (const auto& n : *names) {
      Node node = proto;
      node.name = n;
      c.nodes.push_back(std::move(node));
    }
  }
  for (size_t i = 0; i < c.nodes.size(); ++i) node_index_.emplace(c.nodes[i].name, static_cast<int>(i));
}

std::optional<std::vector<int>> Loader::resolve_nodes(const Entry& e, const Cluster& c, const std::string& owner,
                                                      bool allow_all) {
  std::vector<int> out;
  if (allow_all && e.value.IsScalar() && e.value.Scalar() == "ALL") {
    for (size_t i = 0; i < c.nodes.size(); ++i) out.push_back(static_cast<int>(i));
    return out;
  }
  auto names = get_hostlist(e);
  if (!names) return std::nullopt;
  const std::map<std::string, int>& index = node_index_;
  std::string first_unknown;
  size_t unknown = 0;
  for (const auto& n : *names) {
    auto it = index.find(n);
    if (it == index.end()) {
      // A node whose set had errors was never added; do not report it twice.
      if (node_line_.count(n)) continue;
      if (unknown++ == 0) first_unknown = n;
      continue;
    }
    out.push_back(it->second);
  }
  if (unknown > 0) {
    std::string msg = owner + " names unknown node " + quote(first_unknown);
    if (unknown > 1) msg += " and " + std::to_string(unknown - 1) + " more";
    error(e.value, msg);
    return std::nullopt;
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

void Loader::load_partitions(const Entry& e, Cluster& c) {
  if (!sequence_or_error(e)) return;
  if (e.value.size() == 0) {
    error(e.value, "no partitions defined");
    return;
  }
  std::map<std::string, int> first_line;
  std::string default_name;
  int default_line = 0;
  for (const auto& item : e.value) {
    auto m = map_of(item, "partition", kPartitionKeys);
    if (!item.IsMap()) continue;
    Partition p;
    bool ok = true;
    if (const Entry* x = require(m, item, "name", "partition")) {
      if (auto v = get_string(*x)) {
        p.name = *v;
        if (auto prev = first_line.find(p.name); prev != first_line.end()) {
          error(x->value, "duplicate partition " + quote(p.name) + " (first defined at line " +
                              std::to_string(prev->second) + ")");
          ok = false;
        } else {
          first_line[p.name] = line_of(x->value);
        }
      } else {
        ok = false;
      }
    } else {
      ok = false;
    }
    const std::string owner = "partition " + quote(p.name);
    if (const Entry* x = require(m, item, "nodes", p.name.empty() ? std::string("partition") : owner)) {
      if (auto v = resolve_nodes(*x, c, owner, true))
        p.nodes = *v;
      else
        ok = false;
    } else {
      ok = false;
    }
    if (const Entry* x = find(m, "default")) {
      if (auto v = get_bool(*x); v && *v) {
        if (!default_name.empty()) {
          error(x->value, "more than one default partition (" + quote(default_name) + " at line " +
                              std::to_string(default_line) + " is already the default)");
        } else {
          p.is_default = true;
          default_name = p.name;
          default_line = line_of(x->value);
        }
      }
    }
    const Entry* max_time = find(m, "max_time");
    if (max_time)
      if (auto v = get_duration(*max_time, true)) p.max_time = *v;
    if (const Entry* x = find(m, "default_time")) {
      if (auto v = get_duration(*x, true)) {
        if (*v > p.max_time)
          error(x->value, "'default_time' " + x->value.Scalar() + " exceeds 'max_time' " + max_time->value.Scalar());
        else
          p.default_time = *v;
      }
    }
    if (const Entry* x = find(m, "priority_tier"))
      if (auto v = get_int32(*x, 0, 65533)) p.priority_tier = *v;
    if (!ok) continue;
    const int index = static_cast<int>(c.partitions.size());
    for (int n : p.nodes) c.nodes[n].partitions.push_back(index);
    c.partitions.push_back(std::move(p));
  }
}

void Loader::load_network(const Entry& e, Cluster& c) {
  auto m = map_of(e.value, "network", kNetworkKeys);
  if (!e.value.IsMap()) return;
  NetworkSpec& net = c.network;
  const Entry* kind = require(m, e.value, "kind", "network");
  if (!kind) return;
  auto k = get_string(*kind);
  if (!k) return;
  if (*k == "none") {
    net.kind = NetworkSpec::Kind::kNone;
  } else if (*k == "fat-tree") {
    net.kind = NetworkSpec::Kind::kFatTree;
  } else if (*k == "tree") {
    net.kind = NetworkSpec::Kind::kTree;
  } else {
    error(kind->value, "unknown network kind " + quote(*k) + unknown_choice(*k, {"fat-tree", "tree", "none"}));
    return;
  }
  auto not_for = [&](const char* key, const std::string& kinds) {
    if (const Entry* x = find(m, key)) error(x->key_node, quote(key) + " only applies to network kind " + kinds);
  };
  if (net.kind == NetworkSpec::Kind::kNone) {
    for (const char* key : {"nodes_per_leaf", "link", "oversubscription", "hop_latency", "switches"})
      if (const Entry* x = find(m, key)) error(x->key_node, quote(key) + " does not apply to network kind 'none'");
    return;
  }
  if (const Entry* x = find(m, "hop_latency"))
    if (auto v = get_duration(*x, false)) net.hop_latency = *v;
  if (net.kind == NetworkSpec::Kind::kFatTree) {
    not_for("switches", "'tree'");
    if (const Entry* x = require(m, e.value, "nodes_per_leaf", "network"))
      if (auto v = get_int32(*x, 1, 100000)) net.nodes_per_leaf = *v;
    if (const Entry* x = require(m, e.value, "link", "network"))
      if (auto v = get_bandwidth(*x)) net.link_bandwidth_bps = *v;
    if (const Entry* x = find(m, "oversubscription")) {
      if (auto v = get_double(*x)) {
        if (*v <= 0)
          error(x->value, "'oversubscription' must be positive, got " + x->value.Scalar());
        else
          net.oversubscription = *v;
      }
    }
    net.uplink_bandwidth_bps = net.nodes_per_leaf * net.link_bandwidth_bps / net.oversubscription;
    return;
  }
  // kTree
  not_for("nodes_per_leaf", "'fat-tree'");
  not_for("oversubscription", "'fat-tree'");
  if (const Entry* x = find(m, "link"))
    if (auto v = get_bandwidth(*x)) net.link_bandwidth_bps = *v;
  const Entry* sw = require(m, e.value, "switches", "network");
  if (!sw || !sequence_or_error(*sw)) return;
  std::map<std::string, int> first_line;
  std::vector<std::pair<std::string, YAML::Node>> child_refs;  // child name, where named
  std::map<int, std::string> leaf_of_node;
  for (const auto& item : sw->value) {
    auto sm = map_of(item, "network switch", kNetSwitchKeys);
    if (!item.IsMap()) continue;
    NetworkSpec::Switch s;
    if (const Entry* x = require(sm, item, "name", "network switch")) {
      if (auto v = get_string(*x)) {
        s.name = *v;
        if (auto prev = first_line.find(s.name); prev != first_line.end())
          error(x->value, "duplicate switch " + quote(s.name) + " (first defined at line " +
                              std::to_string(prev->second) + ")");
        else
          first_line[s.name] = line_of(x->value);
      }
    }
    const Entry* nodes = find(sm, "nodes");
    const Entry* children = find(sm, "switches");
    if (nodes && children) {
      error(children->key_node, "a switch has either 'nodes' or 'switches', not both");
    } else if (!nodes && !children) {
      error(item, "missing key 'nodes' or 'switches' in network switch");
    } else if (nodes) {
      if (auto v = resolve_nodes(*nodes, c, "switch " + quote(s.name), false)) {
        s.nodes = *v;
        for (int n : s.nodes) {
          auto [it, fresh] = leaf_of_node.emplace(n, s.name);
          if (!fresh) {
            error(nodes->value, "node " + quote(c.nodes[n].name) + " is already under switch " + quote(it->second));
            break;
          }
        }
      }
    } else if (auto v = get_hostlist(*children)) {
      s.children = *v;
      for (const auto& ch : s.children) child_refs.emplace_back(ch, children->value);
    }
    if (const Entry* x = find(sm, "uplink"))
      if (auto v = get_bandwidth(*x)) s.uplink_bandwidth_bps = *v;
    net.switches.push_back(std::move(s));
  }
  for (const auto& [name, where] : child_refs) {
    if (!first_line.count(name)) {
      std::vector<std::string> names;
      for (const auto& [n, l] : first_line) names.push_back(n);
      error(where, "unknown switch " + quote(name) + did_you_mean(name, names));
    }
  }
}

}  // namespace

Cluster parse_cluster_yaml(const std::string& text, const std::string& path) {
  Cluster c;
  c.source = path;
  load_yaml_checked(text, path, [&](const YAML::Node& root, Diagnostics& diags) { Loader(path, diags).load(root, c); });
  c.index();
  return c;
}

Cluster load_cluster_yaml(const std::string& path) { return parse_cluster_yaml(read_input_file(path), path); }

}  // namespace gcsim
