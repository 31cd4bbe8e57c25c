#include "models/runtime/step_runtime.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <fnmatch.h>

#include "sim/core/input_file.hpp"
#include "sim/core/units.hpp"
#include "sim/core/yaml_check.hpp"
#include "sim/workload/job_request.hpp"

namespace gcsim {

// ---------------------------------------------------------------------------------------
// Profiles
// ---------------------------------------------------------------------------------------

// Defaults by GPU count: the model a job of that size typically trains in the published
// GPU-cluster studies (Philly, Helios: single-GPU jobs are small CNNs, large jobs are
// language models), with fp32 gradients of 4 bytes per parameter:
//   1 GPU      ResNet-50      25.6 M params -> 102 MB   compute 0.20 s  input 19 MB (256 x 224x224x3 uint8)
//   2-8 GPUs   BERT-large      340 M params -> 1.36 GB  compute 0.35 s  input 0.5 MB
//   > 8 GPUs   GPT-2 XL        1.5 G params -> 6.2 GB   compute 1.00 s  input 0.5 MB
// Overlap 0.5 (PyTorch DDP buckets overlap backward with the all-reduce, typically about
// half); the data loader takes half the compute time on GPU-local cores, so it is hidden
// unless remote cores or memory slow it by more than 2x. Parameter counts: He et al. 2016,
// Devlin et al. 2019, Radford et al. 2019.
WorkloadProfile default_profile(int64_t gpus) {
  WorkloadProfile p;
  if (gpus <= 1) {
    p.name = "default-1gpu-resnet50";
    p.compute_s = 0.20;
    p.grad_bytes = 102'400'000;
    p.input_bytes = 19'267'584;
  } else if (gpus <= 8) {
    p.name = "default-node-bert-large";
    p.compute_s = 0.35;
    p.grad_bytes = 1'360'000'000;
    p.input_bytes = 524'288;
  } else {
    p.name = "default-multinode-gpt2-xl";
    p.compute_s = 1.0;
    p.grad_bytes = 6'200'000'000;
    p.input_bytes = 524'288;
  }
  p.overlap = 0.5;
  p.loader_s = 0.5 * p.compute_s;
  return p;
}

WorkloadProfile ProfileSet::for_job(const Job& job) const {
  // The profile the trace names wins when the profiles file defines it.
  if (!job.profile.empty())
    if (auto it = profiles.find(job.profile); it != profiles.end()) return it->second;
  const int64_t gpus = job_gpus(job);
  for (const auto& r : rules) {
    if (!r.name_glob.empty() && fnmatch(r.name_glob.c_str(), job.name.c_str(), 0) != 0) continue;
    if (gpus < r.min_gpus || gpus > r.max_gpus) continue;
    return profiles.at(r.profile);
  }
  return default_profile(gpus);
}

namespace {

class ProfileLoader : public YamlChecker {
 public:
  using YamlChecker::YamlChecker;

  void load(const YAML::Node& root, ProfileSet& set) {
    const YamlMap top = map_of(root, "workload profiles", {"profiles", "rules"});
    if (const YamlEntry* e = find(top, "profiles")) {
      if (!e->value.IsMap()) error(at(*e), "expected a map of named profiles for 'profiles', got " + describe(e->value));
      else
        for (auto it = e->value.begin(); it != e->value.end(); ++it) load_profile(it->first, it->second, set);
    }
    if (const YamlEntry* e = find(top, "rules"); e && sequence_or_error(*e))
      for (const auto& item : e->value) load_rule(item, set);
  }

 private:
  void load_profile(const YAML::Node& key, const YAML::Node& node, ProfileSet& set) {
    WorkloadProfile p;
    p.name = key.Scalar();
    const YamlMap m = map_of(node, "profile '" + p.name + "'",
                             {"compute_s", "grad_bytes", "collective", "overlap", "input_bytes", "loader_s", "loader_rho"});
    if (auto* x = find(m, "compute_s")) p.compute_s = positive(*x).value_or(p.compute_s);
    if (auto* x = find(m, "grad_bytes")) p.grad_bytes = get_bytes(*x).value_or(p.grad_bytes);
    if (auto* x = find(m, "input_bytes")) p.input_bytes = get_bytes(*x).value_or(p.input_bytes);
    if (auto* x = find(m, "loader_s")) p.loader_s = fraction(*x, 1e9).value_or(p.loader_s);
    if (auto* x = find(m, "overlap")) p.overlap = fraction(*x, 1).value_or(p.overlap);
    if (auto* x = find(m, "loader_rho")) p.loader_rho = fraction(*x, 0.999).value_or(p.loader_rho);
    if (auto* x = find(m, "collective")) {
      if (auto s = get_string(*x)) {
        if (auto c = parse_collective(*s)) p.collective = *c;
        else error(x->value, "unknown collective " + quote(*s) + " (all_reduce, all_gather, reduce_scatter, ...)");
      }
    }
    set.profiles[p.name] = p;
  }

  void load_rule(const YAML::Node& node, ProfileSet& set) {
    const YamlMap m = map_of(node, "rule", {"name", "min_gpus", "max_gpus", "profile"});
    ProfileRule r;
    if (auto* x = find(m, "name")) r.name_glob = get_string(*x).value_or("");
    if (auto* x = find(m, "min_gpus")) r.min_gpus = get_int(*x, 0, INT64_MAX).value_or(0);
    if (auto* x = find(m, "max_gpus")) r.max_gpus = get_int(*x, 0, INT64_MAX).value_or(INT64_MAX);
    if (const YamlEntry* x = require(m, node, "profile", "rule")) {
      if (auto s = get_string(*x)) {
        r.profile = *s;
        if (!set.profiles.count(r.profile)) error(x->value, "rule names unknown profile " + quote(r.profile));
      }
    }
    set.rules.push_back(r);
  }

  std::optional<double> positive(const YamlEntry& e) {
    auto v = get_double(e);
    if (v && *v <= 0) {
      error(e.value, quote(e.key) + " must be positive");
      return std::nullopt;
    }
    return v;
  }
  std::optional<double> fraction(const YamlEntry& e, double max) {
    auto v = get_double(e);
    if (v && (*v < 0 || *v > max)) {
      error(e.value, quote(e.key) + " must be in [0, " + std::to_string(max).substr(0, 5) + "]");
      return std::nullopt;
    }
    return v;
  }
};

}  // namespace

ProfileSet parse_profiles(const std::string& text, const std::string& path) {
  ProfileSet set;
  load_yaml_checked(text, path, [&](const YAML::Node& root, Diagnostics& d) { ProfileLoader(path, d).load(root, set); });
  return set;
}

ProfileSet load_profiles(const std::string& path) { return parse_profiles(read_input_file(path), path); }

// ---------------------------------------------------------------------------------------
// The model
// ---------------------------------------------------------------------------------------

struct StepRuntimeModel::Running {
  int job = -1;
  WorkloadProfile profile;
  Allocation alloc;
  StepBreakdown base;      // without contention
  double reference_s = 0;  // step time at the reference placement
  double reported = 1;     // speed last given to the Simulation
  bool has_flows = false;
};

StepRuntimeModel::StepRuntimeModel(const Cluster& cluster, const NcclTuning& tuning, const HostParams& host,
                                   const ProfileSet& profiles, StepRuntimeOptions opt)
    : cluster_(&cluster), tuning_(&tuning), profiles_(&profiles), opt_(std::move(opt)) {
  topo_by_template_.reserve(cluster.templates.size());
  for (const auto& t : cluster.templates) topo_by_template_.push_back(build_node_topology(t));
  for (size_t i = 0; i < cluster.templates.size(); ++i)
    host_by_template_.push_back(std::make_unique<HostModel>(host, cluster.templates[i], topo_by_template_[i]));
  if (opt_.contention) {
    links_ = std::make_unique<LinkRegistry>(cluster);
    solver_ = std::make_unique<ContentionSolver>(links_->capacities());
  }
  empty_ = std::make_unique<ClusterState>(cluster);
}

StepRuntimeModel::~StepRuntimeModel() = default;

const HostModel& StepRuntimeModel::host_model(int node) const {
  return *host_by_template_[static_cast<size_t>(cluster_->nodes[node].template_index)];
}

// One NCCL analysis per GPU-set shape: the network is modelled as non-blocking inside
// the NCCL model (sharing is the contention layer's), so node identity does not matter,
// only each node's template and the GPU indices on it.
const NcclModel* StepRuntimeModel::nccl_for(const Allocation& a) const {
  std::vector<std::pair<int, int>> key;
  CommSpec spec;
  spec.cluster = cluster_;
  for (size_t k = 0; k < a.nodes.size(); ++k) {
    const NodeAlloc& n = a.nodes[k];
    for (int g : n.gpus) {
      key.emplace_back(static_cast<int>(k) << 16 | cluster_->nodes[n.node].template_index, g);
      spec.gpus.push_back({n.node, g});
    }
  }
  if (spec.gpus.size() < 2) return nullptr;
  auto it = nccl_cache_.find(key);
  if (it != nccl_cache_.end()) return it->second.get();
  std::unique_ptr<NcclModel> m;
  try {
    m = std::make_unique<NcclModel>(*tuning_, spec);
  } catch (const std::invalid_argument&) {
    m = nullptr;  // e.g. a multi-node job on nodes without NICs: no modelled communication
  }
  return nccl_cache_.emplace(std::move(key), std::move(m)).first->second.get();
}

const StepRuntimeModel::HostFigures& StepRuntimeModel::host_figures(const NodeAlloc& n, const HostJobOptions& ho) const {
  // host_effects reads the node's template, the options (the loader's rho varies by
  // profile; the rest is the run's), and of the allocation its GPUs, cores and bindings.
  std::vector<int>& k = host_key_;
  k.clear();
  auto put = [&](const std::vector<int>& v) {
    k.push_back(static_cast<int>(v.size()));
    k.insert(k.end(), v.begin(), v.end());
  };
  k.push_back(cluster_->nodes[n.node].template_index);
  const auto rho = std::bit_cast<uint64_t>(ho.loader_rho);
  k.push_back(static_cast<int>(rho >> 32));
  k.push_back(static_cast<int>(rho & 0xffffffffU));
  put(n.gpus);
  put(n.cores);
  for (const TaskBinding& b : n.bindings) {
    k.push_back(b.mem_numa);
    put(b.cores);
    put(b.gpus);
  }
  auto it = host_cache_.find(k);
  if (it != host_cache_.end()) return it->second;
  if (host_cache_.size() >= 200000) host_cache_.clear();
  const HostEffects e = host_model(n.node).host_effects(n, ho);
  return host_cache_.emplace(k, HostFigures{e.loader_factor, e.staging_factor, e.h2d_Bps, e.host_staged}).first->second;
}

StepBreakdown StepRuntimeModel::step(const Job& job, const Allocation& a, int running_job) const {
  const WorkloadProfile p = profiles_->for_job(job);
  StepBreakdown b;
  b.compute_s = p.compute_s;
  // Host side: the slowest node decides (data-parallel steps wait for every rank).
  double h2d = 0;
  HostJobOptions ho = opt_.host;
  ho.notes = false;  // formatting them was 5% of a 100k-job GPU run
  if (p.loader_rho >= 0) ho.loader_rho = p.loader_rho;
  for (const NodeAlloc& n : a.nodes) {
    if (n.gpus.empty()) continue;
    const HostFigures& e = host_figures(n, ho);
    b.loader_factor = std::min(b.loader_factor, e.loader_factor);
    b.staging_factor = std::min(b.staging_factor, e.host_staged ? e.staging_factor : 1.0);
    h2d = h2d == 0 ? e.h2d_Bps : std::min(h2d, e.h2d_Bps);
  }
  b.load_s = p.loader_s / b.loader_factor + (h2d > 0 ? static_cast<double>(p.input_bytes) / h2d : 0);
  if (const NcclModel* m = nccl_for(a); m && p.grad_bytes > 0) {
    const CollectiveCost c = nccl_cost(*m, p.collective, p.grad_bytes);
    b.algo = c.algo + "/" + c.proto;
    b.comm_s = c.time_us * 1e-6 / b.staging_factor;
  }
  if (running_job >= 0 && solver_) b.contention_slowdown = solver_->owner_slowdown(running_job);
  b.comm_s *= b.contention_slowdown;
  b.step_s = std::max(b.compute_s + (1 - p.overlap) * b.comm_s, b.load_s);
  return b;
}

double StepRuntimeModel::reference_step_s(const Job& job, const JobShape& shape, const Allocation& actual) const {
  if (opt_.reference == ReferencePlacement::kIdeal) {
    // The best placement on this cluster: the same request, numa-bound, nothing else running.
    const WorkloadProfile p = profiles_->for_job(job);
    IdealKey key{shape, {p.compute_s, p.grad_bytes, static_cast<int>(p.collective), p.overlap, p.input_bytes,
                         p.loader_s, p.loader_rho}};
    key.first.time_limit = SimTime::infinite();  // placement on an empty cluster ignores it
    auto it = ideal_cache_.find(key);
    if (it == ideal_cache_.end()) {
      std::optional<double> ref;
      if (auto ideal = ideal_alloc_.allocate(shape, *empty_, empty_->partition_order(shape.partition)))
        ref = step(job, *ideal).step_s;
      it = ideal_cache_.emplace(std::move(key), ref).first;
    }
    if (it->second) return *it->second;
  }
  return step(job, actual).step_s;  // as recorded: the placement it got, alone
}

void StepRuntimeModel::job_started(int j, const Job& job, const JobShape& shape, const Allocation& a) {
  auto r = std::make_unique<Running>();
  r->job = j;
  r->profile = profiles_->for_job(job);
  r->alloc = a;
  r->base = step(job, a);
  r->reference_s = reference_step_s(job, shape, a);
  if (solver_ && a.gpus() > 1 && r->profile.grad_bytes > 0) {
    std::vector<PlacedGpu> ranks;
    for (const NodeAlloc& n : a.nodes)
      for (int g : n.gpus) ranks.push_back({n.node, g});
    const NcclModel* m = nccl_for(a);
    if (m) {
      solver_->add_flows(ring_flows(*links_, j, ranks, std::max(1, m->ring().channels)));
      r->has_flows = true;
    }
  }
  // A GPU set NCCL cannot span (a multi-node job on nodes without NICs) has no modelled
  // communication: it runs at its compute and loader speed, and is counted.
  if (a.gpus() > 1 && r->profile.grad_bytes > 0 && !nccl_for(a)) ++unmodelled_comm_;
  running_[j] = std::move(r);
  started_.push_back(j);
}

void StepRuntimeModel::job_ended(int j) {
  auto it = running_.find(j);
  if (it == running_.end()) return;
  if (it->second->has_flows) solver_->remove_owner(j);
  running_.erase(it);
}

double StepRuntimeModel::speed_of(const Running& r) const {
  double comm = r.base.comm_s;
  if (r.has_flows) comm *= solver_->owner_slowdown(r.job);
  const double step = std::max(r.base.compute_s + (1 - r.profile.overlap) * comm, r.base.load_s);
  return step > 0 ? r.reference_s / step : 1.0;
}

void StepRuntimeModel::changed_speeds(std::vector<std::pair<int, double>>& out) {
  // Only jobs just started and owners of flows the solve recomputed can have a new
  // speed (a job's speed changes only through its flows' rates): visiting those, not
  // every running job, keeps a change O(touched) on a cluster running thousands.
  if (solver_) solver_->solve();
  std::vector<int>& visit = visit_;
  visit.assign(started_.begin(), started_.end());
  if (solver_) visit.insert(visit.end(), solver_->solved_owners().begin(), solver_->solved_owners().end());
  std::sort(visit.begin(), visit.end());
  visit.erase(std::unique(visit.begin(), visit.end()), visit.end());
  std::sort(started_.begin(), started_.end());
  for (int j : visit) {
    auto it = running_.find(j);
    if (it == running_.end()) continue;
    Running& r = *it->second;
    const double v = speed_of(r);
    const bool fresh = std::binary_search(started_.begin(), started_.end(), j);
    if (fresh || std::abs(v - r.reported) > 1e-9 * r.reported) {
      r.reported = v;
      out.emplace_back(j, v);
    }
  }
  started_.clear();
}

}  // namespace gcsim
