#include <charconv>
#include <map>
#include <set>

#include "sim/cluster/inventories.hpp"
#include "sim/core/input_file.hpp"

namespace gcsim {

namespace {

constexpr int64_t kGiB = int64_t{1} << 30;

std::optional<int64_t> parse_count(std::string_view s) {
  s = trim(s);
  int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || p != s.data() + s.size() || v < 0 || v > 1024) return std::nullopt;
  return v;
}

// "12GB" -> 12 GiB. std::nullopt when malformed.
std::optional<int64_t> parse_gpu_mem(std::string_view s) {
  s = trim(s);
  const std::string low = to_lower(s);
  if (low.size() < 3 || low.compare(low.size() - 2, 2, "gb") != 0) return std::nullopt;
  const auto n = parse_count(std::string_view(low).substr(0, low.size() - 2));
  if (!n || *n == 0) return std::nullopt;
  return *n * kGiB;
}

GpuSpec inferred_gpu(int64_t mem_bytes) {
  GpuSpec g;
  g.memory_bytes = mem_bytes;
  if (mem_bytes == 12 * kGiB) {
    g.gres_type = "p100";
    g.model = "Tesla P100 12GB (inferred from GPU memory; the trace names no model)";
  } else if (mem_bytes == 24 * kGiB) {
    g.gres_type = "p40";
    g.model = "Tesla P40 24GB (inferred from GPU memory; the trace names no model)";
  } else {
    g.gres_type = "gpu";
    g.model = "unknown (the trace names no GPU model)";
  }
  return g;
}

}  // namespace

NodeTemplate philly_default_node() {
  NodeTemplate t;
  t.name = "philly";
  t.sockets = 2;
  t.numa_per_socket = 1;
  t.cores_per_numa = 12;
  t.threads_per_core = 1;
  t.memory_mb = 256 * 1024;
  return t;
}

Cluster parse_philly_machines(const std::string& text, const std::string& path, const NodeTemplate& default_node,
                              Diagnostics& diags) {
  Diagnostics errs;
  const auto lines = split_lines(text);
  size_t first = 0;
  while (first < lines.size() && trim(lines[first]).empty()) ++first;
  if (first == lines.size())
    throw InputError(SourceLoc{path, 1, 1}, "empty machine list: expected a header 'machineId, number of GPUs'");
  const int header_line = static_cast<int>(first) + 1;
  const auto header = split(lines[first], ',');
  int c_id = -1, c_gpus = -1, c_mem = -1, c_vc = -1;
  for (size_t c = 0; c < header.size(); ++c) {
    const std::string h = to_lower(trim(header[c]));
    int* slot = h == "machineid" ? &c_id : h == "number of gpus" ? &c_gpus : h == "single gpu mem" ? &c_mem
                : h == "vc" ? &c_vc : nullptr;
    if (!slot) continue;  // the revised list's unnamed index column, or anything else
    if (*slot >= 0) {
      errs.error({path, header_line, static_cast<int>(header[c].data() - lines[first].data()) + 1},
                 "duplicate column '" + h + "'");
      continue;
    }
    *slot = static_cast<int>(c);
  }
  if (c_id < 0) errs.error({path, header_line, 1}, "missing column 'machineId'");
  if (c_gpus < 0) errs.error({path, header_line, 1}, "missing column 'number of GPUs'");
  errs.throw_if_errors();
  if (default_node.cores() <= 0 || default_node.memory_mb <= 0)
    throw InputError(SourceLoc{path, 0, 0}, "default node template needs cores and memory");

  Cluster cl;
  cl.name = "philly";
  cl.source = path;
  std::map<std::pair<int64_t, int64_t>, int> template_of;  // (GPUs, GPU memory) -> index
  std::map<std::string, int> partition_of;
  std::vector<std::string> node_vc;
  std::set<std::string> names;
  for (size_t ln = first + 1; ln < lines.size() && !errs.full(); ++ln) {
    const std::string_view line = lines[ln];
    const int lineno = static_cast<int>(ln) + 1;
    if (trim(line).empty()) continue;
    const auto f = split(line, ',');
    auto col_of = [&](int c) { return static_cast<int>(f[c].data() - line.data()) + 1; };
    if (f.size() != header.size()) {
      errs.error({path, lineno, 1}, "expected " + std::to_string(header.size()) + " fields, found " +
                                        std::to_string(f.size()));
      continue;
    }
    const std::string name(trim(f[c_id]));
    if (name.empty()) {
      errs.error({path, lineno, col_of(c_id)}, "empty machineId");
      continue;
    }
    if (!names.insert(name).second) {
      errs.error({path, lineno, col_of(c_id)}, "duplicate machineId '" + name + "'");
      continue;
    }
    const auto gpus = parse_count(f[c_gpus]);
    if (!gpus) {
      errs.error({path, lineno, col_of(c_gpus)},
                 "invalid GPU count '" + std::string(trim(f[c_gpus])) + "': expected an integer 0..1024");
      continue;
    }
    int64_t mem = 0;
    if (c_mem >= 0) {
      const auto m = parse_gpu_mem(f[c_mem]);
      if (!m) {
        errs.error({path, lineno, col_of(c_mem)},
                   "invalid GPU memory '" + std::string(trim(f[c_mem])) + "': expected e.g. 12GB");
        continue;
      }
      mem = *m;
    }
    const auto key = std::make_pair(*gpus, *gpus > 0 ? mem : 0);
    auto it = template_of.find(key);
    if (it == template_of.end()) {
      NodeTemplate t = default_node;
      t.name = "philly-" + std::to_string(*gpus) + "gpu" + (key.second > 0 ? "-" + std::to_string(key.second / kGiB) + "gb" : "");
      GpuSpec proto = default_node.gpus.empty() ? inferred_gpu(mem) : default_node.gpus.front();
      if (mem > 0) proto.memory_bytes = mem;
      proto.pcie_switch = -1;
      proto.bus_id.clear();
      t.gpus.clear();
      t.pcie_switches.clear();
      t.nvlink = NvlinkSpec{};
      const int domains = t.numa_domains();
      for (int64_t g = 0; g < *gpus; ++g) {
        GpuSpec s = proto;
        s.numa = static_cast<int>(g * domains / *gpus);
        t.gpus.push_back(s);
      }
      for (auto& nic : t.nics) nic.pcie_switch = -1;
      it = template_of.emplace(key, static_cast<int>(cl.templates.size())).first;
      cl.templates.push_back(std::move(t));
    }
    Node n;
    n.name = name;
    n.template_index = it->second;
    cl.nodes.push_back(std::move(n));
    node_vc.push_back(c_vc >= 0 ? std::string(trim(f[c_vc])) : std::string());
  }
  errs.throw_if_errors();
  if (cl.nodes.empty()) throw InputError(SourceLoc{path, header_line + 1, 1}, "no machines in machine list");

  for (size_t i = 0; i < cl.nodes.size(); ++i) {
    const std::string pname = c_vc >= 0 ? (node_vc[i].empty() ? "philly" : node_vc[i]) : "philly";
    auto [it, fresh] = partition_of.emplace(pname, static_cast<int>(cl.partitions.size()));
    if (fresh) {
      Partition p;
      p.name = pname;
      cl.partitions.push_back(std::move(p));
    }
    cl.partitions[it->second].nodes.push_back(static_cast<int>(i));
    cl.nodes[i].partitions = {it->second};
  }
  cl.partitions.front().is_default = true;
  cl.index();
  diags.note({path, 0, 0},
             "Philly machine list gives only GPUs per machine: CPUs, memory and NUMA layout are the default "
             "template's (" + std::to_string(default_node.total_sockets()) + " sockets x " +
                 std::to_string(default_node.cores_per_socket()) + " cores, " +
                 std::to_string(default_node.memory_mb / 1024) + " GiB); " +
                 (default_node.gpus.empty() ? "GPU types inferred from GPU memory" : "GPUs from the default template"));
  return cl;
}

Cluster read_philly_machines(const std::string& path, const NodeTemplate& default_node, Diagnostics& diags) {
  return parse_philly_machines(read_input_file(path), path, default_node, diags);
}

}  // namespace gcsim
