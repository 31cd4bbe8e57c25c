#include "models/placement/placement.hpp"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <numeric>
#include <tuple>

namespace gcsim {

namespace {

const std::vector<std::pair<PlacementMode, std::string>>& mode_table() {
  static const std::vector<std::pair<PlacementMode, std::string>> t = {
      {PlacementMode::kSlurm, "slurm"},
      {PlacementMode::kNumaBound, "numa-bound"},
      {PlacementMode::kUnbound, "unbound"},
      {PlacementMode::kK8sNone, "k8s-none"},
      {PlacementMode::kK8sBestEffort, "k8s-best-effort"},
      {PlacementMode::kK8sRestricted, "k8s-restricted"},
      {PlacementMode::kK8sSingleNuma, "k8s-single-numa-node"},
  };
  return t;
}

// The free resources of one node and the questions every mode asks of them.
struct View {
  const NodeTemplate& t;
  CoreBits core_free;
  uint64_t gpu_free;
  int64_t free_mem_mb;
  const NodeRequest& req;

  [[nodiscard]] int sockets() const { return t.total_sockets(); }
  [[nodiscard]] int numas() const { return t.numa_domains(); }
  [[nodiscard]] bool gpu_usable(int g) const {
    return (gpu_free >> g & 1) && (req.gpu_type.empty() || t.gpus[g].gres_type == req.gpu_type) &&
           (req.gpu_types_allowed.empty() || std::find(req.gpu_types_allowed.begin(), req.gpu_types_allowed.end(),
                                                       t.gpus[g].gres_type) != req.gpu_types_allowed.end());
  }
  [[nodiscard]] int gpu_socket(int g) const { return t.socket_of_numa(t.gpus[g].numa); }
  [[nodiscard]] int cores_per_task() const {
    return std::max(1, (req.cpus_per_task + t.threads_per_core - 1) / t.threads_per_core);
  }
  [[nodiscard]] int cores_needed() const {
    int n = req.tasks * cores_per_task();
    if (req.cpus_per_gpu > 0) n = std::max(n, (req.gpus * req.cpus_per_gpu + t.threads_per_core - 1) / t.threads_per_core);
    return n;
  }
  [[nodiscard]] std::vector<int> free_cores_where(auto pred) const {
    std::vector<int> out;
    out.reserve(static_cast<size_t>(t.cores()));
    for (int c = 0; c < t.cores(); ++c)
      if (core_free[c] && pred(c)) out.push_back(c);
    return out;
  }
  [[nodiscard]] std::vector<int> usable_gpus_where(auto pred) const {
    std::vector<int> out;
    for (int g = 0; g < static_cast<int>(t.gpus.size()); ++g)
      if (gpu_usable(g) && pred(g)) out.push_back(g);
    return out;
  }
};

NodePlacement fail(std::string why) {
  NodePlacement p;
  p.fits = false;
  p.reason = std::move(why);
  return p;
}

// NVLink count between two GPUs of the template.
int links_between(const NodeTemplate& t, int a, int b) {
  if (a == b) return 0;
  switch (t.nvlink.kind) {
    case NvlinkKind::kNvswitch: return t.nvlink.links_per_gpu;
    case NvlinkKind::kPairs:
      for (const auto& p : t.nvlink.pairs)
        if ((p.a == a && p.b == b) || (p.a == b && p.b == a)) return p.links;
      return 0;
    case NvlinkKind::kNone: return 0;
  }
  return 0;
}

// A stable sort for the few sockets, GPUs or domains of one node: insertion, with no
// buffer (std::stable_sort allocates one per call, and these run for every GPU job on
// every node it tries).
template <class It, class Less>
void stable_sort_small(It first, It last, Less less) {
  for (It i = first; i != last; ++i)
    for (It j = i; j != first && less(*j, *std::prev(j)); --j) std::iter_swap(j, std::prev(j));
}

// Slurm 4.6: one GPU per used socket (lowest index), then by descending NVLink score
// on used sockets, then on the other sockets.
std::vector<int> slurm_pick_gpus(const View& v, const std::vector<int>& cores, int g) {
  std::vector<int> picked;
  if (g <= 0) return picked;
  std::vector<uint8_t> used_socket(v.sockets(), 0);
  for (int c : cores) used_socket[v.t.socket_of_core(c)] = 1;
  auto taken = [&](int x) { return std::find(picked.begin(), picked.end(), x) != picked.end(); };
  for (int s = 0; s < v.sockets() && static_cast<int>(picked.size()) < g; ++s) {
    if (!used_socket[s]) continue;
    auto on_s = v.usable_gpus_where([&](int x) { return v.gpu_socket(x) == s; });
    if (!on_s.empty()) picked.push_back(on_s.front());
  }
  auto by_score = [&](bool on_used) {
    auto cand = v.usable_gpus_where([&](int x) { return !taken(x) && (used_socket[v.gpu_socket(x)] != 0) == on_used; });
    std::vector<int> score(cand.size(), 0);
    int best = 0;
    for (size_t i = 0; i < cand.size(); ++i) {
      for (int p : picked) score[i] += links_between(v.t, cand[i], p);
      best = std::max(best, score[i]);
    }
    if (best > 4)
      for (auto& s : score) s = s * 4 / best;
    std::vector<size_t> idx(cand.size());
    std::iota(idx.begin(), idx.end(), 0);
    stable_sort_small(idx.begin(), idx.end(), [&](size_t a, size_t b) { return score[a] > score[b]; });
    for (size_t i : idx) {
      if (static_cast<int>(picked.size()) >= g) break;
      picked.push_back(cand[i]);
    }
  };
  if (static_cast<int>(picked.size()) < g) by_score(true);
  if (static_cast<int>(picked.size()) < g) by_score(false);
  std::sort(picked.begin(), picked.end());
  return picked;
}

// Why a placement that needs GPU-local cores (enforce-binding, or Slurm's first pass)
// fails, with the rule that asked for them.
std::string local_why(const NodeRequest& r, const char* what) {
  return std::string(what) + (r.enforce_binding ? " (--gres-flags=enforce-binding)" : " (first pass)");
}

// Slurm's cyclic core sync (cons_tres dist_tasks.c, _cyclic_sync_core_bitmap) over the
// free cores left per socket (`per`, each ascending): with more than one CPU per task,
// whole tasks first fill the sockets in order, each socket's cores rounded down to whole
// tasks; what is left (and every core of a one-CPU-per-task job) goes one core per
// socket in turn. Appends up to `n` cores to `out`.
void cyclic_sync(const View& v, const std::vector<std::vector<int>>& per, int n, std::vector<int>& out) {
  const int S = v.sockets();
  const int cpt = v.cores_per_task();
  thread_local std::vector<size_t> next;
  next.assign(static_cast<size_t>(S), 0);
  int left = n;
  if (v.req.cpus_per_task > 1) {
    for (int q = 0; q < S && left > 0; ++q) {
      const int whole = static_cast<int>(per[q].size()) - static_cast<int>(per[q].size()) % cpt;
      while (left > 0 && static_cast<int>(next[q]) < whole) {
        out.push_back(per[q][next[q]++]);
        --left;
      }
    }
  }
  while (left > 0) {
    const int before = left;
    for (int q = 0; q < S && left > 0; ++q)
      if (next[q] < per[q].size()) {
        out.push_back(per[q][next[q]++]);
        --left;
      }
    if (left == before) break;
  }
}

// Slurm 4.4-4.5: which cores.
std::optional<std::vector<int>> slurm_pick_cores(const View& v, std::string* why) {
  const int n = v.cores_needed();
  const int S = v.sockets();
  if (v.req.gpus == 0) {
    // A CPU job that takes every free core gets them all, whatever the distribution:
    // skip the per-socket dealing (MPI logs place most of their jobs on whole nodes).
    const int free = v.core_free.count();
    if (n > free) {
      *why = "not enough free cores";
      return std::nullopt;
    }
    if (n == free && n == v.req.tasks * v.cores_per_task()) return v.free_cores_where([](int) { return true; });
  }
  if (v.req.gpus > 0) {
    // Socket s holds cores [s * cps, (s + 1) * cps) (Slurm's socket-major numbering):
    // counts and lists a word at a time (a DGX node has 128 cores, tried for every GPU
    // job on every candidate node).
    const int cps = v.t.cores_per_socket();
    thread_local std::vector<int> free_per_socket, order;
    thread_local std::vector<uint8_t> required;
    thread_local std::vector<std::vector<int>> per;
    free_per_socket.resize(static_cast<size_t>(S));
    for (int s = 0; s < S; ++s) free_per_socket[s] = v.core_free.count(s * cps, (s + 1) * cps);
    order.resize(static_cast<size_t>(S));
    std::iota(order.begin(), order.end(), 0);
    stable_sort_small(order.begin(), order.end(), [&](int a, int b) { return free_per_socket[a] > free_per_socket[b]; });
    // Mark sockets required, most free cores first, until they hold enough GPUs. With
    // enforce-binding, and in Slurm's first pass, a socket counts only the GPUs its free
    // cores can feed (--cpus-per-gpu).
    const bool strict = v.req.enforce_binding || v.req.first_pass;
    required.assign(static_cast<size_t>(S), 0);
    int collected = 0;
    for (int s : order) {
      if (collected >= v.req.gpus) break;
      if (strict && free_per_socket[s] == 0) continue;
      int here = 0;
      for (int g = 0; g < static_cast<int>(v.t.gpus.size()); ++g) here += v.gpu_usable(g) && v.gpu_socket(g) == s;
      if (strict && v.req.cpus_per_gpu > 0)
        here = std::min(here, free_per_socket[s] * v.t.threads_per_core / v.req.cpus_per_gpu);
      if (here == 0) continue;
      required[s] = 1;
      collected += here;
    }
    if (collected < v.req.gpus && strict) {
      *why = local_why(v.req, "not enough free GPUs on sockets with free cores");
      return std::nullopt;
    }
    // The required sockets' free cores, per socket, ascending.
    if (per.size() < static_cast<size_t>(S)) per.resize(static_cast<size_t>(S));
    int total = 0;
    for (int s = 0; s < S; ++s) {
      per[s].clear();
      if (!required[s]) continue;
      v.core_free.for_each(s * cps, (s + 1) * cps, [&](int c) { per[s].push_back(c); });
      total += static_cast<int>(per[s].size());
    }
    if (total >= n && !v.req.tasks_fixed) {
      // Slurm's max_tasks_this_node is unset (NO_VAL): gres_select_filter_sock_core
      // clears no surplus core, and the task distribution picks from the required
      // sockets' cores. gpu-sockets j015 (-n2 -c4 --gres=gpu:2, cores 0-7 and
      // 8,9,12,13 free, GPUs 0 and 3) got 0-7 in both runs: both tasks on socket 0.
      std::vector<int> out;
      out.reserve(static_cast<size_t>(n));
      cyclic_sync(v, per, n, out);
      std::sort(out.begin(), out.end());
      return out;
    }
    if (total >= n) {
      // The node's task count is known (one task here, -c4 --gres=gpu:2 on a node
      // with 2-7 and 10-15 free got 2-3,10-11): trim the surplus one core at a time
      // from the socket with the most left, highest core index first, so every
      // required socket keeps some.
      // One core at a time is a step per surplus core, per node tried: 112 steps for
      // 8 cores on a free 128-core node, a quarter of a GPU run with --policy slurm.
      // So whole rounds at once: the sockets tied at the most lose a core each, lowest
      // index first, down to the next socket's count.
      while (total > n) {
        int most = 0, next = 0, tied = 0;
        for (int s = 0; s < S; ++s) most = std::max(most, static_cast<int>(per[s].size()));
        for (int s = 0; s < S; ++s) {
          const int k = static_cast<int>(per[s].size());
          if (k == most) ++tied;
          else next = std::max(next, k);
        }
        const int surplus = total - n;
        if (tied * (most - next) <= surplus) {
          for (int s = 0; s < S; ++s)
            if (static_cast<int>(per[s].size()) == most) per[s].resize(static_cast<size_t>(next));
          total -= tied * (most - next);
          continue;
        }
        const int rounds = surplus / tied;
        int extra = surplus % tied;  // one more from the lowest-index tied sockets
        for (int s = 0; s < S; ++s)
          if (static_cast<int>(per[s].size()) == most) {
            per[s].resize(static_cast<size_t>(most - rounds - (extra > 0 ? 1 : 0)));
            if (extra > 0) --extra;
          }
        total = n;
      }
      std::vector<int> out;
      out.reserve(static_cast<size_t>(n));
      for (int s = 0; s < S; ++s) out.insert(out.end(), per[s].begin(), per[s].end());
      return out;  // ascending: sockets in order, each ascending
    }
    // Only the first pass needs every core on the GPUs' sockets. enforce-binding takes
    // its GPUs only where cores are free (above) but lets the cores spill: in
    // tests/oracle/binding, -c6 --gres=gpu:1 jobs with enforce-binding got g01:6-7,12-15
    // with GPU 1 and g04:4-7,14-15 with GPU 3 (run1 j030, j035; run2 j025 g04:3-8).
    if (v.req.first_pass) {
      *why = "not enough free cores on the GPUs' sockets (first pass)";
      return std::nullopt;
    }
    // Second pass: any core, keeping the required sockets' cores and taking the
    // others lowest index first.
    std::vector<int> avail;
    avail.reserve(static_cast<size_t>(n));
    for (int s = 0; s < S; ++s) avail.insert(avail.end(), per[s].begin(), per[s].end());
    for (int s = 0; s < S && static_cast<int>(avail.size()) < n; ++s) {
      if (required[s]) continue;
      v.core_free.for_each(s * cps, (s + 1) * cps, [&](int c) {
        if (static_cast<int>(avail.size()) < n) avail.push_back(c);
      });
    }
    if (static_cast<int>(avail.size()) < n) {
      *why = "not enough free cores";
      return std::nullopt;
    }
    std::sort(avail.begin(), avail.end());
    return avail;
  }

  // CPU-only: cyclic across sockets (default) or block.
  const bool block = v.req.distribution.find(":block") != std::string::npos ||
                     v.req.distribution.rfind("plane", 0) == 0;
  // Per-socket free cores in scratch lists kept across calls (this runs for every node
  // of every CPU job placed: a Curie run places 15 million).
  thread_local std::vector<std::vector<int>> per;
  if (per.size() < static_cast<size_t>(S)) per.resize(static_cast<size_t>(S));
  for (int q = 0; q < S; ++q) per[q].clear();
  for (int c = 0; c < v.t.cores(); ++c)
    if (v.core_free[c]) per[v.t.socket_of_core(c)].push_back(c);
  std::vector<int> out;
  out.reserve(static_cast<size_t>(n));
  if (block) {
    for (int s = 0; s < S && static_cast<int>(out.size()) < n; ++s)
      for (int c : per[s]) {
        if (static_cast<int>(out.size()) >= n) break;
        out.push_back(c);
      }
  } else {
    // Slurm's cyclic core sync (cons_tres dist_tasks.c, _cyclic_sync_core_bitmap). With
    // more than one CPU per task, whole tasks first fill the sockets in order, each
    // socket's free cores rounded down to whole tasks; what is left (and every core of a
    // one-CPU-per-task job) goes one core per socket in turn. Before that, _allocate_sc
    // keeps only the node's first free cores, as many as whole tasks fill. Oracle: a
    // -n4 -c2 job on an empty 2x8-core node got cores 0-7 in both fairshare runs, while
    // -n4 -c1 jobs got two cores on each socket (gpu-sockets, binding).
    if (v.req.cpus_per_task > 1) {
      const size_t cpt = static_cast<size_t>(v.cores_per_task());
      size_t keep = 0;
      for (int q = 0; q < S; ++q) keep += per[q].size();
      keep -= keep % cpt;
      for (int q = 0; q < S; ++q) {
        if (per[q].size() > keep) per[q].resize(keep);
        keep -= per[q].size();
      }
    }
    cyclic_sync(v, per, n, out);
    // --cpus-per-gpu may ask for more cores than the tasks; none for CPU jobs.
  }
  if (static_cast<int>(out.size()) < n) {
    *why = "not enough free cores";
    return std::nullopt;
  }
  std::sort(out.begin(), out.end());
  return out;
}

// task/affinity: deal the node's cores to its tasks.
std::vector<TaskBinding> bind_tasks(const View& v, const std::vector<int>& cores, const std::vector<int>& gpus) {
  const int k = v.req.tasks;
  const int cpt = v.cores_per_task();
  const int S = v.sockets();
  std::vector<std::vector<int>> per(S);
  for (int c : cores) per[v.t.socket_of_core(c)].push_back(c);
  std::vector<size_t> next(S, 0);
  std::vector<TaskBinding> out(k);
  const std::string second = [&] {
    auto colon = v.req.distribution.find(':');
    return colon == std::string::npos ? std::string() : v.req.distribution.substr(colon + 1);
  }();
  if (second.rfind("block", 0) == 0) {
    size_t i = 0;
    for (int t = 0; t < k; ++t)
      for (int j = 0; j < cpt && i < cores.size(); ++j) out[t].cores.push_back(cores[i++]);
  } else if (second.rfind("fcyclic", 0) == 0) {
    int s = 0;
    for (int t = 0; t < k; ++t)
      for (int j = 0; j < cpt; ++j) {
        for (int tries = 0; tries < S && next[s] >= per[s].size(); ++tries) s = (s + 1) % S;
        if (next[s] >= per[s].size()) break;
        out[t].cores.push_back(per[s][next[s]++]);
        s = (s + 1) % S;
      }
  } else {  // cyclic: each task from one socket, the next task on the next socket
    int s = 0;
    for (int t = 0; t < k; ++t) {
      for (int tries = 0; tries < S && next[s] >= per[s].size(); ++tries) s = (s + 1) % S;
      int q = s;
      for (int j = 0; j < cpt; ++j) {
        for (int tries = 0; tries < S && next[q] >= per[q].size(); ++tries) q = (q + 1) % S;
        if (next[q] >= per[q].size()) break;
        out[t].cores.push_back(per[q][next[q]++]);
      }
      s = (s + 1) % S;
    }
  }
  // GPUs: --gpus-per-task / per_task:N hands them out in order; closest keeps the
  // GPUs on the task's NUMA domains; otherwise each task sees all of the node's.
  int per_task = v.req.gpus_per_task;
  if (v.req.gpu_bind.rfind("per_task:", 0) == 0) per_task = std::atoi(v.req.gpu_bind.c_str() + 9);
  const bool closest = v.req.gpu_bind.find("closest") != std::string::npos ||
                       v.req.gpu_bind.rfind("single:", 0) == 0;
  for (int t = 0; t < k; ++t) {
    auto& b = out[t];
    std::sort(b.cores.begin(), b.cores.end());
    b.mem_numa = b.cores.empty() ? -1 : v.t.numa_of_core(b.cores.front());
    if (gpus.empty()) continue;
    if (per_task > 0 && k > 1) {
      for (int j = 0; j < per_task; ++j) {
        const size_t i = static_cast<size_t>(t * per_task + j);
        if (i < gpus.size()) b.gpus.push_back(gpus[i]);
      }
    } else if (closest && k > 1) {
      for (int g : gpus)
        for (int c : b.cores)
          if (v.t.numa_of_core(c) == v.t.gpus[g].numa) {
            b.gpus.push_back(g);
            break;
          }
      if (b.gpus.empty()) b.gpus = gpus;
    } else {
      b.gpus = gpus;
    }
  }
  return out;
}

// Whether a placement that ends with `gpus` keeps per-task bindings (computing them is
// most of the cost of placing a thousand-task CPU job); finish() drops unwanted ones.
bool wants_bindings(const View& v, const std::vector<int>& gpus) { return v.req.keep_cpu_bindings || !gpus.empty(); }

NodePlacement finish(const View& v, std::vector<int> cores, std::vector<int> gpus, std::vector<TaskBinding> binds) {
  NodePlacement p;
  p.fits = true;
  std::sort(cores.begin(), cores.end());
  std::sort(gpus.begin(), gpus.end());
  p.alloc.tasks = v.req.tasks;
  p.alloc.cores = std::move(cores);
  p.alloc.gpus = std::move(gpus);
  p.alloc.mem_mb = v.req.mem_mb;
  p.alloc.whole_node = v.req.exclusive;
  if (wants_bindings(v, p.alloc.gpus)) p.alloc.bindings = std::move(binds);
  return p;
}

// --gpus-per-task (without --ntasks-per-node) and --cpus-per-gpu: Slurm 22.05 gives
// each task (or GPU) its cores on its GPU's socket. Measured on the binding oracle
// case (tests/oracle/binding, 50 jobs): GPUs on sockets with fewer free cores than one
// task (or one GPU's --cpus-per-gpu) needs are passed over while others remain; the
// rest go lowest index first; each task then takes the lowest free cores of its GPU's
// socket and, when those run out, the lowest free cores of the other sockets
// (free 0-2,7 | 8-10,15 and GPUs 0,1 on socket 0 -> tasks 0-2 and 7-9).
std::optional<NodePlacement> place_slurm_per_gpu(const View& v) {
  const auto& r = v.req;
  const bool per_task = r.gpus_per_task > 0 && r.distribution.empty() && !r.tasks_per_node_given;
  const bool per_gpu = r.cpus_per_gpu > 0 && r.gpus_per_task == 0;
  if (!(per_task || per_gpu) || r.gpus <= 0) return std::nullopt;
  const int tpc = v.t.threads_per_core;
  const int unit_cores = per_task ? v.cores_per_task() : std::max(1, (r.cpus_per_gpu + tpc - 1) / tpc);
  const int units = per_task ? r.tasks : r.gpus;
  const int gpus_per_unit = per_task ? r.gpus_per_task : 1;
  const int S = v.sockets();
  std::vector<std::vector<int>> per(S);
  for (int c = 0; c < v.t.cores(); ++c)
    if (v.core_free[c]) per[v.t.socket_of_core(c)].push_back(c);
  std::vector<int> near, far;
  for (int g : v.usable_gpus_where([](int) { return true; }))
    (static_cast<int>(per[v.gpu_socket(g)].size()) >= unit_cores ? near : far).push_back(g);
  // enforce-binding, and Slurm's first pass: a GPU only with its unit's cores on its own
  // socket (per-socket GPUs capped by free cores / cpus_per_gpu, as
  // gres_select_filter_sock_core counts them)
  const bool strict = r.enforce_binding || r.first_pass;
  if (strict) far.clear();
  std::vector<int> gpus = near;
  gpus.insert(gpus.end(), far.begin(), far.end());
  if (static_cast<int>(gpus.size()) < r.gpus) return fail("not enough free GPUs");
  gpus.resize(r.gpus);
  std::vector<int> by_unit = gpus;  // unit u uses GPUs [u*gpus_per_unit, ...), lowest first
  std::sort(gpus.begin(), gpus.end());
  std::vector<size_t> next(S, 0);
  std::vector<int> cores;
  std::vector<TaskBinding> binds(r.tasks);
  for (int u = 0; u < units; ++u) {
    const int home = v.gpu_socket(by_unit[std::min<size_t>(u * gpus_per_unit, by_unit.size() - 1)]);
    std::vector<int> mine;
    for (int k = 0; k < S && static_cast<int>(mine.size()) < unit_cores; ++k) {
      const int s = k == 0 ? home : (k <= home ? k - 1 : k);
      while (static_cast<int>(mine.size()) < unit_cores && next[s] < per[s].size()) mine.push_back(per[s][next[s]++]);
    }
    if (static_cast<int>(mine.size()) < unit_cores) return fail("not enough free cores");
    if (strict)
      for (int c : mine)
        if (v.t.socket_of_core(c) != home)
          return fail(local_why(r, "not enough free cores on the GPUs' sockets"));
    cores.insert(cores.end(), mine.begin(), mine.end());
    if (per_task) {
      binds[u].cores = mine;
      for (int j = 0; j < gpus_per_unit; ++j) binds[u].gpus.push_back(by_unit[u * gpus_per_unit + j]);
    }
  }
  // tasks beyond the per-GPU cores (--cpus-per-gpu with more tasks than GPUs' cores): lowest free
  while (static_cast<int>(cores.size()) < v.cores_needed()) {
    int best = -1;
    for (int s = 0; s < S; ++s)
      if (next[s] < per[s].size() && (best < 0 || per[s][next[s]] < per[best][next[best]])) best = s;
    if (best < 0) return fail("not enough free cores");
    cores.push_back(per[best][next[best]++]);
  }
  std::sort(cores.begin(), cores.end());
  if (!per_task) binds = bind_tasks(v, cores, gpus);
  return finish(v, cores, gpus, std::move(binds));
}

NodePlacement place_slurm(const View& v) {
  if (auto p = place_slurm_per_gpu(v)) return std::move(*p);
  std::string why;
  auto cores = slurm_pick_cores(v, &why);
  if (!cores) return fail(why);
  auto gpus = slurm_pick_gpus(v, *cores, v.req.gpus);
  if (static_cast<int>(gpus.size()) < v.req.gpus) return fail("not enough free GPUs");
  // (the bindings decide nothing about the fit)
  auto binds = !v.req.fit_only && wants_bindings(v, gpus) ? bind_tasks(v, *cores, gpus) : std::vector<TaskBinding>{};
  return finish(v, *cores, gpus, std::move(binds));
}

NodePlacement place_unbound(const View& v) {
  const int n = v.cores_needed();
  auto cores = v.free_cores_where([](int) { return true; });
  if (static_cast<int>(cores.size()) < n) return fail("not enough free cores");
  cores.resize(n);
  auto gpus = v.usable_gpus_where([](int) { return true; });
  if (static_cast<int>(gpus.size()) < v.req.gpus) return fail("not enough free GPUs");
  gpus.resize(v.req.gpus);
  NodeRequest block_req = v.req;
  block_req.distribution = "block:block";
  const View bv{v.t, v.core_free, v.gpu_free, v.free_mem_mb, block_req};
  auto binds = wants_bindings(v, gpus) ? bind_tasks(bv, cores, gpus) : std::vector<TaskBinding>{};
  return finish(v, cores, gpus, std::move(binds));
}

NodePlacement place_numa_bound(const View& v) {
  const int D = v.numas();
  const int cpt = v.cores_per_task();
  std::vector<std::vector<int>> free_cores(D), free_gpus(D);
  for (int c = 0; c < v.t.cores(); ++c)
    if (v.core_free[c]) free_cores[v.t.numa_of_core(c)].push_back(c);
  for (int g : v.usable_gpus_where([](int) { return true; })) free_gpus[v.t.gpus[g].numa].push_back(g);
  std::vector<size_t> used(D, 0);
  std::vector<TaskBinding> binds(v.req.tasks);
  std::vector<int> gpus;
  auto take_cores = [&](int d, int count, std::vector<int>& into) {
    if (free_cores[d].size() - used[d] < static_cast<size_t>(count)) return false;
    for (int i = 0; i < count; ++i) into.push_back(free_cores[d][used[d]++]);
    return true;
  };
  if (v.req.gpus == 0) {
    // Each task inside one NUMA domain, first fit in domain order.
    for (auto& b : binds) {
      bool ok = false;
      for (int d = 0; d < D && !ok; ++d) ok = take_cores(d, cpt, b.cores);
      if (!ok) return fail("no NUMA domain has " + std::to_string(cpt) + " free cores for a task");
    }
  } else {
    // GPUs from as few NUMA domains as possible: best fit into one domain, else the
    // domains with the most free GPUs.
    std::vector<int> doms;
    int best = -1;
    for (int d = 0; d < D; ++d) {
      if (static_cast<int>(free_gpus[d].size()) < v.req.gpus) continue;
      if (static_cast<int>(free_cores[d].size()) < v.cores_needed()) continue;
      if (best < 0 || free_gpus[d].size() < free_gpus[best].size()) best = d;
    }
    if (best >= 0) {
      doms = {best};
    } else {
      std::vector<int> order(D);
      std::iota(order.begin(), order.end(), 0);
      stable_sort_small(order.begin(), order.end(), [&](int a, int b) {
        return std::pair(free_gpus[a].size(), free_cores[a].size()) > std::pair(free_gpus[b].size(), free_cores[b].size());
      });
      int have = 0;
      for (int d : order) {
        if (have >= v.req.gpus || free_gpus[d].empty()) break;
        doms.push_back(d);
        have += static_cast<int>(free_gpus[d].size());
      }
      if (have < v.req.gpus) return fail("not enough free GPUs");
      std::sort(doms.begin(), doms.end());
    }
    for (int d : doms)
      for (int g : free_gpus[d])
        if (static_cast<int>(gpus.size()) < v.req.gpus) gpus.push_back(g);
    std::sort(gpus.begin(), gpus.end());
    // Task t uses GPU(s) dealt in order; its cores come from its first GPU's domain.
    const int k = v.req.tasks;
    for (int t = 0; t < k; ++t) {
      auto& b = binds[t];
      if (v.req.gpus_per_task > 0) {
        for (int j = 0; j < v.req.gpus_per_task; ++j) b.gpus.push_back(gpus[t * v.req.gpus_per_task + j]);
      } else if (k > 1 && k <= static_cast<int>(gpus.size())) {
        const int per = static_cast<int>(gpus.size()) / k;
        for (int j = 0; j < per; ++j) b.gpus.push_back(gpus[t * per + j]);
      } else {
        b.gpus = k == 1 ? gpus : std::vector<int>{gpus[t % gpus.size()]};
      }
      const int d = v.t.gpus[b.gpus.front()].numa;
      if (!take_cores(d, cpt, b.cores)) {
        bool ok = false;  // another of the job's GPU domains
        for (int d2 : doms)
          if (!ok && d2 != d) ok = take_cores(d2, cpt, b.cores);
        if (!ok) return fail("not enough free cores on the GPUs' NUMA domains");
      }
    }
    if (v.req.cpus_per_gpu > 0) {
      // Extra cores asked by --cpus-per-gpu, from the GPUs' domains.
      int have = 0;
      for (const auto& b : binds) have += static_cast<int>(b.cores.size());
      int extra = v.cores_needed() - have;
      for (int d : doms)
        while (extra > 0 && take_cores(d, 1, binds.back().cores)) --extra;
      if (extra > 0) return fail("not enough free cores on the GPUs' NUMA domains");
    }
  }
  std::vector<int> cores;
  for (auto& b : binds) {
    std::sort(b.cores.begin(), b.cores.end());
    b.mem_numa = v.t.numa_of_core(b.cores.front());
    cores.insert(cores.end(), b.cores.begin(), b.cores.end());
  }
  return finish(v, cores, gpus, std::move(binds));
}

// Kubernetes Topology Manager over the static CPU manager and a NUMA-aware device
// plugin: each provider offers the NUMA masks that can satisfy it (preferred = the
// narrowest such masks); the merged hint is the AND of one mask per provider,
// preferred if both were; the best merged hint is preferred first, then narrowest,
// then lowest mask.
NodePlacement place_k8s(const View& v, PlacementMode mode) {
  const int D = std::min(v.numas(), 16);
  const int n = v.cores_needed();
  const int g = v.req.gpus;
  auto cores_in = [&](uint32_t mask) {
    return v.free_cores_where([&](int c) { return mask >> v.t.numa_of_core(c) & 1; });
  };
  auto gpus_in = [&](uint32_t mask) {
    return v.usable_gpus_where([&](int x) { return mask >> v.t.gpus[x].numa & 1; });
  };
  const uint32_t all = (D >= 32) ? ~0u : ((1u << D) - 1);
  if (mode == PlacementMode::kK8sNone) {
    // No alignment: the CPU manager packs CPUs, the device plugin hands out devices in order.
    auto cores = cores_in(all);
    auto gpus = gpus_in(all);
    if (static_cast<int>(cores.size()) < n) return fail("not enough free cores");
    if (static_cast<int>(gpus.size()) < g) return fail("not enough free GPUs");
    cores.resize(n);
    gpus.resize(g);
    std::vector<TaskBinding> binds(v.req.tasks, TaskBinding{cores, gpus, -1});
    return finish(v, cores, gpus, std::move(binds));
  }
  struct Hint {
    uint32_t mask;
    bool preferred;
  };
  auto hints_for = [&](auto satisfies) {
    std::vector<Hint> h;
    int narrowest = 99;
    for (uint32_t m = 1; m <= all; ++m)
      if (satisfies(m)) narrowest = std::min(narrowest, std::popcount(m));
    for (uint32_t m = 1; m <= all; ++m)
      if (satisfies(m)) h.push_back({m, std::popcount(m) == narrowest});
    return h;
  };
  auto cpu_hints = hints_for([&](uint32_t m) { return static_cast<int>(cores_in(m).size()) >= n; });
  std::vector<Hint> gpu_hints = g > 0 ? hints_for([&](uint32_t m) { return static_cast<int>(gpus_in(m).size()) >= g; })
                                      : std::vector<Hint>{{all, true}};
  if (mode == PlacementMode::kK8sSingleNuma) {
    // The single-numa-node policy keeps only each provider's one-node hints.
    auto single = [](std::vector<Hint>& h) {
      std::erase_if(h, [](const Hint& x) { return std::popcount(x.mask) != 1 || !x.preferred; });
    };
    single(cpu_hints);
    if (g > 0) single(gpu_hints);
    if (cpu_hints.empty() || gpu_hints.empty())
      return fail("Topology Affinity Error: resources do not fit one NUMA node (single-numa-node)");
  }
  if (cpu_hints.empty()) return fail("not enough free cores");
  if (gpu_hints.empty()) return fail("not enough free GPUs");
  bool have = false;
  Hint best{0, false};
  for (const auto& a : cpu_hints)
    for (const auto& b : gpu_hints) {
      const uint32_t m = a.mask & b.mask;
      if (m == 0) continue;
      const Hint h{m, a.preferred && b.preferred};
      auto key = [](const Hint& x) { return std::tuple(!x.preferred, std::popcount(x.mask), x.mask); };
      if (!have || key(h) < key(best)) {
        best = h;
        have = true;
      }
    }
  if (!have) best = {all, false};
  if (mode == PlacementMode::kK8sRestricted && !best.preferred)
    return fail("Topology Affinity Error: no preferred NUMA alignment (restricted)");
  if (mode == PlacementMode::kK8sSingleNuma && (!best.preferred || std::popcount(best.mask) != 1))
    return fail("Topology Affinity Error: resources do not fit one NUMA node (single-numa-node)");
  // Once admitted, the CPU manager and device manager take from the hint's NUMA
  // nodes first and the rest from anywhere.
  auto take = [&](std::vector<int> inside, std::vector<int> outside, int count) {
    inside.insert(inside.end(), outside.begin(), outside.end());
    if (static_cast<int>(inside.size()) < count) return std::optional<std::vector<int>>{};
    inside.resize(count);
    std::sort(inside.begin(), inside.end());
    return std::optional<std::vector<int>>{inside};
  };
  auto cores = take(cores_in(best.mask), cores_in(all & ~best.mask), n);
  auto gpus = take(gpus_in(best.mask), gpus_in(all & ~best.mask), g);
  if (!cores) return fail("not enough free cores");
  if (!gpus) return fail("not enough free GPUs");
  const int mem_numa = std::popcount(best.mask) == 1 ? std::countr_zero(best.mask) : -1;
  std::vector<TaskBinding> binds(v.req.tasks, TaskBinding{*cores, *gpus, mem_numa});
  return finish(v, *cores, *gpus, std::move(binds));
}

}  // namespace

std::optional<PlacementMode> parse_placement_mode(const std::string& name) {
  for (const auto& [m, n] : mode_table())
    if (n == name) return m;
  return std::nullopt;
}

std::string placement_mode_name(PlacementMode m) {
  for (const auto& [x, n] : mode_table())
    if (x == m) return n;
  return "?";
}

const std::vector<std::string>& placement_mode_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const auto& [m, n] : mode_table()) v.push_back(n);
    return v;
  }();
  return names;
}

NodePlacement place_on_template(const NodeTemplate& t, CoreBits core_free, uint64_t gpu_free,
                                int64_t free_mem_mb, const NodeRequest& req, PlacementMode mode) {
  const View v{t, core_free, gpu_free, free_mem_mb, req};
  if (t.memory_mb > 0 && req.mem_mb > free_mem_mb) return fail("not enough free memory");
  if (req.exclusive) {
    const bool idle = core_free.all() &&
                      std::popcount(gpu_free) == static_cast<int>(t.gpus.size());
    if (!idle) return fail("node is not idle (--exclusive)");
    std::vector<int> cores(t.cores()), gpus(t.gpus.size());
    std::iota(cores.begin(), cores.end(), 0);
    std::iota(gpus.begin(), gpus.end(), 0);
    auto binds = wants_bindings(v, gpus) ? bind_tasks(v, cores, req.gpus > 0 ? gpus : std::vector<int>{})
                                         : std::vector<TaskBinding>{};
    return finish(v, cores, gpus, std::move(binds));
  }
  switch (mode) {
    case PlacementMode::kSlurm: return place_slurm(v);
    case PlacementMode::kNumaBound: return place_numa_bound(v);
    case PlacementMode::kUnbound: return place_unbound(v);
    default: return place_k8s(v, mode);
  }
}

NodePlacement place_on_node(const ClusterState& state, int node, const NodeRequest& req, PlacementMode mode) {
  const auto& s = state.node(node);
  NodePlacement p = place_on_template(state.cluster().tmpl(node), state.core_free(node), s.gpu_free, s.free_mem_mb, req, mode);
  if (p.fits) p.alloc.node = node;
  return p;
}

std::optional<NodeAlloc> PlacementAllocator::take_on_node(const JobShape& shape, const ClusterState& state, int node,
                                                          int tasks, int gpus) const {
  return take_on_node_in_pass(shape, state, node, tasks, gpus, false);
}

NodePlacement PlacementAllocator::place_in_pass(const JobShape& shape, const ClusterState& state, int node, int tasks,
                                               int gpus, bool first_pass, bool fit_only) const {
  if (shape.exclusive && !state.idle(node)) return NodePlacement{};
  NodeRequest req = node_request(shape, state.cluster().tmpl(node), tasks, gpus);
  req.keep_cpu_bindings = keep_cpu_bindings_;
  req.first_pass = first_pass;
  req.fit_only = fit_only;
  return place_on_node(state, node, req, mode_);
}

std::optional<NodeAlloc> PlacementAllocator::take_on_node_in_pass(const JobShape& shape, const ClusterState& state,
                                                                  int node, int tasks, int gpus, bool first_pass) const {
  NodePlacement p = place_in_pass(shape, state, node, tasks, gpus, first_pass, false);
  if (!p.fits) return std::nullopt;
  return std::move(p.alloc);
}

bool PlacementAllocator::fits_on_node_in_pass(const JobShape& shape, const ClusterState& state, int node, int tasks,
                                              int gpus, bool first_pass) const {
  return place_in_pass(shape, state, node, tasks, gpus, first_pass, true).fits;
}

NodeRequest node_request(const JobShape& shape, const NodeTemplate& t, int tasks, int gpus) {
  NodeRequest r;
  r.tasks = tasks;
  r.cpus_per_task = shape.cpus_per_task;
  r.gpus = gpus;
  r.gpus_per_task = shape.gpus_per_task;
  r.cpus_per_gpu = shape.cpus_per_gpu;
  r.gpu_type = shape.gpu_type;
  r.gpu_types_allowed = shape.gpu_types_allowed;
  r.exclusive = shape.exclusive;
  r.enforce_binding = shape.enforce_binding;
  r.gpu_bind = shape.gpu_bind;
  r.distribution = shape.distribution;
  r.tasks_per_node_given = shape.tasks_per_node > 0;
  r.tasks_fixed = shape.tasks_per_node > 0 || shape.tasks == 1 ||
                  (shape.fixed_nodes && (shape.nodes_max == 1 || shape.tasks == shape.nodes_min));
  r.mem_mb = node_memory_mb(shape, t, tasks, gpus);
  return r;
}

int64_t slurm_sched_weight(const JobShape& shape, const ClusterState& state, int node) {
  const int need = static_cast<int>(shape.requested_gpus());
  int near = 0;
  if (need > 0) {
    // Cores of socket k are [k * cores_per_socket, (k + 1) * cores_per_socket): one
    // word test per socket a free GPU sits on, no per-core count (a hot path: every
    // node, every one-node GPU job tried).
    const auto& t = state.cluster().tmpl(node);
    const CoreBits free = state.core_free(node);
    const int cps = t.cores_per_socket();
    const uint64_t gpu_free = state.node(node).gpu_free;
    for (size_t g = 0; g < t.gpus.size(); ++g) {
      if (!(gpu_free >> g & 1) || !shape.gpu_type_ok(t.gpus[g].gres_type)) continue;
      const int k = t.socket_of_numa(t.gpus[g].numa);
      if (free.any(k * cps, (k + 1) * cps)) ++near;
    }
    near = std::min({near, shape.gpus_per_node > 0 ? shape.gpus_per_node : need, 0xff});
  }
  return (static_cast<int64_t>(state.cluster().nodes[node].weight) << 8) | (0xff - near);
}

namespace {

// Every node that could hold the whole of a one-node job, with Slurm's key: lowest
// scheduling weight (Weight, then the most free GPUs near free cores), best fit (fewest
// free CPUs), then the node's place in the order. A node with no free core takes no
// task, nor one with no free GPU a GPU job: the cheapest tests first, then whether the
// node could hold the whole job. Leaving out nodes the loop could not use changes no
// allocation.
void one_node_keys(const JobShape& shape, const ClusterState& state, const std::vector<int>& node_order,
                   std::vector<NodeOrder::Ranked>& keys) {
  const bool wants_gpus = shape.requested_gpus() > 0;
  for_each_open_node(state, node_order, shape.partition, [&](int n, size_t pos) {
    const NodeState& s = state.node(n);
    if (wants_gpus && s.free_gpus == 0) return;
    if (!node_may_hold_one_node_job(shape, state, n)) return;
    const auto& t = state.cluster().tmpl(n);
    keys.push_back({slurm_sched_weight(shape, state, n), static_cast<int64_t>(s.free_cores) * t.threads_per_core, pos, n});
  });
}

}  // namespace

void PlacementAllocator::order_nodes(const JobShape& shape, const ClusterState& state,
                                     const std::vector<int>& node_order, NodeOrder& out) const {
  const bool one_node = shape.nodes_max == 1;
  if (mode_ != PlacementMode::kSlurm || !one_node) {
    out.use_list(node_order);
    return;
  }
  // The least of one_node_keys' keys in one pass. A node is tested in full only when
  // a floor of its key is below the best so far: its Weight with the most near GPUs
  // the job could count, and its free CPUs (exact). Keys grow with the position along
  // the scan, so an equal floor cannot win either. On a busy CPU cluster this leaves
  // the full test to a few nodes of the thousands with a free core.
  const int need = static_cast<int>(shape.requested_gpus());
  const bool wants_gpus = need > 0;
  const int near_cap = wants_gpus ? std::min(shape.gpus_per_node > 0 ? shape.gpus_per_node : need, 0xff) : 0;
  NodeOrder::Ranked best;
  for_each_open_node(state, node_order, shape.partition, [&](int n, size_t pos) {
    const NodeState& s = state.node(n);
    if (wants_gpus && s.free_gpus == 0) return;
    const int64_t cpus = static_cast<int64_t>(s.free_cores) * state.cluster().tmpl(n).threads_per_core;
    const auto beaten = [&](int64_t key1) { return key1 > best.key1 || (key1 == best.key1 && cpus >= best.key2); };
    if (best.node >= 0 && beaten((static_cast<int64_t>(state.cluster().nodes[n].weight) << 8) | (0xff - near_cap)))
      return;
    if (!node_may_hold_one_node_job(shape, state, n)) return;
    const int64_t key1 = slurm_sched_weight(shape, state, n);
    if (best.node >= 0 && beaten(key1)) return;
    best = {key1, cpus, pos, n};
  });
  out.use_best(best, one_node_keys, shape, state, node_order);
}

std::string cpu_mask_hex(const std::vector<int>& os_cpus) {
  int top = 0;
  for (int c : os_cpus) top = std::max(top, c);
  std::vector<uint8_t> nib(top / 4 + 1, 0);
  for (int c : os_cpus) nib[c / 4] |= static_cast<uint8_t>(1u << (c % 4));
  std::string s = "0x";
  bool lead = true;
  for (size_t i = nib.size(); i-- > 0;) {
    if (lead && nib[i] == 0 && i > 0) continue;
    lead = false;
    s += "0123456789ABCDEF"[nib[i]];
  }
  return s;
}

std::vector<std::map<std::string, std::string>> srun_environment(const Cluster& cluster, const Allocation& alloc,
                                                                 bool constrain_devices) {
  std::vector<std::map<std::string, std::string>> out;
  const int64_t ntasks = alloc.tasks();
  int procid = 0;
  auto join = [](const std::vector<int>& v) {
    std::string s;
    for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
    return s;
  };
  for (size_t nid = 0; nid < alloc.nodes.size(); ++nid) {
    const auto& na = alloc.nodes[nid];
    const auto& t = cluster.tmpl(na.node);
    // Masks for every task of the node, as SLURM_CPU_BIND_LIST lists them.
    std::vector<std::string> masks;
    std::vector<std::vector<int>> task_cpus;
    for (int local = 0; local < na.tasks; ++local) {
      std::vector<int> cpus;
      const auto& cores = local < static_cast<int>(na.bindings.size()) ? na.bindings[local].cores : na.cores;
      for (int c : cores)
        for (int th = 0; th < t.threads_per_core; ++th) {
          const int abstract = c * t.threads_per_core + th;
          cpus.push_back(t.cpu_os_ids.empty() ? abstract : t.cpu_os_ids[abstract]);
        }
      std::sort(cpus.begin(), cpus.end());
      masks.push_back(cpu_mask_hex(cpus));
      task_cpus.push_back(cpus);
    }
    std::string mask_list;
    for (size_t i = 0; i < masks.size(); ++i) mask_list += (i ? "," : "") + masks[i];
    for (int local = 0; local < na.tasks; ++local) {
      std::map<std::string, std::string> env;
      env["SLURM_PROCID"] = std::to_string(procid++);
      env["SLURM_LOCALID"] = std::to_string(local);
      env["SLURM_NODEID"] = std::to_string(nid);
      env["SLURM_NTASKS"] = std::to_string(ntasks);
      env["SLURM_NPROCS"] = std::to_string(ntasks);
      env["SLURMD_NODENAME"] = cluster.nodes[na.node].name;
      env["SLURM_CPU_BIND"] = "quiet,mask_cpu:" + mask_list;
      env["SLURM_CPU_BIND_TYPE"] = "mask_cpu:";
      env["SLURM_CPU_BIND_LIST"] = mask_list;
      env["SLURM_CPU_BIND_VERBOSE"] = "quiet";
      if (!na.gpus.empty()) {
        env["SLURM_JOB_GPUS"] = join(na.gpus);
        env["SLURM_GPUS_ON_NODE"] = std::to_string(na.gpus.size());
        const auto& mine = local < static_cast<int>(na.bindings.size()) ? na.bindings[local].gpus : na.gpus;
        std::vector<int> visible;
        for (int g : mine) {
          if (constrain_devices) {
            visible.push_back(static_cast<int>(std::find(na.gpus.begin(), na.gpus.end(), g) - na.gpus.begin()));
          } else {
            visible.push_back(g);
          }
        }
        env["CUDA_VISIBLE_DEVICES"] = join(visible);
      }
      out.push_back(std::move(env));
    }
  }
  return out;
}

}  // namespace gcsim
