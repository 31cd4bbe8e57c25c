#include "sim/cluster/sinfo.hpp"

#include <algorithm>
#include <array>
#include <set>
#include <vector>

namespace gcsim {

namespace {

/// `0-1`, `0,2-3`: a sorted set of integers as Slurm prints ranges.
std::string format_ranges(const std::set<int>& values) {
  std::string out;
  for (auto it = values.begin(); it != values.end();) {
    const int lo = *it;
    int hi = lo;
    auto next = std::next(it);
    while (next != values.end() && *next == hi + 1) {
      hi = *next;
      ++next;
    }
    if (!out.empty()) out += ',';
    out += std::to_string(lo);
    if (hi != lo) out += '-' + std::to_string(hi);
    it = next;
  }
  return out;
}

/// `gpu:a100_80gb:8(S:0-1)`, one entry per GPU type in template order, comma-separated;
/// `(null)` for a node without GPUs.
std::string format_gres(const NodeTemplate& t) {
  std::vector<std::string> types;
  for (const auto& g : t.gpus)
    if (std::find(types.begin(), types.end(), g.gres_type) == types.end()) types.push_back(g.gres_type);
  if (types.empty()) return "(null)";
  std::string out;
  for (const auto& type : types) {
    int count = 0;
    std::set<int> sockets;
    for (const auto& g : t.gpus) {
      if (g.gres_type != type) continue;
      ++count;
      sockets.insert(t.socket_of_numa(g.numa));
    }
    if (!out.empty()) out += ',';
    out += "gpu:" + type + ":" + std::to_string(count) + "(S:" + format_ranges(sockets) + ")";
  }
  return out;
}

}  // namespace

std::string format_sinfo(const Cluster& cluster) {
  using Row = std::array<std::string, 5>;
  std::vector<Row> rows;
  rows.push_back({"NODELIST", "PARTITION", "CPUS", "MEMORY", "GRES"});
  const int def = cluster.default_partition();
  for (size_t i = 0; i < cluster.nodes.size(); ++i) {
    const Node& n = cluster.nodes[i];
    const NodeTemplate& t = cluster.templates[n.template_index];
    const std::string gres = format_gres(t);
    for (int p : n.partitions) {
      std::string part = cluster.partitions[p].name;
      if (p == def && cluster.partitions[p].is_default) part += '*';
      rows.push_back({n.name, part, std::to_string(t.cpus()), std::to_string(t.memory_mb), gres});
    }
  }
  // Each column as wide as its widest entry plus one separating space; the last column
  // is not padded, so lines carry no trailing blanks.
  std::array<size_t, 5> width{};
  for (const auto& r : rows)
    for (size_t c = 0; c < r.size(); ++c) width[c] = std::max(width[c], r[c].size());
  std::string out;
  for (const auto& r : rows) {
    for (size_t c = 0; c < r.size(); ++c) {
      out += r[c];
      if (c + 1 < r.size()) out.append(width[c] + 1 - r[c].size(), ' ');
    }
    out += '\n';
  }
  return out;
}

}  // namespace gcsim
