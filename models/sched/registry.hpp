// The policy registry: an explicit list in a fixed order (no static self-registration).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "models/sched/slurm_policy.hpp"
#include "sim/sched/policy.hpp"

namespace gcsim {

struct PolicyInfo {
  std::string name;
  std::string summary;
};

[[nodiscard]] const std::vector<PolicyInfo>& policy_list();
/// std::nullptr when the name is unknown. Policies that read the cluster's slurm.conf
/// keys (slurm) need `cluster`; without one they use Slurm's defaults on an empty map.
[[nodiscard]] std::unique_ptr<Policy> make_policy(const std::string& name);
[[nodiscard]] std::unique_ptr<Policy> make_policy(const std::string& name, const SlurmPolicyInputs& in,
                                                  Diagnostics& warnings);

}  // namespace gcsim
