#include "sim/workload/accounts.hpp"

#include "sim/core/input_file.hpp"

namespace gcsim {

std::optional<int> AccountTree::account(const std::string& name) const {
  for (size_t i = 0; i < assocs.size(); ++i)
    if (!assocs[i].is_user && assocs[i].name == name) return static_cast<int>(i);
  return std::nullopt;
}

std::optional<int> AccountTree::user(const std::string& acct, const std::string& u) const {
  const auto a = account(acct);
  if (!a) return std::nullopt;
  for (int c : assocs[*a].children)
    if (assocs[c].is_user && assocs[c].name == u) return c;
  return std::nullopt;
}

std::string AccountTree::default_account(const std::string& u) const {
  for (const auto& a : assocs)
    if (a.is_user && a.name == u && !a.default_account.empty()) return a.default_account;
  return "";
}

int AccountTree::ensure(const std::string& parent, const std::string& name, bool is_user) {
  int p = account(parent).value_or(0);
  for (int c : assocs[p].children)
    if (assocs[c].is_user == is_user && assocs[c].name == name) return c;
  Association a;
  a.name = name;
  a.is_user = is_user;
  a.parent = p;
  assocs.push_back(a);
  const int idx = static_cast<int>(assocs.size()) - 1;
  assocs[p].children.push_back(idx);
  return idx;
}

AccountTree make_root_account_tree() {
  AccountTree t;
  Association root;
  root.name = "root";
  t.assocs.push_back(root);
  return t;
}

namespace {

/// `'quoted name'` or a bare word.
std::string unquote(std::string_view s) {
  s = trim(s);
  if (s.size() >= 2 && s.front() == '\'' && s.back() == '\'') s = s.substr(1, s.size() - 2);
  return std::string(s);
}

}  // namespace

AccountTree parse_sacctmgr_dump(const std::string& text, const std::string& path) {
  AccountTree t = make_root_account_tree();
  Diagnostics d;
  std::string parent = "root";
  int lineno = 0;
  for (std::string_view raw : split_lines(text)) {
    ++lineno;
    const std::string_view line = trim(raw);
    if (line.empty() || line.front() == '#') continue;
    const auto dash = line.find(" - ");
    if (dash == std::string_view::npos) {
      d.error({path, lineno, 1}, "expected 'Kind - 'name':Key=Value...' (Cluster, Parent, Account or User)");
      continue;
    }
    const std::string kind = to_lower(trim(line.substr(0, dash)));
    const std::string_view rest = line.substr(dash + 3);
    // fields are ':'-separated, but a quoted value may contain ':'
    std::vector<std::string> parts;
    std::string cur;
    bool q = false;
    for (char c : rest) {
      if (c == '\'') q = !q;
      if (c == ':' && !q) {
        parts.push_back(cur);
        cur.clear();
      } else {
        cur += c;
      }
    }
    parts.push_back(cur);
    const std::string name = unquote(parts[0]);
    const int col = static_cast<int>(raw.find(rest) + 1);
    if (name.empty()) {
      d.error({path, lineno, col}, "missing name");
      continue;
    }
    std::map<std::string, std::string> kv;
    for (size_t i = 1; i < parts.size(); ++i) {
      const auto eq = parts[i].find('=');
      if (eq == std::string::npos) {
        d.error({path, lineno, col}, "expected Key=Value, got '" + parts[i] + "'");
        continue;
      }
      kv[to_lower(trim(parts[i].substr(0, eq)))] = unquote(parts[i].substr(eq + 1));
    }
    auto shares = [&](Association& a) {
      auto it = kv.find("fairshare");
      if (it == kv.end()) return;
      if (to_lower(it->second) == "parent") {
        a.shares = -1;
      } else if (auto n = parse_integer(it->second); n && *n >= 0) {
        a.shares = *n;
      } else {
        d.error({path, lineno, col}, "Fairshare=" + it->second + ": expected a non-negative integer or 'parent'");
      }
    };
    if (kind == "cluster") {
      t.cluster = name;
      shares(t.assocs[0]);
    } else if (kind == "parent") {
      if (!t.account(name)) d.error({path, lineno, col}, "Parent '" + name + "' names an account not defined above");
      parent = name;
    } else if (kind == "account" || kind == "user") {
      const bool is_user = kind == "user";
      if (!is_user && t.account(name)) {
        d.error({path, lineno, col}, "account '" + name + "' is defined twice");
        continue;
      }
      const int i = t.ensure(parent, name, is_user);
      Association& a = t.assocs[i];
      shares(a);
      if (auto it = kv.find("defaultaccount"); it != kv.end()) a.default_account = it->second;
      for (const auto& [k, v] : kv)
        if (k != "fairshare" && k != "defaultaccount") a.fields[k] = v;
    } else {
      d.error({path, lineno, 1}, "unknown line kind '" + std::string(trim(line.substr(0, dash))) +
                                     "' (expected Cluster, Parent, Account or User)");
    }
  }
  d.throw_if_errors();
  return t;
}

AccountTree read_sacctmgr_dump(const std::string& path) { return parse_sacctmgr_dump(read_input_file(path), path); }

}  // namespace gcsim
