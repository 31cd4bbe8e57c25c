// The policy registry: an explicit list in a fixed order (no static self-registration).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "sim/sched/policy.hpp"

namespace gcsim {

struct PolicyInfo {
  std::string name;
  std::string summary;
};

[[nodiscard]] const std::vector<PolicyInfo>& policy_list();
/// std::nullptr when the name is unknown.
[[nodiscard]] std::unique_ptr<Policy> make_policy(const std::string& name);

}  // namespace gcsim
