// priority/multifactor (shared/research/slurm_internals.md section 3): the weighted sum
// of age, fair-share, job size, partition, QOS and TRES factors, recomputed at submit
// and every PriorityCalcPeriod; usage decayed with PriorityDecayHalfLife and charged
// up the association tree; fair-share by Fair Tree (default) or the classic formula.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "sim/cluster/cluster.hpp"
#include "sim/core/diagnostics.hpp"
#include "sim/core/time.hpp"
#include "sim/workload/accounts.hpp"

namespace gcsim {

struct PriorityConfig {
  bool multifactor = false;  // PriorityType=priority/multifactor (else basic: all equal)
  double w_age = 0, w_fairshare = 0, w_jobsize = 0, w_partition = 0, w_qos = 0, w_assoc = 0;
  std::map<std::string, double> w_tres;  // lower-case TRES name ("cpu", "mem", "gres/gpu") -> weight
  SimTime max_age = SimTime::seconds(7 * 86400);
  SimTime decay_half_life = SimTime::seconds(7 * 86400);
  SimTime calc_period = SimTime::seconds(300);
  bool favor_small = false;
  bool fair_tree = true;        // PriorityFlags without NO_FAIR_TREE / DEPTH_OBLIVIOUS
  bool small_relative_to_time = false;
  double damping = 1.0;         // FairShareDampeningFactor
  bool have_dbd = false;        // AccountingStorageType=accounting_storage/slurmdbd
};

/// Reads the Priority* keys; without slurmdbd the age and fair-share weights are
/// dropped with the warning slurmctld logs.
[[nodiscard]] PriorityConfig read_priority_config(const Cluster& cluster, Diagnostics& diags);

/// What the priority plugin needs to know about one job.
struct PriorityJob {
  int assoc = 0;            // user association (index into the AccountTree)
  int partition = 0;
  int nodes = 1;
  int64_t cpus = 1;
  int64_t mem_mb = 0;
  int64_t gpus = 0;
  SimTime limit;            // for SMALL_RELATIVE_TO_TIME
};

class MultifactorPriority {
 public:
  MultifactorPriority(const Cluster& cluster, PriorityConfig cfg, AccountTree tree);
  [[nodiscard]] const PriorityConfig& config() const { return cfg_; }
  [[nodiscard]] const AccountTree& tree() const { return tree_; }
  /// The association a job is charged to: (account or the user's default account, user);
  /// added to the tree (Fairshare=1) when the dump lacks it.
  int association(const std::string& account, const std::string& user);

  /// Decays all usage from the last call to `now` and charges `running` (assoc,
  /// billable TRES, run seconds in the period) up the tree; then refreshes fair-share
  /// factors. Call at every PriorityCalcPeriod tick and at job ends.
  struct Charge {
    int assoc;
    double billable;
    double seconds;
  };
  void decay_and_charge(SimTime now, const std::vector<Charge>& running);
  /// Charges a job's last partial period at its end (no decay, factors unchanged
  /// until the next PriorityCalcPeriod tick, as slurmctld does).
  void charge(const Charge& c);
  /// The job's priority now (>= 1), from factors; `eligible` starts the age clock.
  [[nodiscard]] int64_t priority(const PriorityJob& j, SimTime now, SimTime eligible) const;
  [[nodiscard]] double fairshare_factor(int assoc) const { return fs_[assoc]; }
  [[nodiscard]] double usage(int assoc) const { return usage_[assoc]; }

 private:
  void refresh_fairshare();
  const Cluster* cluster_;
  PriorityConfig cfg_;
  AccountTree tree_;
  std::vector<double> usage_;
  std::vector<double> fs_;
  SimTime last_decay_;
  bool decayed_once_ = false;
  int64_t total_cpus_ = 0;
  int total_nodes_ = 0;
  double max_part_factor_ = 1;
  struct PartTres {
    int64_t cpus = 0, mem = 0, gpus = 0;
  };
  std::vector<PartTres> part_tres_;  // per partition, for the TRES factors
};

}  // namespace gcsim
