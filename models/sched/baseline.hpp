// Baseline policies over real per-node resources:
//  fcfs - strict first-come first-served: the first job that does not fit blocks the queue.
//  easy - EASY backfill (Lifka 1995; Mu'alem & Feitelson 2001): the head job gets a
//         reservation at the earliest time enough running jobs will have ended (by their
//         time limits); later jobs start now only if they do not delay that reservation.
#pragma once

#include "sim/sched/policy.hpp"

namespace gcsim {

class FcfsPolicy final : public Policy {
 public:
  [[nodiscard]] std::string name() const override { return "fcfs"; }
  void schedule(SchedContext& ctx) override;
};

class EasyPolicy final : public Policy {
 public:
  [[nodiscard]] std::string name() const override { return "easy"; }
  [[nodiscard]] std::vector<std::pair<std::string, std::string>> parameters() const override {
    return {{"reservations", "1"}, {"planning_time", "time_limit"}};
  }
  void schedule(SchedContext& ctx) override;
};

}  // namespace gcsim
