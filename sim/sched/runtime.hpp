// The seam through which placement and contention change how long a job runs. A
// RuntimeModel says how fast each running job progresses: reference seconds of its
// trace duration per simulated second (1 = as recorded; 0.8 = its placement or the
// jobs it shares links with make it 25% slower). The Simulation keeps each job's
// remaining reference work and moves its end event whenever a speed changes; the
// time limit stays a wall-clock limit. models/runtime implements it; without a model
// every job runs its recorded duration.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "sim/placement/job_shape.hpp"
#include "sim/placement/node_state.hpp"
#include "sim/workload/job.hpp"

namespace gcsim {

class RuntimeModel {
 public:
  virtual ~RuntimeModel() = default;
  [[nodiscard]] virtual std::string name() const = 0;
  /// Job `j` starts on `a` (called before speeds()).
  virtual void job_started(int j, const Job& job, const JobShape& shape, const Allocation& a) = 0;
  /// Job `j` ended or was killed (called before speeds()).
  virtual void job_ended(int j) = 0;
  /// After a start or an end: the running jobs whose speed is now different from what
  /// the model last reported (a newly started job is always listed), with the new
  /// speed in (0, inf). Listed in ascending job order.
  virtual void changed_speeds(std::vector<std::pair<int, double>>& out) = 0;
};

}  // namespace gcsim
