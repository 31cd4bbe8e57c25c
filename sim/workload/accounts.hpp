// The Slurm association tree (accounts, users, shares) as `sacctmgr dump CLUSTER
// file=F` writes it: `Cluster - 'name':...`, then `Parent - 'acct'` lines that set
// where the following `Account - 'x':Fairshare=N:...` and `User - 'u':...` lines go.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sim/core/diagnostics.hpp"

namespace gcsim {

struct Association {
  std::string name;     // account name, or user name for a user association
  bool is_user = false;
  int parent = -1;      // index into AccountTree::assocs; -1 for root
  int64_t shares = 1;   // Fairshare=N; -1 = Fairshare=parent
  std::vector<int> children;
  std::string default_account;  // users: DefaultAccount=
  std::map<std::string, std::string> fields;  // every other key as written (QOS=, limits)
};

struct AccountTree {
  std::string cluster;
  std::vector<Association> assocs;  // [0] = root account
  [[nodiscard]] std::optional<int> account(const std::string& name) const;
  /// The user association of `user` under `account`; std::nullopt when none.
  [[nodiscard]] std::optional<int> user(const std::string& account, const std::string& user) const;
  /// The user's DefaultAccount, "" when unknown.
  [[nodiscard]] std::string default_account(const std::string& user) const;
  /// Adds an account under `parent` (or a user under account `parent`) if missing.
  int ensure(const std::string& parent, const std::string& name, bool is_user);
};

/// A tree with only root.
[[nodiscard]] AccountTree make_root_account_tree();

/// Parses a sacctmgr dump; errors (file:line:col) are collected and thrown together.
[[nodiscard]] AccountTree parse_sacctmgr_dump(const std::string& text, const std::string& path);
[[nodiscard]] AccountTree read_sacctmgr_dump(const std::string& path);

}  // namespace gcsim
