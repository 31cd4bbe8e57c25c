#include "models/priority/multifactor.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include "sim/core/input_file.hpp"
#include "sim/workload/slurm_time.hpp"

namespace gcsim {

PriorityConfig read_priority_config(const Cluster& cluster, Diagnostics& diags) {
  PriorityConfig c;
  auto loc_of = [&](const std::string& key) { return cluster.slurm_param_loc(key); };
  const SourceLoc loc = loc_of("PriorityType");
  auto param = [&](const std::string& k) { return cluster.slurm_param(k); };
  if (auto v = param("PriorityType")) c.multifactor = to_lower(*v) == "priority/multifactor";
  if (auto v = param("AccountingStorageType")) c.have_dbd = to_lower(*v) == "accounting_storage/slurmdbd";
  auto weight = [&](const char* key, double& out) {
    if (auto v = param(key)) {
      if (auto n = parse_non_negative_number(*v)) out = *n;
      else diags.error(loc_of(key), std::string(key) + "=" + *v + ": expected a non-negative number");
    }
  };
  weight("PriorityWeightAge", c.w_age);
  weight("PriorityWeightFairshare", c.w_fairshare);
  weight("PriorityWeightJobSize", c.w_jobsize);
  weight("PriorityWeightPartition", c.w_partition);
  weight("PriorityWeightQOS", c.w_qos);
  weight("PriorityWeightAssoc", c.w_assoc);
  weight("FairShareDampeningFactor", c.damping);
  if (auto v = param("PriorityWeightTRES"))
    for (auto item : split(*v, ',')) {
      const auto eq = item.find('=');
      auto n = eq == std::string_view::npos ? std::nullopt : parse_non_negative_number(item.substr(eq + 1));
      if (!n) diags.error(loc_of("PriorityWeightTRES"), "PriorityWeightTRES item '" + std::string(item) + "': expected TRES=weight");
      else c.w_tres[to_lower(trim(item.substr(0, eq)))] = *n;
    }
  auto minutes = [&](const char* key, SimTime& out) {
    if (auto v = param(key)) {
      if (auto t = slurm_time::parse_time_limit(*v)) out = *t;
      else diags.error(loc_of(key), std::string(key) + "=" + *v + ": expected a Slurm time (minutes, D-HH, ...)");
    }
  };
  minutes("PriorityMaxAge", c.max_age);
  minutes("PriorityDecayHalfLife", c.decay_half_life);
  minutes("PriorityCalcPeriod", c.calc_period);
  if (auto v = param("PriorityFavorSmall")) c.favor_small = to_lower(*v) == "yes";
  if (auto v = param("PriorityFlags")) {
    const std::string l = to_lower(*v);
    if (l.find("no_fair_tree") != std::string::npos || l.find("depth_oblivious") != std::string::npos)
      c.fair_tree = false;
    c.small_relative_to_time = l.find("small_relative_to_time") != std::string::npos;
  }
  if (c.calc_period <= SimTime{}) c.calc_period = SimTime::seconds(300);
  if (c.multifactor && !c.have_dbd) {
    if (c.w_age > 0) diags.warning(loc_of("PriorityWeightAge"), "PriorityWeightAge can only be used with SlurmDBD, ignoring (as slurmctld does)");
    if (c.w_fairshare > 0)
      diags.warning(loc_of("PriorityWeightFairshare"), "PriorityWeightFairshare needs SlurmDBD associations, ignoring (as slurmctld does)");
    c.w_age = 0;
    c.w_fairshare = 0;
  }
  if (c.multifactor && (c.w_qos > 0 || c.w_assoc > 0))
    diags.warning(loc, "PriorityWeightQOS/PriorityWeightAssoc: QOS and association priorities are not modelled "
                       "(factor 0)");
  return c;
}

MultifactorPriority::MultifactorPriority(const Cluster& cluster, PriorityConfig cfg, AccountTree tree)
    : cluster_(&cluster), cfg_(std::move(cfg)), tree_(std::move(tree)) {
  for (const auto& n : cluster.nodes) total_cpus_ += cluster.templates[n.template_index].cpus();
  total_nodes_ = static_cast<int>(cluster.nodes.size());
  max_part_factor_ = 1;
  for (const auto& p : cluster.partitions)
    if (auto it = p.params.find("PriorityJobFactor"); it != p.params.end())
      if (auto n = parse_non_negative_number(it->second)) max_part_factor_ = std::max(max_part_factor_, *n);
  for (const auto& p : cluster.partitions) {
    PartTres t{};
    for (int n : p.nodes) {
      const auto& tm = cluster.tmpl(n);
      t.cpus += tm.cpus();
      t.mem += tm.memory_mb;
      t.gpus += static_cast<int64_t>(tm.gpus.size());
    }
    part_tres_.push_back(t);
  }
  usage_.assign(tree_.assocs.size(), 0.0);
  refresh_fairshare();
}

int MultifactorPriority::association(const std::string& account, const std::string& user) {
  std::string acct = account.empty() ? tree_.default_account(user) : account;
  if (acct.empty()) acct = "root";
  if (!tree_.account(acct)) tree_.ensure("root", acct, false);
  const int u = tree_.ensure(acct, user.empty() ? "root" : user, true);
  if (usage_.size() < tree_.assocs.size()) {
    usage_.resize(tree_.assocs.size(), 0.0);
    refresh_fairshare();
  }
  return u;
}

void MultifactorPriority::decay_and_charge(SimTime now, const std::vector<Charge>& running) {
  const double hl = cfg_.decay_half_life.to_seconds();
  const double dt = decayed_once_ ? (now - last_decay_).to_seconds() : 0.0;
  decayed_once_ = true;
  last_decay_ = now;
  const double per_s = hl > 0 ? 1.0 - std::log(2.0) / hl : 1.0;
  const double f = std::pow(per_s, std::max(dt, 0.0));
  for (double& u : usage_) u *= f;
  for (const auto& c : running) {
    const double add = c.seconds * std::pow(per_s, c.seconds) * c.billable;
    for (int a = c.assoc; a >= 0; a = tree_.assocs[a].parent) usage_[a] += add;
  }
  refresh_fairshare();
}

void MultifactorPriority::charge(const Charge& c) {
  const double hl = cfg_.decay_half_life.to_seconds();
  const double per_s = hl > 0 ? 1.0 - std::log(2.0) / hl : 1.0;
  const double add = c.seconds * std::pow(per_s, c.seconds) * c.billable;
  for (int a = c.assoc; a >= 0; a = tree_.assocs[a].parent) usage_[a] += add;
}

void MultifactorPriority::refresh_fairshare() {
  const auto& A = tree_.assocs;
  fs_.assign(A.size(), 1.0);
  if (A.empty()) return;
  auto norm_shares = [&](int a) {
    const int p = A[a].parent;
    if (p < 0) return 1.0;
    double sum = 0;
    for (int c : A[p].children) sum += static_cast<double>(std::max<int64_t>(A[c].shares, 0));
    return sum > 0 ? static_cast<double>(std::max<int64_t>(A[a].shares, 0)) / sum : 0.0;
  };
  const double inf = std::numeric_limits<double>::infinity();
  if (cfg_.fair_tree) {
    std::vector<double> level(A.size(), 0.0);
    int users = 0;
    for (size_t a = 1; a < A.size(); ++a) {
      if (A[a].is_user) ++users;
      if (A[a].shares < 0) {
        level[a] = inf;
        continue;
      }
      const double s = norm_shares(static_cast<int>(a));
      const double pu = usage_[A[a].parent];
      const double u = pu > 0 ? usage_[a] / pu : 0.0;
      level[a] = s == 0 ? 0.0 : (u == 0 ? inf : s / u);
    }
    int rank = users;
    // Depth first; siblings by LevelFS descending; tied accounts are merged so their
    // children sort together; tied users share a rank.
    std::function<void(std::vector<int>)> visit = [&](std::vector<int> sib) {
      std::stable_sort(sib.begin(), sib.end(), [&](int x, int y) {
        if (level[x] != level[y]) return level[x] > level[y];
        return A[x].name < A[y].name;
      });
      for (size_t i = 0; i < sib.size();) {
        size_t k = i;
        while (k < sib.size() && level[sib[k]] == level[sib[i]]) ++k;
        std::vector<int> merged;
        int tied_users = 0;
        for (size_t m = i; m < k; ++m) {
          const int a = sib[m];
          if (A[a].is_user) {
            fs_[a] = users > 0 ? static_cast<double>(rank) / users : 1.0;
            ++tied_users;
          } else {
            merged.insert(merged.end(), A[a].children.begin(), A[a].children.end());
          }
        }
        rank -= tied_users;
        if (!merged.empty()) visit(merged);
        i = k;
      }
    };
    visit(A[0].children);
  } else {
    // classic: S_norm down the tree, U_eff with the parent's effective usage mixed in
    std::vector<double> snorm(A.size(), 1.0), ueff(A.size(), 0.0);
    const double root = usage_[0];
    std::function<void(int)> walk = [&](int a) {
      double sib = 0;
      if (A[a].parent >= 0)
        for (int c : A[A[a].parent].children) sib += static_cast<double>(std::max<int64_t>(A[c].shares, 0));
      if (A[a].parent >= 0) {
        const double s_raw = static_cast<double>(std::max<int64_t>(A[a].shares, 0));
        snorm[a] = snorm[A[a].parent] * (sib > 0 ? s_raw / sib : 0);
        const double un = root > 0 ? std::min(1.0, usage_[a] / root) : 0.0;
        ueff[a] = un + (ueff[A[a].parent] - un) * (sib > 0 ? s_raw / sib : 0);
        fs_[a] = snorm[a] > 0 ? std::pow(2.0, -(ueff[a] / snorm[a]) / cfg_.damping) : 0.0;
      }
      for (int c : A[a].children) walk(c);
    };
    walk(0);
  }
}

int64_t MultifactorPriority::priority(const PriorityJob& j, SimTime now, SimTime eligible) const {
  if (!cfg_.multifactor) return 1;
  double p = 0;
  if (cfg_.w_age > 0) {
    const double age = (now - eligible).to_seconds();
    const double max = cfg_.max_age.to_seconds();
    p += cfg_.w_age * (max > 0 ? std::clamp(age / max, 0.0, 1.0) : 1.0);
  }
  if (cfg_.w_fairshare > 0) p += cfg_.w_fairshare * fs_[j.assoc];
  if (cfg_.w_jobsize > 0 && total_nodes_ > 0 && total_cpus_ > 0) {
    const double N = total_nodes_, C = static_cast<double>(total_cpus_);
    double f;
    if (cfg_.small_relative_to_time) {
      const double mins = std::max(1.0, j.limit.to_seconds() / 60);
      f = std::max(static_cast<double>(j.cpus), j.nodes * C / N) / mins / C;
      if (cfg_.favor_small) f = 1 - f;
    } else if (cfg_.favor_small) {
      f = ((N - j.nodes) / N + (C - static_cast<double>(j.cpus)) / C) / 2;
    } else {
      f = (j.nodes / N + static_cast<double>(j.cpus) / C) / 2;
    }
    p += cfg_.w_jobsize * std::clamp(f, 0.0, 1.0);
  }
  if (cfg_.w_partition > 0) {
    double pf = 1;
    const auto& part = cluster_->partitions[j.partition];
    if (auto it = part.params.find("PriorityJobFactor"); it != part.params.end())
      pf = parse_non_negative_number(it->second).value_or(1);
    p += cfg_.w_partition * pf / max_part_factor_;
  }
  if (!cfg_.w_tres.empty()) {
    const auto& part = cluster_->partitions[j.partition];
    const auto [cpus, mem, gpus] = part_tres_[j.partition];
    for (const auto& [k, w] : cfg_.w_tres) {
      double f = 0;
      if (k == "cpu" && cpus > 0) f = static_cast<double>(j.cpus) / static_cast<double>(cpus);
      else if (k == "mem" && mem > 0) f = static_cast<double>(j.mem_mb) / static_cast<double>(mem);
      else if (k == "node" && !part.nodes.empty()) f = static_cast<double>(j.nodes) / static_cast<double>(part.nodes.size());
      else if (k.rfind("gres/gpu", 0) == 0 && gpus > 0) f = static_cast<double>(j.gpus) / static_cast<double>(gpus);
      p += w * f;
    }
  }
  const double capped = std::min(p, 4294967295.0);
  return std::max<int64_t>(1, static_cast<int64_t>(capped));
}

}  // namespace gcsim
