#include "models/sched/slurm_select.hpp"

#include <algorithm>
#include <bit>
#include <map>
#include <stdexcept>

namespace gcsim {

namespace {

struct Need {
  int tasks, nodes, max_nodes, gpus;
  [[nodiscard]] bool done() const { return tasks <= 0 && nodes <= 0 && gpus <= 0; }
};

Need initial_need(const JobShape& s) {
  return Need{s.tasks, s.nodes_min, s.fixed_nodes ? s.nodes_min : s.nodes_max, s.gpus_total};
}

/// Counts one more node against the need: it takes as many tasks as it can, keeping
/// one for each further node a fixed node count still requires.
void count_node(const JobShape& shape, Need& need, int cap_tasks, int cap_gpus) {
  int k = std::min(cap_tasks, need.tasks);
  if (shape.fixed_nodes && need.nodes > 1) k = std::min(k, std::max(1, need.tasks - (need.nodes - 1)));
  need.tasks -= std::max(k, 1);
  need.nodes -= 1;
  need.max_nodes -= 1;
  need.gpus -= std::min(cap_gpus, std::max(need.gpus, 0));
}

/// Whether nodes with these capacities could hold what is still needed.
template <typename It, typename Get>
bool holds_rest(const Need& need, It first, It last, Get get) {
  int64_t tasks = 0, gpus = 0, n = 0;
  for (It it = first; it != last; ++it) {
    tasks += get(*it).tasks;
    gpus += get(*it).gpus;
    ++n;
  }
  return tasks >= need.tasks && n >= need.nodes && gpus >= need.gpus;
}

/// choose_flat's order of sets: the lowest weight; then one that holds the rest, with
/// the fewest CPUs; else, none holding it, the most CPUs. True when set a (weight,
/// sufficient, CPUs) beats b; the first of equals is kept.
bool set_beats(int64_t a_weight, bool a_suff, int64_t a_cpus, int64_t b_weight, bool b_suff, int64_t b_cpus) {
  if (a_weight != b_weight) return a_weight < b_weight;
  if (a_suff != b_suff) return a_suff;
  return a_suff ? a_cpus < b_cpus : a_cpus > b_cpus;
}

/// A necessary condition for select() on a CPU-only shape, in one pass over plain
/// counters: the allowed nodes' free cores hold the tasks (one-node jobs: one node
/// alone). capacity() gives each node at most this many tasks, so a shape this rejects
/// is rejected there too, at many times the cost (most will-run batches fail).
/// `allowed_word(w)`: the allowed bits of node word w. Only open nodes are read.
template <class AllowedWord>
bool cores_may_hold(const JobShape& shape, const ClusterState& state, AllowedWord allowed_word) {
  const bool one_node = shape.nodes_max == 1;
  int64_t tasks = 0;
  const uint64_t* open = state.open_bits();
  for (size_t w = 0; w < state.node_words(); ++w) {
    if (open[w] == 0) continue;
    for (uint64_t bits = open[w] & allowed_word(w); bits != 0; bits &= bits - 1) {
      const int n = static_cast<int>(w * 64 + static_cast<size_t>(std::countr_zero(bits)));
      const int free = state.free_cores_by_node()[n];
      const int tpc = state.cluster().tmpl(n).threads_per_core;
      int k = free / std::max(1, cores_for_cpus(shape.cpus_per_task, tpc));
      if (shape.tasks_per_node > 0) k = std::min(k, shape.tasks_per_node);
      if (one_node) {
        if (k >= shape.tasks) return true;
        continue;
      }
      tasks += k;
      if (tasks >= shape.tasks) return true;
    }
  }
  return false;
}

/// Node word w of a 0/1 byte per node.
uint64_t byte_word(const std::vector<uint8_t>& allowed, size_t w) {
  uint64_t m = 0;
  const size_t end = std::min(allowed.size(), w * 64 + 64);
  for (size_t n = w * 64; n < end; ++n) m |= static_cast<uint64_t>(allowed[n] != 0) << (n & 63);
  return m;
}

}  // namespace

SlurmSelector::SlurmSelector(const Cluster& cluster, const SlurmSchedConfig& cfg) : cluster_(&cluster), cfg_(cfg) {
  // its allocations go to a simulation, which reads the bindings of GPU jobs only (as
  // run_core sets for the run's own allocator); kept, a 20-day Curie window's CPU task
  // bindings took 1.7 of its 2.9 GB
  placer_.keep_cpu_job_bindings(false);
  leaf_of_.assign(cluster.nodes.size(), -1);
  // slurm_sched_weight with no GPUs asked for: Weight, then 0xff less no near GPUs
  cpu_weight_.resize(cluster.nodes.size());
  tpc_.resize(cluster.nodes.size());
  for (size_t n = 0; n < cluster.nodes.size(); ++n) {
    cpu_weight_[n] = (static_cast<int64_t>(cluster.nodes[n].weight) << 8) | 0xff;
    tpc_[n] = cluster.tmpl(static_cast<int>(n)).threads_per_core;
    max_cores_ = std::max(max_cores_, cluster.tmpl(static_cast<int>(n)).cores());
  }
  words_.resize((cluster.nodes.size() + 63) / 64);
  for (size_t w = 0; w < words_.size(); ++w) {
    const size_t first = w * 64;
    if (first + 64 > cluster.nodes.size()) continue;
    PlainWord& pw = words_[w];
    pw.plain = true;
    pw.weight = cpu_weight_[first];
    pw.tpc = tpc_[first];
    for (size_t n = first; n < first + 64; ++n) {
      pw.plain = pw.plain && cpu_weight_[n] == pw.weight && tpc_[n] == pw.tpc;
      pw.max_cores = std::max(pw.max_cores, cluster.tmpl(static_cast<int>(n)).cores());
    }
  }
  if (cluster.network.kind == NetworkSpec::Kind::kTree)
    for (const auto& sw : cluster.network.switches) {
      if (sw.nodes.empty()) continue;
      leaf_nodes_.push_back(sw.nodes);
      for (int n : sw.nodes)
        if (leaf_of_[n] < 0) leaf_of_[n] = static_cast<int>(leaf_nodes_.size()) - 1;
    }
}

bool SlurmSelector::uses_topology(const JobShape& shape) const {
  if (!cfg_.topology_tree || leaf_nodes_.empty()) return false;
  return !cfg_.topo_optional || shape.switches > 0;
}

std::optional<SlurmSelector::Cap> SlurmSelector::capacity(const JobShape& shape, const ClusterState& state,
                                                          int node, bool first_pass) const {
  const auto& t = state.cluster().tmpl(node);
  const auto& s = state.node(node);
  if (shape.exclusive && s.jobs > 0) return std::nullopt;
  int k = std::min(max_tasks_on_node(shape, state, node), shape.tasks);
  if (shape.tasks_per_node > 0) {
    const int want = std::min(shape.tasks_per_node, shape.tasks);
    if (k < want) return std::nullopt;
    k = want;
  }
  if (k <= 0) return std::nullopt;
  const bool cpu_only = shape.cpu_only();
  const int G = cpu_only ? 0 : count_free_gpus_of_type(shape, state, node);
  auto gpus_for = [&](int tasks) {
    if (shape.gpus_per_node > 0) return shape.gpus_per_node;
    if (shape.gpus_per_task > 0) return shape.gpus_per_task * tasks;
    if (shape.gpus_total > 0) return std::min(G, shape.gpus_total);
    return 0;
  };
  if (shape.gpus_total > 0 && G == 0) return std::nullopt;
  // the slurm placer holds any count of CPU-only tasks up to max_tasks_on_node
  // (takes_any_cpu_count), so only shapes with GPUs are placed to find the count
  while (k > 0 && !(cpu_only && placer_.takes_any_cpu_count()) &&
         !placer_.fits_on_node_in_pass(shape, state, node, k, gpus_for(k), first_pass)) {
    if (shape.tasks_per_node > 0) return std::nullopt;
    --k;
  }
  if (k <= 0) return std::nullopt;
  // a one-node job needs a node that holds all of it (oracle topo-tree: n07 with 4 free
  // CPUs was not a candidate for an 8-task job; it ran on an idle leaf at once)
  if (shape.nodes_max == 1 && (k < shape.tasks || (shape.gpus_total > 0 && gpus_for(k) < shape.gpus_total)))
    return std::nullopt;
  Cap c;
  c.node = node;
  c.tasks = k;
  c.gpus = shape.gpus_total > 0 ? gpus_for(k) : 0;
  c.avail_cpus = s.free_cores * t.threads_per_core;
  c.weight = slurm_sched_weight(shape, state, node);
  return c;
}

std::vector<SlurmSelector::Cap> SlurmSelector::choose_flat(const JobShape& shape, const std::vector<Cap>& caps) const {
  Need need = initial_need(shape);
  std::vector<Cap> chosen;
  // consecutive runs of equal weight in node order, as [begin, end) ranges of `caps`;
  // a taken set becomes empty (begin = end)
  struct Set {
    size_t begin, end;
    int64_t cpus;  // each node counted with at most the CPUs the job needs
  };
  const int64_t job_cpus = std::max<int64_t>(1, shape.requested_cpus());
  std::vector<Set> sets;
  for (size_t i = 0; i < caps.size(); ++i) {
    if (i == 0 || caps[i].weight != caps[i - 1].weight || caps[i].node != caps[i - 1].node + 1)
      sets.push_back(Set{i, i, 0});
    sets.back().end = i + 1;
    // _cpus_to_use: an idle node alone is a tighter set than two half-used ones
    // (oracle: fairshare)
    sets.back().cpus += std::min<int64_t>(caps[i].avail_cpus, job_cpus);
  }
  auto take = [&](const Cap& c) {
    count_node(shape, need, c.tasks, c.gpus);
    chosen.push_back(c);
  };
  auto sufficient = [&](const Set& set) {
    return holds_rest(need, caps.begin() + static_cast<std::ptrdiff_t>(set.begin),
                      caps.begin() + static_cast<std::ptrdiff_t>(set.end), [](const Cap& c) -> const Cap& { return c; });
  };
  while (!need.done() && need.max_nodes > 0) {
    int best = -1;
    bool best_suff = false;
    for (size_t i = 0; i < sets.size(); ++i) {
      if (sets[i].begin == sets[i].end) continue;
      const bool suff = sufficient(sets[i]);
      const int64_t cpus = sets[i].cpus;
      const int64_t w = caps[sets[i].begin].weight;
      if (best < 0 || set_beats(w, suff, cpus, caps[sets[best].begin].weight, best_suff, sets[best].cpus)) {
        best = static_cast<int>(i);
        best_suff = suff;
      }
    }
    if (best < 0) break;
    Set& set = sets[best];
    bool took_one = false;
    if (need.nodes <= 1 && best_suff) {
      // best fit: the node with the fewest free CPUs that still holds the rest
      size_t pick = set.end;
      for (size_t i = set.begin; i < set.end; ++i)
        if (caps[i].tasks >= need.tasks && caps[i].gpus >= need.gpus &&
            (pick == set.end || caps[i].avail_cpus < caps[pick].avail_cpus))
          pick = i;
      if (pick != set.end) {
        take(caps[pick]);
        took_one = true;
      }
    }
    if (!took_one)
      for (size_t i = set.begin; i < set.end; ++i) {
        if (need.done() || need.max_nodes <= 0) break;
        take(caps[i]);
      }
    set.end = set.begin;
  }
  if (!need.done()) return {};
  return chosen;
}

std::vector<SlurmSelector::Cap> SlurmSelector::choose_topo(const JobShape& shape, const std::vector<Cap>& caps) const {
  Need need = initial_need(shape);
  std::vector<Cap> chosen;
  std::vector<uint8_t> taken(cluster_->nodes.size(), 0);
  auto take = [&](const Cap& c) {
    count_node(shape, need, c.tasks, c.gpus);
    taken[c.node] = 1;
    chosen.push_back(c);
  };
  auto sufficient = [&](const std::vector<const Cap*>& set) {
    return holds_rest(need, set.begin(), set.end(), [](const Cap* c) -> const Cap& { return *c; });
  };
  // only nodes under some switch (jobs cannot span disconnected trees)
  std::vector<const Cap*> all;
  for (const auto& c : caps)
    if (leaf_of_[c.node] >= 0) all.push_back(&c);
  if (!sufficient(all)) return {};
  // weight tiers: add whole tiers, lowest first, until sufficient; lower tiers are forced
  std::map<int64_t, std::vector<const Cap*>> tiers;
  for (const auto* c : all) tiers[c->weight].push_back(c);
  std::vector<const Cap*> forced, last, acc;
  for (auto& [w, v] : tiers) {
    forced.insert(forced.end(), last.begin(), last.end());
    last = v;
    acc.insert(acc.end(), v.begin(), v.end());
    if (sufficient(acc)) break;
  }
  std::sort(forced.begin(), forced.end(), [](const Cap* a, const Cap* b) { return a->node < b->node; });
  for (const auto* c : forced) {
    if (need.done() || need.max_nodes <= 0) break;
    take(*c);
  }
  std::vector<std::vector<const Cap*>> leaf_cands(leaf_nodes_.size());
  for (const auto* c : last) leaf_cands[leaf_of_[c->node]].push_back(c);
  for (auto& v : leaf_cands)
    std::sort(v.begin(), v.end(), [](const Cap* a, const Cap* b) { return a->node < b->node; });
  auto fill_leaf = [&](int leaf) {
    for (const auto* c : leaf_cands[leaf]) {
      if (need.done() || need.max_nodes <= 0) break;
      if (!taken[c->node]) take(*c);
    }
    leaf_cands[leaf].clear();
  };
  // leaves that already hold forced nodes first
  std::vector<uint8_t> used_leaf(leaf_nodes_.size(), 0);
  for (const auto& c : chosen) used_leaf[leaf_of_[c.node]] = 1;
  for (size_t l = 0; l < leaf_nodes_.size(); ++l)
    if (used_leaf[l] && !need.done()) fill_leaf(static_cast<int>(l));
  while (!need.done() && need.max_nodes > 0) {
    int best = -1;
    bool best_fit = false;
    size_t best_size = 0;
    for (size_t l = 0; l < leaf_cands.size(); ++l) {
      if (leaf_cands[l].empty()) continue;
      // 22.05 weighs a leaf by its nodes alone (CPUs join the test in 23.11): topo-tree
      // j044 (-n4, one CPU each) took n02's 2 free CPUs, the smallest leaf, then 2 of
      // n07's 4, in both runs.
      const bool fit = static_cast<int>(leaf_cands[l].size()) >= need.nodes;
      const size_t sz = leaf_cands[l].size();
      bool pick = best < 0;
      if (!pick) {
        if (fit && !best_fit) pick = true;
        else if (fit && best_fit && sz < best_size) pick = true;
        else if (!fit && !best_fit && sz > best_size) pick = true;
      }
      if (pick) {
        best = static_cast<int>(l);
        best_fit = fit;
        best_size = sz;
      }
    }
    if (best < 0) break;
    fill_leaf(best);
  }
  if (!need.done()) return {};
  std::sort(chosen.begin(), chosen.end(), [](const Cap& a, const Cap& b) { return a.node < b.node; });
  return chosen;
}

int SlurmSelector::leaf_count(const std::vector<Cap>& chosen) const {
  std::vector<int> leaves;
  for (const auto& c : chosen)
    if (leaf_of_[c.node] >= 0) leaves.push_back(leaf_of_[c.node]);
  std::sort(leaves.begin(), leaves.end());
  return static_cast<int>(std::unique(leaves.begin(), leaves.end()) - leaves.begin());
}

std::optional<Allocation> SlurmSelector::finish(const JobShape& shape, const ClusterState& state,
                                                const std::vector<Cap>& chosen_in, bool place, bool first_pass) const {
  std::vector<Cap> chosen = chosen_in;
  std::sort(chosen.begin(), chosen.end(), [](const Cap& a, const Cap& b) { return a.node < b.node; });
  const size_t n = chosen.size();
  std::vector<int> tasks(n, 0), gpus(n, 0);
  if (shape.tasks_per_node > 0) {
    int left = shape.tasks;
    for (size_t i = 0; i < n; ++i) {
      tasks[i] = std::min(shape.tasks_per_node, left);
      left -= tasks[i];
    }
    if (left > 0) return std::nullopt;
  } else {
    // tasks dealt cyclically over the nodes, up to what each can hold
    int left = shape.tasks;
    bool progress = true;
    while (left > 0 && progress) {
      progress = false;
      for (size_t i = 0; i < n && left > 0; ++i)
        if (tasks[i] < chosen[i].tasks) {
          ++tasks[i];
          --left;
          progress = true;
        }
    }
    if (left > 0) return std::nullopt;
  }
  int gleft = shape.gpus_total;
  for (size_t i = 0; i < n; ++i) {
    if (shape.gpus_per_node > 0) gpus[i] = shape.gpus_per_node;
    else if (shape.gpus_per_task > 0) gpus[i] = shape.gpus_per_task * tasks[i];
    else if (shape.gpus_total > 0) {
      gpus[i] = std::min(chosen[i].gpus, gleft);
      gleft -= gpus[i];
    }
  }
  if (gleft > 0) return std::nullopt;
  Allocation a;
  // a plan needs only nodes and counts where placing cannot fail (see capacity)
  const bool counts_only = !place && shape.cpu_only() && placer_.takes_any_cpu_count();
  for (size_t i = 0; i < n; ++i) {
    if (tasks[i] == 0) continue;
    if (counts_only) {
      NodeAlloc na;
      na.node = chosen[i].node;
      na.tasks = tasks[i];
      a.nodes.push_back(std::move(na));
      continue;
    }
    auto na = placer_.take_on_node_in_pass(shape, state, chosen[i].node, tasks[i], gpus[i], first_pass);
    if (!na) return std::nullopt;
    a.nodes.push_back(std::move(*na));
  }
  return a;
}

template <class AllowedWord>
bool SlurmSelector::choose_exact(const JobShape& shape, const ClusterState& state, AllowedWord allowed_word,
                                 std::vector<std::pair<int, int>>& ranges) const {
  // A set of choose_flat: nodes [first, last], all allowed and open, of one weight, with
  // the sums of the capacities the count path gives them (tasks min(free, job tasks),
  // CPUs min(free CPUs, job CPUs)). choose_flat takes a set whole, or one node of it,
  // so these sums are all its sufficiency test reads.
  struct Set {
    int first, last;
    int64_t tasks, cpus, weight;
  };
  thread_local std::vector<Set> sets;
  sets.clear();
  const int T = shape.tasks;
  const int64_t job_cpus = std::max<int64_t>(1, shape.requested_cpus());
  const uint64_t* open = state.open_bits();
  const int32_t* fc = state.free_cores_by_node();
  // the set being summed, in locals (summed through sets.back() it was a store per node)
  Set cur{-2, -2, 0, 0, 0};
  for (size_t w = 0; w < state.node_words(); ++w) {
    if (open[w] == 0) continue;
    const uint64_t in = open[w] & allowed_word(w);
    if (const PlainWord& pw = words_[w];
        pw.plain && T >= pw.max_cores && job_cpus >= int64_t{pw.max_cores} * pw.tpc) {
      // Nodes of one weight, none with more cores than the job's tasks or CPUs: the
      // min()s below are their free cores, so a run of consecutive open allowed nodes
      // adds its free cores, and a run of all 64 the word's sum.
      for (uint64_t bits = in; bits != 0;) {
        const int lo = std::countr_zero(bits);
        const int len = std::countr_one(bits >> lo);
        bits = len + lo >= 64 ? 0 : bits & (~uint64_t{0} << (lo + len));
        const int n = static_cast<int>(w * 64) + lo;
        if (n != cur.last + 1 || pw.weight != cur.weight) {
          if (cur.first >= 0) sets.push_back(cur);
          cur = Set{n, n, 0, 0, pw.weight};
        }
        cur.last = n + len - 1;
        int64_t free = 0;
        if (len == 64) {
          free = state.word_free_cores(w);
        } else {
          for (int k = n; k < n + len; ++k) free += fc[k];
        }
        cur.tasks += free;
        cur.cpus += free * pw.tpc;
      }
      continue;
    }
    for (uint64_t bits = in; bits != 0; bits &= bits - 1) {
      const int n = static_cast<int>(w * 64 + static_cast<size_t>(std::countr_zero(bits)));
      const int free = fc[n];
      const int64_t wt = cpu_weight_[n];
      if (n != cur.last + 1 || wt != cur.weight) {
        if (cur.first >= 0) sets.push_back(cur);
        cur = Set{n, n, 0, 0, wt};
      }
      cur.last = n;
      cur.tasks += std::min(free, T);
      cur.cpus += std::min<int64_t>(static_cast<int64_t>(free) * tpc_[n], job_cpus);
    }
  }
  if (cur.first >= 0) sets.push_back(cur);
  ranges.clear();
  if (sets.empty()) return false;
  Need need = initial_need(shape);
  auto tasks_of = [&](int n) { return std::min(fc[n], T); };
  while (!need.done() && need.max_nodes > 0) {
    int best = -1;
    bool best_suff = false;
    for (size_t i = 0; i < sets.size(); ++i) {
      const Set& set = sets[i];
      if (set.first > set.last) continue;
      const bool suff = set.tasks >= need.tasks && set.last - set.first + 1 >= need.nodes && 0 >= need.gpus;
      if (best < 0 || set_beats(set.weight, suff, set.cpus, sets[best].weight, best_suff, sets[best].cpus)) {
        best = static_cast<int>(i);
        best_suff = suff;
      }
    }
    if (best < 0) break;
    Set& set = sets[best];
    bool took_one = false;
    if (need.nodes <= 1 && best_suff && need.tasks <= max_cores_) {
      // best fit: the node with the fewest free CPUs that holds the rest (no GPUs here;
      // none does when the rest exceeds every node's cores)
      int pick = -1;
      int pick_cpus = 0;
      for (int n = set.first; n <= set.last; ++n) {
        const int free = fc[n];
        const int cpus = free * tpc_[n];
        if (std::min(free, T) >= need.tasks && 0 >= need.gpus && (pick < 0 || cpus < pick_cpus)) {
          pick = n;
          pick_cpus = cpus;
        }
      }
      if (pick >= 0) {
        count_node(shape, need, tasks_of(pick), 0);
        ranges.emplace_back(pick, pick);
        took_one = true;
      }
    }
    const int len = set.last - set.first + 1;
    if (!took_one && set.tasks <= need.tasks && len <= need.max_nodes) {
      // The set falls short of the rest, or just meets it: the loop below would take
      // all of it (each node at least one task, min(free, T) of them, summed in
      // set.tasks; the need stays undone until its last node).
      need.tasks -= static_cast<int>(set.tasks);
      need.nodes -= len;
      need.max_nodes -= len;
      ranges.emplace_back(set.first, set.last);
    } else if (!took_one) {
      // count_node for a shape with no fixed node count and no GPUs, inline (a big
      // job's plan walks thousands of nodes)
      int n = set.first;
      for (; n <= set.last && !need.done() && need.max_nodes > 0; ++n) {
        need.tasks -= std::max(std::min(tasks_of(n), need.tasks), 1);
        --need.nodes;
        --need.max_nodes;
      }
      if (n > set.first) ranges.emplace_back(set.first, n - 1);
    }
    set.last = set.first - 1;
  }
  if (!need.done()) {
    ranges.clear();
    return false;
  }
  // sets are disjoint runs: ordered by their first nodes, the ranges list nodes by id
  std::sort(ranges.begin(), ranges.end());
  return true;
}

std::optional<std::vector<std::pair<int, int>>> SlurmSelector::plan_nodes(const JobShape& shape,
                                                                          const ClusterState& state,
                                                                          const uint64_t* allowed) const {
  std::vector<std::pair<int, int>> ranges;
  if (!plan_nodes(shape, state, allowed, ranges)) return std::nullopt;
  return ranges;
}

bool SlurmSelector::plan_nodes(const JobShape& shape, const ClusterState& state, const uint64_t* allowed,
                               std::vector<std::pair<int, int>>& ranges) const {
  if (!select_is_exact(shape, state))
    throw std::logic_error("SlurmSelector::plan_nodes: the shape's selection is not decided by free cores");
  ranges.clear();
  if (!totals_allow(shape, state)) return false;
  // every chosen node gets a task in select's finish (each took at least one of them),
  // so these are its nodes
  return choose_exact(shape, state, [allowed](size_t w) { return allowed[w]; }, ranges);
}

bool SlurmSelector::free_core_sum_decides_bound(const JobShape& shape) {
  // cores_may_hold then sums each allowed node's free cores, unlimited per node
  return shape.cpu_only() && shape.cpus_per_task <= 1 && shape.tasks_per_node <= 0 && shape.nodes_max != 1;
}

bool SlurmSelector::may_select(const JobShape& shape, const ClusterState& state, const std::vector<uint8_t>& allowed,
                               bool* exact) const {
  return may_select_in(shape, state, [&allowed](size_t w) { return byte_word(allowed, w); }, exact);
}

bool SlurmSelector::may_select(const JobShape& shape, const ClusterState& state, const uint64_t* allowed,
                               bool* exact) const {
  return may_select_in(shape, state, [allowed](size_t w) { return allowed[w]; }, exact);
}

template <class AllowedWord>
bool SlurmSelector::may_select_in(const JobShape& shape, const ClusterState& state, AllowedWord allowed_word,
                                  bool* exact) const {
  *exact = false;
  if (!totals_allow(shape, state)) return false;
  if (!shape.cpu_only()) return true;
  if (!cores_may_hold(shape, state, allowed_word)) return false;
  *exact = select_is_exact(shape, state);
  return true;
}

bool SlurmSelector::may_select_counted(const JobShape& shape, const ClusterState& state, int64_t allowed_free,
                                       bool* exact) const {
  if (!free_core_sum_decides_bound(shape))
    throw std::logic_error("SlurmSelector::may_select_counted: the free-core sum does not decide this shape");
  *exact = false;
  if (!totals_allow(shape, state)) return false;
  // cores_may_hold on these shapes: one core per task, no per-node cap, so the
  // allowed nodes hold the tasks exactly when their free cores sum to them
  if (allowed_free < shape.tasks) return false;
  *exact = select_is_exact(shape, state);
  return true;
}

bool SlurmSelector::select_is_exact(const JobShape& shape, const ClusterState& state) const {
  // capacity() then gives every node with a free core min(tasks, free cores), and
  // choose_flat takes sets until the tasks are met: with no lower node count and no
  // upper one below the tasks it succeeds whenever the free cores hold them
  return shape.cpu_only() && !shape.exclusive && !shape.mem_whole_node && !shape.fixed_nodes &&
         shape.cpus_per_task <= 1 && shape.tasks_per_node <= 0 && shape.mem_per_node_mb <= 0 && shape.nodes_min <= 1 &&
         shape.nodes_max >= shape.tasks && placer_.takes_any_cpu_count() && !uses_topology(shape) &&
         (shape.mem_per_cpu_mb <= 0 || state.memory_follows_cores(shape.mem_per_cpu_mb));
}

std::optional<Allocation> SlurmSelector::select(const JobShape& shape, const ClusterState& state,
                                                const std::vector<uint8_t>& allowed, SimTime waited,
                                                int* leaves_used, bool place) const {
  if (state.summary()) throw std::logic_error("SlurmSelector::select: given a summary state, which has no cores to place");
  if (!totals_allow(shape, state)) return std::nullopt;
  std::vector<Cap> chosen;
  const bool topo = uses_topology(shape);
  bool stop = false;  // the switch wait refused the set: no second pass
  auto conclude = [&](const std::vector<Cap>& set, bool first_pass) -> std::optional<Allocation> {
    const int leaves = leaf_count(set);
    if (leaves_used) *leaves_used = leaves;
    if (topo && shape.switches > 0 && leaves > shape.switches) {
      const SimTime wait = std::min(shape.switches_wait.value_or(cfg_.max_switch_wait), cfg_.max_switch_wait);
      if (waited < wait) {
        stop = true;
        return std::nullopt;
      }
    }
    return finish(shape, state, set, place, first_pass);
  };
  if (count_caps_ && select_is_exact(shape, state)) {
    // capacity() on these shapes, without its general steps: every node with a free
    // core takes min(tasks, free cores) (memory follows cores, so it cuts nothing; no
    // GPUs, so no placement is tried)
    std::vector<std::pair<int, int>> ranges;
    const bool ok = choose_exact(shape, state, [&allowed](size_t w) { return byte_word(allowed, w); }, ranges);
    if (!ok) return std::nullopt;
    for (const auto& [first, last] : ranges)
      for (int n = first; n <= last; ++n) {
        const int free = state.node(n).free_cores;
        chosen.push_back(Cap{n, std::min(free, shape.tasks), 0, free * tpc_[n], cpu_weight_[n]});
      }
  } else {
    // cons_tres choose_nodes: a first pass where each GPU comes with free cores on its
    // own socket, then, if no node set holds the job, a second pass where cores may be
    // anywhere (without enforce-binding). binding, cycle at 71 s: j017 (--gpus=2
    // --cpus-per-gpu=4) was planned on g04, whose GPU socket had 8 free cores, not on
    // g03, first in order, with both GPUs on a socket of 7 free cores.
    const bool two_passes = shape.requested_gpus() > 0 && !shape.enforce_binding;
    for (int pass = 0; pass < (two_passes ? 2 : 1); ++pass) {
      const bool first_pass = two_passes && pass == 0;
      // capacity() is nothing on a node with no free core (every task takes one)
      std::vector<Cap> caps;
      state.for_each_open([&](int node) {
        if (!allowed[node]) return;
        if (auto c = capacity(shape, state, node, first_pass)) caps.push_back(*c);
      });
      if (caps.empty()) continue;
      chosen = topo ? choose_topo(shape, caps) : choose_flat(shape, caps);
      if (chosen.empty()) continue;
      if (auto a = conclude(chosen, first_pass)) return a;
      if (stop) return std::nullopt;
    }
    return std::nullopt;
  }
  if (chosen.empty()) return std::nullopt;
  return conclude(chosen, false);
}

}  // namespace gcsim
