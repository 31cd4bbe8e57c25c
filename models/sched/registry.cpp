#include "models/sched/registry.hpp"

#include "models/sched/baseline.hpp"

namespace gcsim {

const std::vector<PolicyInfo>& policy_list() {
  static const std::vector<PolicyInfo> list = {
      {"fcfs", "strict first-come first-served; the first job that does not fit blocks the queue"},
      {"easy", "EASY backfill: one reservation for the queue head, later jobs may not delay it"},
  };
  return list;
}

std::unique_ptr<Policy> make_policy(const std::string& name) {
  if (name == "fcfs") return std::make_unique<FcfsPolicy>();
  if (name == "easy") return std::make_unique<EasyPolicy>();
  return nullptr;
}

}  // namespace gcsim
