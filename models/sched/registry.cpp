#include "models/sched/registry.hpp"

#include "models/sched/baseline.hpp"
#include "models/sched/bestfit.hpp"
#include "models/sched/las.hpp"

namespace gcsim {

const std::vector<PolicyInfo>& policy_list() {
  static const std::vector<PolicyInfo> list = {
      {"fcfs", "strict first-come first-served; the first job that does not fit blocks the queue"},
      {"easy", "EASY backfill: one reservation for the queue head, later jobs may not delay it"},
      {"sjf", "shortest-job-first by time limit, with EASY backfill for the first job that does not fit"},
      {"bestfit", "EASY backfill; each job starts where it packs tightest (PCIe switch, NVLink island/NUMA, leaf switch), best fit"},
      {"slurm", "Slurm 22.05-23.11: main loop + backfill reservations, multifactor priority, cons_tres, topology/tree"},
      {"las", "Tiresias 2D-LAS: queues by attained GPU-seconds, FIFO within a queue, preempts lower queues to start a job"},
      {"replay", "no scheduling: each job starts at its recorded start time (late ones, if it does not fit then, in turn)"},
  };
  return list;
}

std::unique_ptr<Policy> make_policy(const std::string& name) {
  if (name == "fcfs") return std::make_unique<FcfsPolicy>();
  if (name == "easy") return std::make_unique<EasyPolicy>();
  if (name == "sjf") return std::make_unique<SjfPolicy>();
  if (name == "bestfit") return std::make_unique<BestFitPolicy>();
  if (name == "las") return std::make_unique<LasPolicy>();
  if (name == "replay") return std::make_unique<ReplayPolicy>();
  if (name == "slurm") {
    Diagnostics ignored;
    return make_policy(name, SlurmPolicyInputs{}, ignored);
  }
  return nullptr;
}

std::unique_ptr<Policy> make_policy(const std::string& name, const SlurmPolicyInputs& in, Diagnostics& warnings) {
  if (name == "slurm") {
    static const Cluster kEmpty;
    SlurmPolicyInputs x = in;
    if (!x.cluster) x.cluster = &kEmpty;
    return std::make_unique<SlurmPolicy>(x, warnings);
  }
  return make_policy(name);
}

}  // namespace gcsim
