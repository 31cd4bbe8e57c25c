#include "sim/placement/node_state.hpp"

#include <algorithm>
#include <stdexcept>

namespace gcsim {

int64_t Allocation::cores() const {
  int64_t t = 0;
  for (const auto& n : nodes) t += static_cast<int64_t>(n.cores.size());
  return t;
}
int64_t Allocation::gpus() const {
  int64_t t = 0;
  for (const auto& n : nodes) t += static_cast<int64_t>(n.gpus.size());
  return t;
}
int64_t Allocation::tasks() const {
  int64_t t = 0;
  for (const auto& n : nodes) t += n.tasks;
  return t;
}

ClusterState::ClusterState(const Cluster& cluster) : cluster_(&cluster) {
  nodes_.resize(cluster.nodes.size());
  for (size_t i = 0; i < nodes_.size(); ++i) {
    const auto& t = cluster.tmpl(static_cast<int>(i));
    auto& s = nodes_[i];
    s.core_free.assign(t.cores(), 1);
    s.free_cores = t.cores();
    s.free_mem_mb = t.memory_mb;
    const int g = static_cast<int>(t.gpus.size());
    s.gpu_free = g >= 64 ? ~0ULL : ((1ULL << g) - 1);
    s.free_gpus = g;
    free_cores_total_ += s.free_cores;
    free_gpus_total_ += g;
    max_tpc_ = std::max(max_tpc_, t.threads_per_core);
  }
}

bool ClusterState::fits(const Allocation& a) const {
  for (const auto& na : a.nodes) {
    const auto& s = nodes_[na.node];
    if (na.whole_node && s.jobs > 0) return false;
    for (int c : na.cores)
      if (!s.core_free[c]) return false;
    for (int g : na.gpus)
      if (!(s.gpu_free >> g & 1)) return false;
    if (cluster_->tmpl(na.node).memory_mb > 0 && na.mem_mb > s.free_mem_mb) return false;
  }
  return true;
}

void ClusterState::allocate(const Allocation& a) {
  if (!fits(a)) throw std::logic_error("allocation of resources that are not free");
  for (const auto& na : a.nodes) {
    auto& s = nodes_[na.node];
    for (int c : na.cores) s.core_free[c] = 0;
    s.free_cores -= static_cast<int>(na.cores.size());
    for (int g : na.gpus) s.gpu_free &= ~(1ULL << g);
    s.free_gpus -= static_cast<int>(na.gpus.size());
    if (cluster_->tmpl(na.node).memory_mb > 0) s.free_mem_mb -= na.mem_mb;
    ++s.jobs;
    free_cores_total_ -= static_cast<int64_t>(na.cores.size());
    free_gpus_total_ -= static_cast<int64_t>(na.gpus.size());
  }
}

void ClusterState::release(const Allocation& a) {
  for (const auto& na : a.nodes) {
    auto& s = nodes_[na.node];
    for (int c : na.cores) s.core_free[c] = 1;
    s.free_cores += static_cast<int>(na.cores.size());
    for (int g : na.gpus) s.gpu_free |= (1ULL << g);
    s.free_gpus += static_cast<int>(na.gpus.size());
    if (cluster_->tmpl(na.node).memory_mb > 0) s.free_mem_mb += na.mem_mb;
    --s.jobs;
    free_cores_total_ += static_cast<int64_t>(na.cores.size());
    free_gpus_total_ += static_cast<int64_t>(na.gpus.size());
  }
}


}  // namespace gcsim
