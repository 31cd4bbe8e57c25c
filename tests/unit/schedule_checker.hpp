// Capacity-feasibility checker for a schedule as gcsim writes it (jobs.sacct):
// no node is ever over its cores, memory or GPUs; no core id or GPU index is
// held by two jobs at once; start >= submit; end >= start. Reads the sacct text
// so that it checks exactly what users will read, golden files included.
#pragma once

#include <algorithm>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "sim/cluster/cluster.hpp"
#include "sim/core/input_file.hpp"
#include "sim/workload/slurm_time.hpp"

namespace gcsim::test {

struct SacctRow {
  std::map<std::string, std::string> f;
  int64_t submit = 0, eligible = 0, start = 0, end = 0;
  struct NodeUse {
    std::string node;
    std::vector<int> cpus, gpus;
    int64_t mem_mb = 0;
  };
  std::vector<NodeUse> nodes;
};

inline std::vector<int> parse_id_list(std::string_view s) {
  std::vector<int> out;
  if (s.empty()) return out;
  for (auto part : split(s, ',')) {
    auto dash = part.find('-');
    int a = std::stoi(std::string(part.substr(0, dash)));
    int b = dash == std::string_view::npos ? a : std::stoi(std::string(part.substr(dash + 1)));
    for (int v = a; v <= b; ++v) out.push_back(v);
  }
  return out;
}

inline std::vector<SacctRow> parse_sacct(const std::string& text) {
  std::vector<SacctRow> rows;
  auto lines = split_lines(text);
  if (lines.empty()) return rows;
  auto header = split(lines[0], '|');
  for (size_t i = 1; i < lines.size(); ++i) {
    if (lines[i].empty()) continue;
    auto cells = split(lines[i], '|');
    if (cells.size() != header.size()) throw std::runtime_error("sacct row with wrong field count: " + std::string(lines[i]));
    SacctRow r;
    for (size_t c = 0; c < header.size(); ++c) r.f[std::string(header[c])] = std::string(cells[c]);
    r.submit = *slurm_time::parse_iso(r.f["Submit"]);
    r.eligible = *slurm_time::parse_iso(r.f["Eligible"]);
    r.start = *slurm_time::parse_iso(r.f["Start"]);
    r.end = *slurm_time::parse_iso(r.f["End"]);
    std::map<std::string, size_t> idx;
    for (auto part : split(r.f["CPU_IDs"], ';')) {
      auto colon = part.find(':');
      SacctRow::NodeUse u;
      u.node = std::string(part.substr(0, colon));
      u.cpus = parse_id_list(part.substr(colon + 1));
      idx[u.node] = r.nodes.size();
      r.nodes.push_back(u);
    }
    if (!r.f["GRES_IDX"].empty())
      for (auto part : split(r.f["GRES_IDX"], ';')) {
        auto colon = part.find(':');
        r.nodes.at(idx.at(std::string(part.substr(0, colon)))).gpus = parse_id_list(part.substr(colon + 1));
      }
    // Memory: AllocTRES mem= (MiB) is the job total; gcsim's allocations split it evenly.
    for (auto kv : split(r.f["AllocTRES"], ',')) {
      if (kv.rfind("mem=", 0) == 0) {
        std::string v(kv.substr(4));
        int64_t total = std::stoll(v.substr(0, v.size() - 1));
        for (auto& u : r.nodes) u.mem_mb = total / static_cast<int64_t>(r.nodes.size());
      }
    }
    rows.push_back(std::move(r));
  }
  return rows;
}

/// Returns the list of violations (empty = feasible).
inline std::vector<std::string> check_feasibility(const Cluster& cluster, const std::vector<SacctRow>& rows) {
  std::vector<std::string> bad;
  struct Ev {
    int64_t t;
    int kind;  // 0 = release (first at equal times), 1 = acquire
    size_t row;
  };
  std::vector<Ev> evs;
  for (size_t i = 0; i < rows.size(); ++i) {
    const auto& r = rows[i];
    if (r.start < r.submit) bad.push_back("job " + r.f.at("JobID") + " starts before it was submitted");
    if (r.end < r.start) bad.push_back("job " + r.f.at("JobID") + " ends before it starts");
    if (r.end > r.start) {  // zero-length jobs hold nothing
      evs.push_back({r.start, 1, i});
      evs.push_back({r.end, 0, i});
    }
  }
  std::sort(evs.begin(), evs.end(), [](const Ev& a, const Ev& b) {
    return a.t != b.t ? a.t < b.t : a.kind != b.kind ? a.kind < b.kind : a.row < b.row;
  });
  struct Use {
    std::map<int, std::string> cpu, gpu;
    int64_t mem = 0;
  };
  std::map<std::string, Use> use;
  for (const auto& e : evs) {
    const auto& r = rows[e.row];
    const std::string& id = r.f.at("JobID");
    for (const auto& u : r.nodes) {
      const int n = cluster.find_node(u.node);
      if (n < 0) {
        bad.push_back("job " + id + " uses unknown node " + u.node);
        continue;
      }
      const auto& t = cluster.tmpl(n);
      auto& s = use[u.node];
      for (int c : u.cpus) {
        if (c < 0 || c >= t.cpus()) bad.push_back("job " + id + " uses CPU " + std::to_string(c) + " beyond " + u.node);
        if (e.kind == 1) {
          auto [it, ok] = s.cpu.emplace(c, id);
          if (!ok) bad.push_back("CPU " + std::to_string(c) + " on " + u.node + " held by jobs " + it->second + " and " + id);
        } else {
          s.cpu.erase(c);
        }
      }
      for (int g : u.gpus) {
        if (g < 0 || g >= static_cast<int>(t.gpus.size()))
          bad.push_back("job " + id + " uses GPU " + std::to_string(g) + " beyond " + u.node);
        if (e.kind == 1) {
          auto [it, ok] = s.gpu.emplace(g, id);
          if (!ok) bad.push_back("GPU " + std::to_string(g) + " on " + u.node + " held by jobs " + it->second + " and " + id);
        } else {
          s.gpu.erase(g);
        }
      }
      s.mem += e.kind == 1 ? u.mem_mb : -u.mem_mb;
      if (t.memory_mb > 0 && s.mem > t.memory_mb)
        bad.push_back("memory of " + u.node + " exceeded when job " + id + " starts");
    }
    if (bad.size() > 20) break;
  }
  return bad;
}

}  // namespace gcsim::test
