#include "sim/core/hostlist.hpp"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <charconv>
#include <string_view>
#include <tuple>

namespace gcsim::hostlist {

namespace {

constexpr size_t kDefaultMaxHosts = 1'000'000;
std::atomic<size_t> g_max_hosts{kDefaultMaxHosts};

bool set_error(std::string* error, std::string msg) {
  if (error) *error = std::move(msg);
  return false;
}

// Expands one bracket body "001-004,7" into zero-padded strings.
bool expand_range_list(std::string_view body, std::vector<std::string>& out, std::string* error) {
  size_t start = 0;
  while (start <= body.size()) {
    size_t comma = body.find(',', start);
    if (comma == std::string_view::npos) comma = body.size();
    std::string_view item = body.substr(start, comma - start);
    if (item.empty()) return set_error(error, "empty item in host range");
    size_t dash = item.find('-');
    std::string_view lo = item.substr(0, dash);
    std::string_view hi = dash == std::string_view::npos ? lo : item.substr(dash + 1);
    auto all_digits = [](std::string_view s) {
      return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
    };
    if (!all_digits(lo) || !all_digits(hi)) return set_error(error, "host range '" + std::string(item) + "' is not numeric");
    if (lo.size() > 9 || hi.size() > 9) return set_error(error, "host range '" + std::string(item) + "' is too large");
    const long a = std::stol(std::string(lo));
    const long b = std::stol(std::string(hi));
    if (b < a) return set_error(error, "host range '" + std::string(item) + "' runs backwards");
    if (static_cast<size_t>(b - a) >= max_hosts() - std::min(out.size(), max_hosts()))
      return set_error(error, "host range '" + std::string(item) + "' has more than " + max_hosts_words() + " hosts");
    const size_t width = lo.size();
    for (long v = a; v <= b; ++v) {
      std::string s = std::to_string(v);
      if (s.size() < width) s.insert(0, width - s.size(), '0');
      out.push_back(std::move(s));
    }
    start = comma + 1;
    if (comma == body.size()) break;
  }
  return true;
}

// Expands one comma-free-at-top-level term such as "rack[1-2]-n[01-04]".
bool expand_term(std::string_view term, std::vector<std::string>& out, std::string* error) {
  std::vector<std::string> acc = {""};
  size_t i = 0;
  while (i < term.size()) {
    if (term[i] == '[') {
      size_t close = term.find(']', i);
      if (close == std::string_view::npos) return set_error(error, "unterminated '[' in host list");
      std::vector<std::string> parts;
      if (!expand_range_list(term.substr(i + 1, close - i - 1), parts, error)) return false;
      // `a[0-999]b[0-999]c[0-999]` is a billion names: bound the product, not each range.
      if (acc.size() * parts.size() > max_hosts())
        return set_error(error, "host list has more than " + max_hosts_words() + " hosts");
      std::vector<std::string> next;
      next.reserve(acc.size() * parts.size());
      for (const auto& a : acc)
        for (const auto& p : parts) next.push_back(a + p);
      acc = std::move(next);
      i = close + 1;
    } else if (term[i] == ']') {
      return set_error(error, "unmatched ']' in host list");
    } else {
      size_t j = term.find_first_of("[]", i);
      if (j == std::string_view::npos) j = term.size();
      for (auto& a : acc) a.append(term.substr(i, j - i));
      i = j;
    }
  }
  for (auto& a : acc) out.push_back(std::move(a));
  return true;
}

}  // namespace

size_t max_hosts() { return g_max_hosts.load(std::memory_order_relaxed); }
void set_max_hosts(size_t n) { g_max_hosts.store(n, std::memory_order_relaxed); }
std::string max_hosts_words() {
  return max_hosts() == kDefaultMaxHosts ? std::string("a million") : std::to_string(max_hosts());
}

std::optional<std::vector<std::string>> expand(std::string_view expr, std::string* error) {
  std::vector<std::string> out;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i <= expr.size(); ++i) {
    const bool end = i == expr.size();
    if (!end && expr[i] == '[') ++depth;
    if (!end && expr[i] == ']') --depth;
    if (end || (expr[i] == ',' && depth == 0)) {
      std::string_view term = expr.substr(start, i - start);
      while (!term.empty() && std::isspace(static_cast<unsigned char>(term.front()))) term.remove_prefix(1);
      while (!term.empty() && std::isspace(static_cast<unsigned char>(term.back()))) term.remove_suffix(1);
      if (term.empty()) {
        set_error(error, "empty host name in host list");
        return std::nullopt;
      }
      if (!expand_term(term, out, error)) return std::nullopt;
      if (out.size() > max_hosts()) {
        set_error(error, "host list has more than " + max_hosts_words() + " hosts");
        return std::nullopt;
      }
      start = i + 1;
    }
  }
  if (depth != 0) {
    set_error(error, "unbalanced brackets in host list");
    return std::nullopt;
  }
  return out;
}

std::string compress(const std::vector<std::string>& hosts) {
  // Split each host into prefix + trailing number (keeping its width), group by
  // (prefix, width), sort numerically, and print runs. A NodeList has few groups
  // and many hosts (a Curie job spans up to thousands of nodes): the groups are a
  // short list searched from the last one used, and the hosts are read in place.
  struct Group {
    std::string_view prefix;
    size_t width;
    std::vector<long> nums;
  };
  std::vector<Group> groups;
  std::vector<std::string_view> plain;
  size_t last = 0;
  for (const auto& h : hosts) {
    size_t d = h.size();
    while (d > 0 && std::isdigit(static_cast<unsigned char>(h[d - 1]))) --d;
    if (d == h.size() || h.size() - d > 9) {
      plain.push_back(h);
      continue;
    }
    const std::string_view prefix(h.data(), d);
    const size_t width = h.size() - d;
    long v = 0;
    for (size_t i = d; i < h.size(); ++i) v = v * 10 + (h[i] - '0');
    if (last >= groups.size() || groups[last].prefix != prefix || groups[last].width != width) {
      last = 0;
      while (last < groups.size() && (groups[last].prefix != prefix || groups[last].width != width)) ++last;
      if (last == groups.size()) groups.push_back({prefix, width, {}});
    }
    groups[last].nums.push_back(v);
  }
  std::sort(groups.begin(), groups.end(),
            [](const Group& a, const Group& b) { return std::tie(a.prefix, a.width) < std::tie(b.prefix, b.width); });
  std::sort(plain.begin(), plain.end());
  plain.erase(std::unique(plain.begin(), plain.end()), plain.end());
  // Terms sorted by prefix so the output is deterministic: a plain name sorts by
  // itself and before a group with that prefix; groups of one prefix by width.
  std::vector<std::pair<std::string_view, std::string>> terms;
  terms.reserve(plain.size() + groups.size());
  for (const auto& p : plain) terms.emplace_back(p, std::string(p));
  char buf[24];
  for (auto& g : groups) {
    auto& nums = g.nums;
    std::sort(nums.begin(), nums.end());
    nums.erase(std::unique(nums.begin(), nums.end()), nums.end());
    std::string text(g.prefix);
    auto put = [&](long v) {
      const auto r = std::to_chars(buf, buf + sizeof buf, v);
      const size_t len = static_cast<size_t>(r.ptr - buf);
      if (len < g.width) text.append(g.width - len, '0');
      text.append(buf, r.ptr);
    };
    if (nums.size() == 1) {
      put(nums[0]);
      terms.emplace_back(g.prefix, std::move(text));
      continue;
    }
    text += '[';
    for (size_t i = 0; i < nums.size();) {
      size_t j = i;
      while (j + 1 < nums.size() && nums[j + 1] == nums[j] + 1) ++j;
      if (i > 0) text += ',';
      put(nums[i]);
      if (j > i) {
        text += '-';
        put(nums[j]);
      }
      i = j + 1;
    }
    text += ']';
    terms.emplace_back(g.prefix, std::move(text));
  }
  std::stable_sort(terms.begin(), terms.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::string out;
  for (const auto& t : terms) {
    if (!out.empty()) out += ',';
    out += t.second;
  }
  return out;
}

}  // namespace gcsim::hostlist
