#include "sim/placement/node_state.hpp"

#include "sim/placement/job_shape.hpp"  // partition_node_order

#include <algorithm>
#include <bit>
#include <stdexcept>

namespace gcsim {

bool CoreBits::any(int first, int last) const {
  bool found = false;
  for_words(first, last, [&](int w, uint64_t mask) { return found = (w_[w] & mask) != 0; });
  return found;
}

int CoreBits::count(int first, int last) const {
  int n = 0;
  for_words(first, last, [&](int w, uint64_t mask) {
    n += std::popcount(w_[w] & mask);
    return false;
  });
  return n;
}

int CoreBits::count() const {
  int n = 0;
  for (size_t i = 0; i < core_words(n_); ++i) n += std::popcount(w_[i]);
  return n;
}

CoreMask::CoreMask(int cores, bool free) : w_(core_words(cores), 0), n_(cores) {
  if (free)
    for (int c = 0; c < cores; ++c) set(c, true);
}

void CoreMask::set(int c, bool free) {
  const uint64_t bit = 1ULL << (c & 63);
  if (free) {
    w_[static_cast<size_t>(c >> 6)] |= bit;
  } else {
    w_[static_cast<size_t>(c >> 6)] &= ~bit;
  }
}

bool Allocation::gpu_tasks_numa_local(const Cluster& c) const {
  for (const auto& na : nodes) {
    const NodeTemplate& t = c.tmpl(na.node);
    for (const auto& b : na.bindings) {
      if (b.gpus.empty()) continue;
      auto gpu_domain = [&](int d) {
        return std::any_of(b.gpus.begin(), b.gpus.end(), [&](int g) { return t.gpus[g].numa == d; });
      };
      for (int core : b.cores)
        if (!gpu_domain(t.numa_of_core(core))) return false;
      if (b.mem_numa >= 0 && !gpu_domain(b.mem_numa)) return false;
    }
  }
  return true;
}

// Records: first node, node count, tasks, memory (two words), flags (bit 0 whole
// node; bits 1-8 the GPU count; bits 9 and up the number of core runs), then each core
// run as (first core, length), then the GPU indices four to a word. GPU indices are
// below 64 (NodeState::gpu_free is one word).
namespace {

bool same_resources(const NodeAlloc& a, const NodeAlloc& b) {
  return a.tasks == b.tasks && a.mem_mb == b.mem_mb && a.whole_node == b.whole_node && a.cores == b.cores &&
         a.gpus == b.gpus;
}

}  // namespace

PackedAllocation::PackedAllocation(const Allocation& a) {
  for (size_t i = 0; i < a.nodes.size();) {
    const NodeAlloc& na = a.nodes[i];
    size_t k = i + 1;
    while (k < a.nodes.size() && a.nodes[k].node == a.nodes[k - 1].node + 1 && same_resources(na, a.nodes[k])) ++k;
    size_t runs = 0;
    for (size_t c = 0; c < na.cores.size(); ++c) runs += c == 0 || na.cores[c] != na.cores[c - 1] + 1;
    if (na.gpus.size() > 0xff || runs > (uint32_t{1} << 22))
      throw std::logic_error("allocation too large to pack");
    const size_t at = words_.size();
    words_.resize(at + 6 + 2 * runs + (na.gpus.size() + 3) / 4);
    uint32_t* w = words_.data() + at;
    w[0] = static_cast<uint32_t>(na.node);
    w[1] = static_cast<uint32_t>(k - i);
    w[2] = static_cast<uint32_t>(na.tasks);
    w[3] = static_cast<uint32_t>(static_cast<uint64_t>(na.mem_mb));
    w[4] = static_cast<uint32_t>(static_cast<uint64_t>(na.mem_mb) >> 32);
    w[5] = (na.whole_node ? 1U : 0U) | static_cast<uint32_t>(na.gpus.size()) << 1 | static_cast<uint32_t>(runs) << 9;
    uint32_t* r = w + 6;
    for (size_t c = 0; c < na.cores.size(); ++c) {
      if (c == 0 || na.cores[c] != na.cores[c - 1] + 1) {
        *r++ = static_cast<uint32_t>(na.cores[c]);
        *r++ = 1;
      } else {
        ++r[-1];
      }
    }
    for (size_t g = 0; g < na.gpus.size(); ++g) {
      if (na.gpus[g] < 0 || na.gpus[g] > 63) throw std::logic_error("GPU index out of range to pack");
      r[g / 4] |= static_cast<uint32_t>(na.gpus[g]) << (8 * (g % 4));
    }
    i = k;
  }
  words_.shrink_to_fit();
}

void PackedAllocation::unpack(Allocation& out) const {
  out.nodes.clear();
  for_each_node([&](const NodeView& v) {
    NodeAlloc& na = out.nodes.emplace_back();
    na.node = v.node;
    na.tasks = v.tasks;
    na.mem_mb = v.mem_mb;
    na.whole_node = v.whole_node;
    na.cores.reserve(static_cast<size_t>(v.cores));
    for (size_t q = 0; q < v.runs; ++q)
      for (uint32_t c = 0; c < v.core_runs[2 * q + 1]; ++c) na.cores.push_back(static_cast<int>(v.core_runs[2 * q] + c));
    for (int g = 0; g < v.gpus; ++g) na.gpus.push_back(v.gpu(g));
  });
}

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
  size_t words = 0;
  for (size_t i = 0; i < nodes_.size(); ++i) words += core_words(cluster.tmpl(static_cast<int>(i)).cores());
  core_words_.assign(words, 0);
  words = 0;
  for (size_t i = 0; i < nodes_.size(); ++i) {
    const auto& t = cluster.tmpl(static_cast<int>(i));
    auto& s = nodes_[i];
    s.core_word = static_cast<uint32_t>(words);
    for (int c = 0; c < t.cores(); ++c) core_words_[words + static_cast<size_t>(c >> 6)] |= 1ULL << (c & 63);
    words += core_words(t.cores());
    s.free_cores = t.cores();
    s.free_mem_mb = t.memory_mb;
    const int g = static_cast<int>(t.gpus.size());
    s.gpu_free = g >= 64 ? ~0ULL : ((1ULL << g) - 1);
    s.free_gpus = g;
    free_cores_total_ += s.free_cores;
    free_gpus_total_ += g;
    max_tpc_ = std::max(max_tpc_, t.threads_per_core);
    if (t.memory_mb > 0 && t.cores() > 0)
      mem_per_core_floor_ = std::min<int64_t>(mem_per_core_floor_, t.memory_mb / (int64_t{t.cores()} * t.threads_per_core));
  }
  open_.assign(core_words(static_cast<int>(nodes_.size())), 0);
  word_free_.assign(open_.size(), 0);
  free_of_.assign(nodes_.size(), 0);
  for (size_t i = 0; i < nodes_.size(); ++i) {
    free_of_[i] = nodes_[i].free_cores;
    if (nodes_[i].free_cores > 0) open_[i >> 6] |= 1ULL << (i & 63);
    word_free_[i >> 6] += nodes_[i].free_cores;
  }
  auto orders = std::make_shared<PartitionOrders>();
  for (size_t p = 0; p < cluster.partitions.size(); ++p) {
    PartitionOrders::Part part;
    part.order = partition_node_order(cluster, static_cast<int>(p));
    part.ascending = std::is_sorted(part.order.begin(), part.order.end()) &&
                     std::adjacent_find(part.order.begin(), part.order.end()) == part.order.end();
    part.members.assign(open_.size(), 0);
    for (int n : part.order) part.members[static_cast<size_t>(n) >> 6] |= 1ULL << (n & 63);
    orders->parts.push_back(std::move(part));
  }
  orders_ = std::move(orders);
}

ClusterState ClusterState::summary_of(const ClusterState& o) { return {o, Summary{}}; }

ClusterState::ClusterState(const ClusterState& o, Summary /*tag*/)
    : cluster_(o.cluster_),
      open_(o.open_),
      word_free_(o.word_free_),
      free_of_(o.free_of_),
      orders_(o.orders_),
      free_cores_total_(o.free_cores_total_),
      free_gpus_total_(o.free_gpus_total_),
      max_tpc_(o.max_tpc_),
      mem_heavy_(o.mem_heavy_),
      mem_per_core_floor_(o.mem_per_core_floor_),
      changes_(o.changes_) {}

namespace {

/// ClusterState::memory_heavy with the node's template at hand.
bool heavy(const NodeAlloc& na, const NodeTemplate& t) {
  return t.memory_mb > 0 && na.mem_mb * t.cores() > static_cast<int64_t>(na.cores.size()) * t.memory_mb;
}

}  // namespace

bool ClusterState::memory_heavy(const NodeAlloc& na) const { return heavy(na, cluster_->tmpl(na.node)); }

namespace {

/// f(word, mask) once per word of `words` that `cores` touch, with the mask of those
/// cores: a whole node's cores are one or two word updates, not one per core (the
/// per-core read-modify-write chain was most of backfill's future-state building).
template <class F>
void for_core_words(uint64_t* words, const std::vector<int>& cores, F f) {
  size_t i = 0;
  while (i < cores.size()) {
    const int w = cores[i] >> 6;
    uint64_t m = 0;
    for (; i < cores.size() && cores[i] >> 6 == w; ++i) m |= 1ULL << (cores[i] & 63);
    f(words[w], m);
  }
}

}  // namespace

bool ClusterState::fits(const Allocation& a) const {
  if (summary()) {  // its counters only
    for (const auto& na : a.nodes)
      if (free_of_[static_cast<size_t>(na.node)] < static_cast<int>(na.cores.size())) return false;
    return free_gpus_total_ >= a.gpus();
  }
  for (const auto& na : a.nodes) {
    const auto& s = nodes_[na.node];
    if (na.whole_node && s.jobs > 0) return false;
    const uint64_t* w = core_words_.data() + s.core_word;
    for (int c : na.cores)
      if (!(w[c >> 6] >> (c & 63) & 1U)) return false;
    for (int g : na.gpus)
      if (!(s.gpu_free >> g & 1)) return false;
    if (cluster_->tmpl(na.node).memory_mb > 0 && na.mem_mb > s.free_mem_mb) return false;
  }
  return true;
}

void ClusterState::allocate(const Allocation& a) {
  if (!fits(a)) throw std::logic_error("allocation of resources that are not free");
  if (summary()) {
    count(a, -1);
    return;
  }
  ++changes_;
  for (const auto& na : a.nodes) {
    auto& s = nodes_[na.node];
    for_core_words(core_words_.data() + s.core_word, na.cores, [](uint64_t& w, uint64_t m) { w &= ~m; });
    s.free_cores -= static_cast<int>(na.cores.size());
    free_of_[static_cast<size_t>(na.node)] = s.free_cores;
    word_free_[static_cast<size_t>(na.node) >> 6] -= static_cast<int64_t>(na.cores.size());
    if (s.free_cores == 0) open_[static_cast<size_t>(na.node) >> 6] &= ~(1ULL << (na.node & 63));
    for (int g : na.gpus) s.gpu_free &= ~(1ULL << g);
    s.free_gpus -= static_cast<int>(na.gpus.size());
    if (const auto& t = cluster_->tmpl(na.node); t.memory_mb > 0) {
      s.free_mem_mb -= na.mem_mb;
      mem_heavy_ += heavy(na, t);
    }
    ++s.jobs;
    free_cores_total_ -= static_cast<int64_t>(na.cores.size());
    free_gpus_total_ -= static_cast<int64_t>(na.gpus.size());
  }
}

void ClusterState::count(const Allocation& a, int sign) {
  ++changes_;
  for (const auto& na : a.nodes) {
    const auto n = static_cast<size_t>(na.node);
    const int c = sign * static_cast<int>(na.cores.size());
    free_of_[n] += c;
    word_free_[n >> 6] += c;
    if (free_of_[n] > 0) open_[n >> 6] |= 1ULL << (n & 63);
    else open_[n >> 6] &= ~(1ULL << (n & 63));
    if (const auto& t = cluster_->tmpl(na.node); t.memory_mb > 0) mem_heavy_ -= sign * static_cast<int64_t>(heavy(na, t));
    free_cores_total_ += c;
    free_gpus_total_ += sign * static_cast<int64_t>(na.gpus.size());
  }
}

void ClusterState::release(const Allocation& a) {
  if (summary()) {
    count(a, 1);
    return;
  }
  ++changes_;
  for (const auto& na : a.nodes) {
    auto& s = nodes_[na.node];
    for_core_words(core_words_.data() + s.core_word, na.cores, [](uint64_t& w, uint64_t m) { w |= m; });
    s.free_cores += static_cast<int>(na.cores.size());
    free_of_[static_cast<size_t>(na.node)] = s.free_cores;
    word_free_[static_cast<size_t>(na.node) >> 6] += static_cast<int64_t>(na.cores.size());
    if (s.free_cores > 0) open_[static_cast<size_t>(na.node) >> 6] |= 1ULL << (na.node & 63);
    for (int g : na.gpus) s.gpu_free |= (1ULL << g);
    s.free_gpus += static_cast<int>(na.gpus.size());
    if (const auto& t = cluster_->tmpl(na.node); t.memory_mb > 0) {
      s.free_mem_mb += na.mem_mb;
      mem_heavy_ -= heavy(na, t);
    }
    --s.jobs;
    free_cores_total_ += static_cast<int64_t>(na.cores.size());
    free_gpus_total_ += static_cast<int64_t>(na.gpus.size());
  }
}


}  // namespace gcsim
