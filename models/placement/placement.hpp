// The placement library: which cores, GPUs and memory domain each task of a job
// gets on one node, under several policies. The same code serves the simulator
// (through PlacementAllocator) and the real mode (which binds what it returns).
//
//  slurm        select/cons_tres order (slurm_internals.md 4.4-4.6): sockets by free
//               cores, GPU sockets marked required, surplus cores trimmed evenly,
//               one GPU per used socket then by NVLink score; task/affinity bindings.
//  numa-bound   cores only from the NUMA domains of the job's GPUs (or one domain per
//               task for CPU jobs); the job waits rather than run remote.
//  unbound      lowest free cores and GPUs anywhere, as a topology-unaware scheduler.
//  k8s-*        Kubernetes Topology Manager policies none, best-effort, restricted and
//               single-numa-node over the static CPU manager and a device plugin that
//               reports NUMA hints.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sim/cluster/cluster.hpp"
#include "sim/placement/allocator.hpp"
#include "sim/placement/job_shape.hpp"
#include "sim/placement/node_state.hpp"

namespace gcsim {

enum class PlacementMode { kSlurm, kNumaBound, kUnbound, kK8sNone, kK8sBestEffort, kK8sRestricted, kK8sSingleNuma };

[[nodiscard]] std::optional<PlacementMode> parse_placement_mode(const std::string& name);
[[nodiscard]] std::string placement_mode_name(PlacementMode m);
[[nodiscard]] const std::vector<std::string>& placement_mode_names();

/// What one node must hold for a job.
struct NodeRequest {
  int tasks = 1;
  int cpus_per_task = 1;
  int gpus = 0;            // GPUs on this node in total
  int gpus_per_task = 0;   // when the job asked --gpus-per-task
  int cpus_per_gpu = 0;
  std::string gpu_type;    // empty = any
  std::vector<std::string> gpu_types_allowed;  // any one of these; empty = any
  int64_t mem_mb = 0;      // memory on this node
  bool exclusive = false;
  /// --gres-flags=enforce-binding: GPUs only on sockets with free cores (--cpus-per-gpu
  /// of them per GPU); the cores themselves may spill to other sockets, as on 22.05.
  bool enforce_binding = false;
  std::string gpu_bind;     // "", "closest", "single:N", "per_task:N", "none", ...
  std::string distribution; // "", "block", "cyclic", "block:block", "*:fcyclic", ...
  bool tasks_per_node_given = false;  // --ntasks-per-node (Slurm then lays tasks cyclically over sockets)
  /// Slurm knows this node's task count before it picks cores (cons_tres _select_cores:
  /// --ntasks-per-node, one task, one task per node, or -N1 with -n). false: a job of
  /// several tasks whose node count may vary (-n without -N or --ntasks-per-node),
  /// whose GPU socket filter then keeps every core of the GPUs' sockets for the task
  /// distribution to pick from.
  bool tasks_fixed = true;
  /// Slurm's first pass (cons_tres choose_nodes, gres_select_filter_sock_core with
  /// first_pass): the GPUs must have enough free cores on their own sockets, with
  /// --cpus-per-gpu counted per socket, and every core on the GPUs' sockets. false: a
  /// second pass may take other sockets' cores.
  bool first_pass = false;
  /// false: a placement that ends with no GPU leaves `bindings` empty and does not
  /// compute them (the simulator's runs; see PlacementAllocator::keep_cpu_job_bindings).
  bool keep_cpu_bindings = true;
  /// Only whether the request fits: no task bindings are computed (slurm selection
  /// sizes every open node's capacity by placing on it, and keeps none of those).
  bool fit_only = false;
};

/// Why a request does not fit, or the placement it gets.
struct NodePlacement {
  bool fits = false;
  std::string reason;       // when !fits
  NodeAlloc alloc;          // cores, gpus, mem, per-task bindings
};

/// Places `req` on node `node` of `state` under `mode`. Pure: `state` is not changed.
[[nodiscard]] NodePlacement place_on_node(const ClusterState& state, int node, const NodeRequest& req,
                                          PlacementMode mode);

/// The same, on a free-resource description alone (the real mode, tests): `core_free`
/// one bit per abstract core (a CoreMask converts), `gpu_free` bit mask.
[[nodiscard]] NodePlacement place_on_template(const NodeTemplate& t, CoreBits core_free,
                                              uint64_t gpu_free, int64_t free_mem_mb, const NodeRequest& req,
                                              PlacementMode mode);

/// What `tasks` tasks and `gpus` GPUs of `shape` ask of one node of template `t`
/// (memory from the job's --mem* options or the defaults).
[[nodiscard]] NodeRequest node_request(const JobShape& shape, const NodeTemplate& t, int tasks, int gpus);

/// Allocator over the placement library: the node loop of NodeLoopAllocator with
/// place_on_node choosing inside each node.
class PlacementAllocator final : public NodeLoopAllocator {
 public:
  explicit PlacementAllocator(PlacementMode mode) : mode_(mode) {}
  [[nodiscard]] std::string name() const override { return placement_mode_name(mode_); }
  [[nodiscard]] std::optional<NodeAlloc> take_on_node(const JobShape& shape, const ClusterState& state, int node,
                                                      int tasks, int gpus) const override;
  /// take_on_node in Slurm's first pass (NodeRequest::first_pass) or not.
  [[nodiscard]] std::optional<NodeAlloc> take_on_node_in_pass(const JobShape& shape, const ClusterState& state,
                                                              int node, int tasks, int gpus, bool first_pass) const;
  /// Whether take_on_node_in_pass would place the tasks, without its task bindings.
  [[nodiscard]] bool fits_on_node_in_pass(const JobShape& shape, const ClusterState& state, int node, int tasks,
                                          int gpus, bool first_pass) const;
  /// slurm mode, one-node jobs: cons_tres's best fit. Nodes rank by sched_weight =
  /// Weight << 8 | (0xff - near_gpu_cnt), where near_gpu_cnt counts usable GPUs on
  /// sockets that still have free cores (capped by the job's need), then by the
  /// fewest available CPUs that still fit, then node order (slurm_internals.md 4.1, 4.3).
  /// Nodes that could not hold the whole job are left out (the loop could not use them).
  void order_nodes(const JobShape& shape, const ClusterState& state, const std::vector<int>& node_order,
                   NodeOrder& out) const override;
  /// Per-task bindings of jobs without GPUs (what `gcsim real place` and srun_environment
  /// print): kept by default. A simulation reads bindings of GPU jobs only (host model,
  /// compare metrics) and drops the others; for logs of thousand-task MPI jobs (Curie
  /// averages 720 tasks a job) they are most of the memory a run holds.
  void keep_cpu_job_bindings(bool keep) { keep_cpu_bindings_ = keep; }
  /// slurm and unbound take any count of whole-core CPU tasks that fit the free cores.
  [[nodiscard]] bool takes_any_cpu_count() const override {
    return mode_ == PlacementMode::kSlurm || mode_ == PlacementMode::kUnbound;
  }

 private:
  /// The placement both of the above ask for (fit_only: NodeRequest::fit_only).
  [[nodiscard]] NodePlacement place_in_pass(const JobShape& shape, const ClusterState& state, int node, int tasks,
                                            int gpus, bool first_pass, bool fit_only) const;
  PlacementMode mode_;
  bool keep_cpu_bindings_ = true;
};

/// cons_tres's per-node sched_weight for a job: Weight << 8 | (0xff - near_gpu_cnt),
/// near_gpu_cnt = free GPUs of the job's type on sockets that still have free cores,
/// capped by the job's per-node GPU need (slurm_internals.md 4.1). CPU jobs: low byte 0xff.
[[nodiscard]] int64_t slurm_sched_weight(const JobShape& shape, const ClusterState& state, int node);

/// The environment srun gives each task of a step over `alloc` (SLURM_PROCID,
/// SLURM_LOCALID, SLURM_NODEID, SLURM_NTASKS, SLURM_JOB_GPUS, CUDA_VISIBLE_DEVICES,
/// SLURM_CPU_BIND*), in global task order. `constrain_devices` = task/cgroup
/// ConstrainDevices=yes (CUDA_VISIBLE_DEVICES then counts from 0 on each node).
[[nodiscard]] std::vector<std::map<std::string, std::string>> srun_environment(const Cluster& cluster,
                                                                             const Allocation& alloc,
                                                                             bool constrain_devices);

/// Slurm's hex CPU mask for a set of OS CPU ids ("0x3").
[[nodiscard]] std::string cpu_mask_hex(const std::vector<int>& os_cpus);

}  // namespace gcsim
