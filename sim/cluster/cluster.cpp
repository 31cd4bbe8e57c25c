#include "sim/cluster/cluster.hpp"

#include <set>

#include "sim/core/input_file.hpp"

namespace gcsim {

int Cluster::default_partition() const {
  for (size_t i = 0; i < partitions.size(); ++i)
    if (partitions[i].is_default) return static_cast<int>(i);
  return partitions.empty() ? -1 : 0;
}

int Cluster::find_partition(const std::string& n) const {
  for (size_t i = 0; i < partitions.size(); ++i)
    if (partitions[i].name == n) return static_cast<int>(i);
  return -1;
}

int Cluster::find_node(const std::string& n) const {
  auto it = node_index_.find(n);
  return it == node_index_.end() ? -1 : it->second;
}

int64_t Cluster::total_cores() const {
  int64_t t = 0;
  for (const auto& n : nodes) t += templates[n.template_index].cores();
  return t;
}

int64_t Cluster::total_cpus() const {
  int64_t t = 0;
  for (const auto& n : nodes) t += templates[n.template_index].cpus();
  return t;
}

int64_t Cluster::total_gpus() const {
  int64_t t = 0;
  for (const auto& n : nodes) t += static_cast<int64_t>(templates[n.template_index].gpus.size());
  return t;
}

std::vector<std::string> Cluster::gpu_types() const {
  std::set<std::string> s;
  for (const auto& t : templates)
    for (const auto& g : t.gpus) s.insert(g.gres_type);
  return {s.begin(), s.end()};
}

void Cluster::index() {
  node_index_.clear();
  for (size_t i = 0; i < nodes.size(); ++i) node_index_[nodes[i].name] = static_cast<int>(i);
}

Cluster make_cpu_cluster(const std::string& name, int nodes, int cores_per_node, const std::string& source) {
  NodeTemplate t;
  t.name = "cpu";
  t.cores_per_numa = cores_per_node;
  t.memory_mb = 0;  // not modelled
  return make_homogeneous_cluster(name, t, nodes, source, "n");
}

Cluster make_homogeneous_cluster(const std::string& name, NodeTemplate node, int nodes, const std::string& source,
                                 const std::string& prefix) {
  Cluster c;
  c.name = name;
  c.source = source;
  c.templates.push_back(std::move(node));
  Partition p;
  p.name = "batch";
  p.is_default = true;
  const int width = nodes >= 1000 ? 4 : 3;
  for (int i = 0; i < nodes; ++i) {
    Node n;
    std::string num = std::to_string(i + 1);
    while (static_cast<int>(num.size()) < width) num = "0" + num;
    n.name = prefix + num;
    n.partitions = {0};
    c.nodes.push_back(n);
    p.nodes.push_back(i);
  }
  c.partitions.push_back(p);
  c.index();
  return c;
}

std::optional<std::string> Cluster::slurm_param(const std::string& key) const {
  for (const auto& [k, v] : slurm_params)
    if (to_lower(k) == to_lower(key)) return v;
  return std::nullopt;
}

SourceLoc Cluster::slurm_param_loc(const std::string& key) const {
  for (const auto& [k, loc] : slurm_param_locs)
    if (to_lower(k) == to_lower(key)) return loc;
  return SourceLoc{source, 0, 0};
}

}  // namespace gcsim
