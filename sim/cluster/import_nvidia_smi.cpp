// `nvidia-smi topo -m` parser and the NodeTemplate derivation (see the header for the
// reproducibility rule the derived PCIe tree follows).
#include "sim/cluster/import_nvidia_smi.hpp"
#include "sim/cluster/topology.hpp"

#include <algorithm>
#include <cctype>
#include <functional>
#include <numeric>
#include <set>

#include "sim/core/input_file.hpp"

namespace gcsim {

namespace {

// ---------------------------------------------------------------- tokenising

struct Token {
  std::string text;
  int col = 0;  // 1-based column in the raw line
};

/// Splits a raw line into whitespace-separated tokens, skipping ANSI escape sequences
/// (CSI `ESC [ ... final` and two-byte `ESC x`), keeping raw-line columns.
std::vector<Token> tokenize(std::string_view line) {
  std::vector<Token> out;
  Token cur;
  auto flush = [&] {
    if (!cur.text.empty()) out.push_back(cur);
    cur = Token{};
  };
  for (size_t i = 0; i < line.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(line[i]);
    if (c == 0x1b) {
      if (i + 1 < line.size() && line[i + 1] == '[') {
        i += 2;
        while (i < line.size() && !(line[i] >= 0x40 && line[i] <= 0x7e)) ++i;
      } else {
        ++i;
      }
      continue;
    }
    if (std::isspace(c)) {
      flush();
      continue;
    }
    if (cur.text.empty()) cur.col = static_cast<int>(i) + 1;
    cur.text.push_back(static_cast<char>(c));
  }
  flush();
  return out;
}

bool is_gpu_name(std::string_view s) {
  if (s.size() < 4 || s.substr(0, 3) != "GPU") return false;
  return std::all_of(s.begin() + 3, s.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

bool is_nv_cell(std::string_view s) {
  return s.size() > 2 && s.substr(0, 2) == "NV" &&
         std::all_of(s.begin() + 2, s.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

int nv_count(std::string_view s) { return std::stoi(std::string(s.substr(2))); }

std::optional<std::string> normalise_cell(const std::string& s) {
  if (s == "X" || s == "PIX" || s == "PXB" || s == "PHB" || s == "NODE" || s == "SYS") return s;
  if (s == "SOC") return std::string("SYS");  // pre-2017 drivers' name for SYS
  if (is_nv_cell(s)) return s;
  return std::nullopt;
}

enum class Column { kDevice, kCpuAffinity, kNumaAffinity, kGpuNumaId };

}  // namespace

// ---------------------------------------------------------------- parser

NvidiaSmiMatrix parse_nvidia_smi_topo(const std::string& text, const std::string& path) {
  NvidiaSmiMatrix m;
  m.path = path;
  Diagnostics d;
  const auto lines = split_lines(text);

  // Header: the first non-comment line whose first token is GPU0.
  size_t li = 0;
  std::vector<Token> header;
  for (; li < lines.size(); ++li) {
    auto toks = tokenize(lines[li]);
    if (toks.empty() || toks[0].text[0] == '#') continue;
    if (toks[0].text == "GPU0") {
      header = std::move(toks);
      break;
    }
  }
  if (header.empty())
    throw InputError(SourceLoc{path, 0, 0},
                     "no nvidia-smi topo -m matrix found (expected a header line starting with GPU0)");
  m.header_line = static_cast<int>(li) + 1;

  // Header columns: device names, then the affinity columns (multi-word names merged).
  std::vector<std::string> devices;
  std::vector<int> device_col;
  std::vector<Column> affinity_cols;
  for (size_t i = 0; i < header.size(); ++i) {
    const std::string& t = header[i].text;
    auto next_is = [&](size_t k, const char* w) { return i + k < header.size() && header[i + k].text == w; };
    Column c = Column::kDevice;
    if (t == "CPU" && next_is(1, "Affinity")) {
      c = Column::kCpuAffinity;
      i += 1;
    } else if (t == "NUMA" && next_is(1, "Affinity")) {
      c = Column::kNumaAffinity;
      i += 1;
    } else if (t == "GPU" && next_is(1, "NUMA") && next_is(2, "ID")) {
      c = Column::kGpuNumaId;
      i += 2;
    }
    if (c == Column::kDevice) {
      if (!affinity_cols.empty()) {
        d.error({path, m.header_line, header[i].col}, "unexpected column '" + t + "' after the affinity columns");
        continue;
      }
      if (std::find(devices.begin(), devices.end(), t) != devices.end()) {
        d.error({path, m.header_line, header[i].col}, "duplicate column '" + t + "'");
        continue;
      }
      devices.push_back(t);
      device_col.push_back(header[i].col);
    } else {
      if (std::find(affinity_cols.begin(), affinity_cols.end(), c) != affinity_cols.end())
        d.error({path, m.header_line, header[i].col}, "duplicate column '" + t + "'");
      affinity_cols.push_back(c);
    }
  }
  d.throw_if_errors();

  // Index: GPUs first (header order), then NICs (header order).
  std::vector<int> index_of(devices.size());
  for (size_t i = 0; i < devices.size(); ++i)
    if (is_gpu_name(devices[i])) m.gpus.push_back(devices[i]);
  for (size_t i = 0; i < devices.size(); ++i)
    if (!is_gpu_name(devices[i])) m.nics.push_back(devices[i]);
  std::map<std::string, int> by_name;
  for (size_t i = 0; i < m.devices(); ++i) by_name[m.device_name(i)] = static_cast<int>(i);
  for (size_t i = 0; i < devices.size(); ++i) index_of[i] = by_name[devices[i]];
  for (size_t g = 0; g < m.gpus.size(); ++g)
    if (m.gpus[g] != "GPU" + std::to_string(g))
      d.error({path, m.header_line, 0}, "GPU columns must be GPU0..GPU" + std::to_string(m.gpus.size() - 1) +
                                            " in order; found '" + m.gpus[g] + "'");
  d.throw_if_errors();

  const size_t n = m.devices();
  const size_t g_count = m.gpus.size();
  m.cells.assign(n, std::vector<std::string>(n));
  std::vector<int> row_line(n, 0);
  std::vector<std::vector<int>> cell_col(n, std::vector<int>(n, 0));
  auto has = [&](Column c) { return std::find(affinity_cols.begin(), affinity_cols.end(), c) != affinity_cols.end(); };
  if (has(Column::kCpuAffinity)) m.cpu_affinity.assign(g_count, "N/A");
  if (has(Column::kNumaAffinity)) m.numa_affinity.assign(g_count, "N/A");
  if (has(Column::kGpuNumaId)) m.gpu_numa_id.assign(g_count, "N/A");

  // Rows, until a blank line, the Legend, or the end.
  for (++li; li < lines.size(); ++li) {
    const int ln = static_cast<int>(li) + 1;
    auto toks = tokenize(lines[li]);
    if (toks.empty()) break;
    if (toks[0].text[0] == '#') continue;
    if (toks[0].text.rfind("Legend", 0) == 0) break;
    auto it = by_name.find(toks[0].text);
    if (it == by_name.end()) {
      d.error({path, ln, toks[0].col}, "row '" + toks[0].text + "' is not one of the header's devices");
      continue;
    }
    const int r = it->second;
    if (row_line[r] != 0) {
      d.error({path, ln, toks[0].col}, "second row for '" + toks[0].text + "'");
      continue;
    }
    row_line[r] = ln;
    const size_t want_extra = static_cast<size_t>(r) < g_count ? affinity_cols.size() : 0;
    if (toks.size() < 1 + n) {
      d.error({path, ln, 0}, "row '" + toks[0].text + "' has " + std::to_string(toks.size() - 1) + " cells, expected " +
                                 std::to_string(n));
      continue;
    }
    if (toks.size() > 1 + n + want_extra) {
      d.error({path, ln, toks[1 + n + want_extra].col}, "unexpected value '" + toks[1 + n + want_extra].text +
                                                            "' after the last column");
      continue;
    }
    for (size_t c = 0; c < n; ++c) {
      const Token& t = toks[1 + c];
      auto v = normalise_cell(t.text);
      if (!v) {
        d.error({path, ln, t.col}, "unknown link class '" + t.text + "' (expected X, NV#, PIX, PXB, PHB, NODE or SYS)");
        continue;
      }
      m.cells[r][index_of[c]] = *v;
      cell_col[r][index_of[c]] = t.col;
    }
    for (size_t k = 0; k + 1 + n < toks.size(); ++k) {
      const std::string& v = toks[1 + n + k].text;
      switch (affinity_cols[k]) {
        case Column::kCpuAffinity:
          m.cpu_affinity[r] = v;
          if (v != "N/A" && !parse_cpu_list(v))
            d.error({path, ln, toks[1 + n + k].col}, "malformed CPU affinity '" + v + "'");
          break;
        case Column::kNumaAffinity: m.numa_affinity[r] = v; break;
        case Column::kGpuNumaId: m.gpu_numa_id[r] = v; break;
        case Column::kDevice: break;
      }
    }
  }
  for (size_t i = 0; i < n; ++i)
    if (row_line[i] == 0)
      d.error({path, m.header_line, device_col[std::find(index_of.begin(), index_of.end(), static_cast<int>(i)) -
                                               index_of.begin()]},
              "no row for column '" + m.device_name(i) + "'");
  d.throw_if_errors();

  for (size_t i = 0; i < n; ++i)
    for (size_t j = 0; j < n; ++j) {
      const std::string& v = m.cells[i][j];
      if (v.empty()) continue;  // reported above
      if ((i == j) != (v == "X"))
        d.error({path, row_line[i], cell_col[i][j]},
                i == j ? "the diagonal cell of '" + m.device_name(i) + "' must be X"
                       : "'X' off the diagonal (" + m.device_name(i) + " to " + m.device_name(j) + ")");
      else if (j < i && m.cells[j][i] != v)
        d.error({path, row_line[i], cell_col[i][j]}, "matrix is not symmetric: " + m.device_name(i) + " to " +
                                                         m.device_name(j) + " is " + v + " but " + m.device_name(j) +
                                                         " to " + m.device_name(i) + " is " + m.cells[j][i]);
    }
  d.throw_if_errors();

  // NIC Legend entries ("NIC0: mlx5_0") anywhere after the matrix.
  bool in_nic_legend = false;
  for (; li < lines.size(); ++li) {
    auto toks = tokenize(lines[li]);
    if (toks.empty()) continue;
    if (toks.size() >= 2 && toks[0].text == "NIC" && toks[1].text == "Legend:") {
      in_nic_legend = true;
      continue;
    }
    if (!in_nic_legend) continue;
    if (toks.size() == 2 && toks[0].text.size() > 1 && toks[0].text.back() == ':') {
      const std::string key = toks[0].text.substr(0, toks[0].text.size() - 1);
      if (by_name.count(key)) m.nic_legend[key] = toks[1].text;
    }
  }
  return m;
}

NvidiaSmiMatrix read_nvidia_smi_topo(const std::string& path) {
  return parse_nvidia_smi_topo(read_input_file(path), path);
}

// ---------------------------------------------------------------- CPU lists

std::optional<std::vector<int>> parse_cpu_list(std::string_view s) {
  s = trim(s);
  if (s.empty() || s == "N/A") return std::nullopt;
  std::vector<int> out;
  auto num = [](std::string_view t) -> std::optional<int> {
    t = trim(t);
    if (t.empty() || t.size() > 7) return std::nullopt;
    int v = 0;
    for (char c : t) {
      if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
      v = v * 10 + (c - '0');
    }
    return v;
  };
  for (auto part : split(s, ',')) {
    const auto dash = part.find('-');
    if (dash == std::string_view::npos) {
      auto v = num(part);
      if (!v) return std::nullopt;
      out.push_back(*v);
    } else {
      auto a = num(part.substr(0, dash)), b = num(part.substr(dash + 1));
      if (!a || !b || *b < *a) return std::nullopt;
      for (int v = *a; v <= *b; ++v) out.push_back(v);
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

CpuLayout infer_cpu_layout(const std::vector<std::vector<int>>& sets) {
  CpuLayout l;
  if (sets.empty()) {
    l.problem = "no CPU sets";
    return l;
  }
  int threads = -1, len = -1, offset = -1, max_cpu = -1;
  for (const auto& s : sets) {
    if (s.empty()) {
      l.problem = "an empty CPU set";
      return l;
    }
    // Maximal runs of consecutive ids.
    std::vector<std::pair<int, int>> runs;  // [lo, hi]
    for (int v : s) {
      if (!runs.empty() && runs.back().second + 1 == v)
        runs.back().second = v;
      else
        runs.emplace_back(v, v);
    }
    const int t = static_cast<int>(runs.size());
    const int rl = runs[0].second - runs[0].first + 1;
    int off = 0;
    for (int k = 0; k < t; ++k) {
      if (runs[k].second - runs[k].first + 1 != rl) {
        l.problem = "CPU ranges of different lengths in one set";
        return l;
      }
      if (k == 1) off = runs[1].first - runs[0].first;
      if (k >= 1 && runs[k].first - runs[0].first != k * off) {
        l.problem = "CPU ranges not evenly spaced";
        return l;
      }
    }
    if (threads == -1) {
      threads = t;
      len = rl;
      offset = off;
    } else if (threads != t || len != rl || (t > 1 && offset != off)) {
      l.problem = "NUMA domains with different CPU set shapes";
      return l;
    }
    max_cpu = std::max(max_cpu, s.back());
  }
  l.threads_per_core = threads;
  l.cores_per_numa = len;
  if (threads > 1) {
    l.total_cores = offset;
    if (max_cpu >= offset * threads) {
      l.problem = "SMT sibling ranges overlap the core ranges";
      return l;
    }
  } else {
    l.total_cores = max_cpu + 1;
  }
  l.ok = true;
  return l;
}

std::vector<int> cpu_os_ids_for(const CpuLayout& layout, int cores) {
  std::vector<int> ids;
  if (!layout.ok || layout.threads_per_core <= 1) return ids;
  for (int c = 0; c < cores; ++c)
    for (int t = 0; t < layout.threads_per_core; ++t) ids.push_back(c + t * layout.total_cores);
  return ids;
}

// ---------------------------------------------------------------- derivation

namespace {

struct UnionFind {
  std::vector<int> p;
  explicit UnionFind(size_t n) : p(n) { std::iota(p.begin(), p.end(), 0); }
  int find(int x) { return p[x] == x ? x : p[x] = find(p[x]); }
  void join(int a, int b) { p[find(a)] = find(b); }
};

/// NVSwitch link count per GPU for the generation the model names (A100: 6 NVSwitch
/// gen2, 12 links per GPU; H100/H200/B200: 18 links per GPU; V100 DGX-2: 6 links).
std::optional<int> nvswitch_links_for_model(const std::string& model) {
  const std::string m = to_lower(model);
  for (const char* k : {"h100", "h200", "h800", "h20", "b100", "b200", "b300", "gb200"})
    if (m.find(k) != std::string::npos) return 18;
  if (m.find("a100") != std::string::npos) return 12;
  if (m.find("v100") != std::string::npos) return 6;
  return std::nullopt;
}

double default_nvlink_bandwidth(const std::string& model) {
  const std::string m = to_lower(model);
  for (const char* k : {"b100", "b200", "b300", "gb200"})
    if (m.find(k) != std::string::npos) return 50e9 * 8;  // NVLink5: 50 GB/s per link per direction
  return 25e9 * 8;                                         // NVLink2-4: 25 GB/s
}

int64_t memory_from_model(const std::string& model) {
  // "...-80GB" / "80GB HBM3" -> 80 GiB.
  const std::string m = to_lower(model);
  for (size_t p = m.find("gb"); p != std::string::npos; p = m.find("gb", p + 1)) {
    size_t b = p;
    while (b > 0 && std::isdigit(static_cast<unsigned char>(m[b - 1]))) --b;
    if (b < p) return std::stoll(m.substr(b, p - b)) << 30;
  }
  return 0;
}

std::string gres_from_model(const std::string& model) {
  std::string s = to_lower(trim(model));
  for (char& c : s)
    if (c == ' ') c = '_';
  return s.empty() ? std::string("gpu") : s;
}

bool is_pcie_class(const std::string& c) {
  return c == "PIX" || c == "PXB" || c == "PHB" || c == "NODE" || c == "SYS";
}

}  // namespace

NodeTemplate node_from_nvidia_smi(const NvidiaSmiMatrix& m, const NvidiaSmiOptions& opt, Diagnostics& warnings) {
  const SourceLoc loc{m.path, 0, 0};
  const int g_count = static_cast<int>(m.gpus.size());
  const int n = static_cast<int>(m.devices());
  NodeTemplate t;
  t.name = opt.name;
  t.memory_mb = opt.memory_mb;
  if (t.memory_mb <= 0) warnings.warning(loc, "node memory is not in an nvidia-smi matrix; memory_mb left 0");
  const auto& c = m.cells;

  // ---- NVLink.
  {
    std::set<std::string> nv_values;
    bool all_pairs_nv = g_count > 1;
    for (int a = 0; a < g_count; ++a)
      for (int b = a + 1; b < g_count; ++b) {
        if (is_nv_cell(c[a][b]))
          nv_values.insert(c[a][b]);
        else
          all_pairs_nv = false;
      }
    t.nvlink.link_bandwidth_bps =
        opt.nvlink_link_bandwidth_bps > 0 ? opt.nvlink_link_bandwidth_bps : default_nvlink_bandwidth(opt.gpu_model);
    if (nv_values.empty()) {
      t.nvlink.kind = NvlinkKind::kNone;
      t.nvlink.link_bandwidth_bps = 0;
    } else {
      // NVSwitch when every pair shows the same NV# and that is the generation's full
      // per-GPU link count (A100 NV12, H100 NV18): a GPU can give all its links to every
      // peer only through a switch. Two GPUs alone could equally be a bridge pair, so a
      // switch needs at least 3. Without a model, NV12 and NV18 are taken as A100 / H100.
      const int count = nv_count(*nv_values.begin());
      const auto gen = nvswitch_links_for_model(opt.gpu_model);
      const bool full = opt.gpu_model.empty() ? (count == 12 || count == 18) : (gen && *gen == count);
      if (all_pairs_nv && nv_values.size() == 1 && g_count >= 3 && full) {
        t.nvlink.kind = NvlinkKind::kNvswitch;
        t.nvlink.links_per_gpu = count;
      } else {
        t.nvlink.kind = NvlinkKind::kPairs;
        for (int a = 0; a < g_count; ++a)
          for (int b = a + 1; b < g_count; ++b)
            if (is_nv_cell(c[a][b])) t.nvlink.pairs.push_back({a, b, nv_count(c[a][b])});
      }
    }
  }

  // ---- CPU layout from the affinity sets.
  std::vector<std::optional<std::vector<int>>> gpu_cpus(g_count);
  std::vector<std::optional<int>> gpu_numa_aff(g_count);
  for (int g = 0; g < g_count; ++g) {
    if (!m.cpu_affinity.empty()) gpu_cpus[g] = parse_cpu_list(m.cpu_affinity[g]);
    if (!m.numa_affinity.empty() && m.numa_affinity[g] != "N/A") {
      auto ids = parse_cpu_list(m.numa_affinity[g]);  // same list syntax
      if (!ids) {
        warnings.warning(loc, "GPU" + std::to_string(g) + ": unreadable NUMA affinity '" + m.numa_affinity[g] + "'");
      } else {
        gpu_numa_aff[g] = ids->front();
        if (ids->size() > 1)
          warnings.warning(loc, "GPU" + std::to_string(g) + " is local to several NUMA domains (" +
                                    m.numa_affinity[g] + "); using " + std::to_string(ids->front()));
      }
    }
  }
  CpuLayout layout;
  {
    std::set<std::vector<int>> sets;
    for (int g = 0; g < g_count; ++g)
      if (gpu_cpus[g] && !(m.numa_affinity.size() && m.numa_affinity[g].find_first_of(",-") != std::string::npos))
        sets.insert(*gpu_cpus[g]);
    if (!sets.empty()) {
      layout = infer_cpu_layout(std::vector<std::vector<int>>(sets.begin(), sets.end()));
      if (!layout.ok) warnings.warning(loc, "CPU affinity sets do not give a core layout: " + layout.problem);
    }
  }

  // ---- Groups: PCIe switches, host bridges, NUMA domains.
  UnionFind pix(n), pxb(n), hb(n), numa_uf(n);
  std::vector<bool> in_phb(n, false);
  for (int a = 0; a < n; ++a)
    for (int b = a + 1; b < n; ++b) {
      const std::string& v = c[a][b];
      if (v == "PIX") pix.join(a, b);
      if (v == "PIX" || v == "PXB") pxb.join(a, b);
      if (v == "PIX" || v == "PXB" || v == "PHB") hb.join(a, b);
      if (v == "PHB") in_phb[a] = in_phb[b] = true;
      if (is_pcie_class(v) && v != "SYS") numa_uf.join(a, b);
    }

  // NUMA of each group: NUMA Affinity, else the CPU affinity's position, else colouring.
  std::map<int, int> group_numa;  // numa_uf root -> NUMA index
  for (int g = 0; g < g_count; ++g) {
    std::optional<int> id = gpu_numa_aff[g];
    if (!id && gpu_cpus[g] && layout.ok && layout.cores_per_numa > 0)
      id = (gpu_cpus[g]->front() % std::max(1, layout.total_cores)) / layout.cores_per_numa;
    if (!id) continue;
    const int r = numa_uf.find(g);
    auto [it, fresh] = group_numa.emplace(r, *id);
    if (!fresh && it->second != *id)
      warnings.warning(loc, "GPU" + std::to_string(g) + " is on NUMA " + std::to_string(*id) +
                                " but shares a PCIe path (not SYS) with devices on NUMA " + std::to_string(it->second));
  }
  bool any_placement = !group_numa.empty();
  for (int a = 0; a < n && !any_placement; ++a)
    for (int b = 0; b < n; ++b)
      if (is_pcie_class(c[a][b])) any_placement = true;
  std::vector<int> dev_numa(n, 0);
  for (int i = 0; i < n; ++i) {
    const int r = numa_uf.find(i);
    if (group_numa.count(r)) continue;
    // A group with no placement of its own: the lowest NUMA index that no group it
    // is SYS to already holds.
    std::set<int> forbidden;
    for (int k = 0; k < n; ++k) {
      if (numa_uf.find(k) != r) continue;
      for (int j = 0; j < n; ++j) {
        auto it = group_numa.find(numa_uf.find(j));
        if (c[k][j] == "SYS" && it != group_numa.end()) forbidden.insert(it->second);
      }
    }
    int id = 0;
    while (forbidden.count(id)) ++id;
    group_numa[r] = id;
  }
  int numa_count = 1;
  for (int i = 0; i < n; ++i) {
    dev_numa[i] = group_numa[numa_uf.find(i)];
    numa_count = std::max(numa_count, dev_numa[i] + 1);
  }
  if (layout.ok && layout.cores_per_numa > 0 && layout.total_cores % layout.cores_per_numa == 0)
    numa_count = std::max(numa_count, layout.total_cores / layout.cores_per_numa);

  // ---- Sockets, cores, threads.
  int sockets = numa_count;
  if (opt.sockets > 0) {
    if (numa_count < opt.sockets) numa_count = opt.sockets;
    if (numa_count % opt.sockets == 0) {
      sockets = opt.sockets;
    } else {
      warnings.warning(loc, std::to_string(opt.sockets) + " sockets do not divide the " + std::to_string(numa_count) +
                                " NUMA domains the matrix shows; using one socket per NUMA domain");
    }
  } else {
    warnings.note(loc, "socket count not given; assuming one socket per NUMA domain (" + std::to_string(numa_count) +
                           ")");
  }
  if (!any_placement && numa_count > 1 && g_count > 0) {
    for (int g = 0; g < g_count; ++g) dev_numa[g] = g * numa_count / g_count;
    warnings.warning(loc, "the matrix does not place the GPUs on NUMA domains; spreading them evenly in order");
  }
  t.sockets = sockets;
  t.numa_per_socket = numa_count / sockets;
  int cpn = layout.ok ? layout.cores_per_numa : 0;
  if (opt.cores_per_socket > 0) {
    if (opt.cores_per_socket % t.numa_per_socket != 0) {
      warnings.warning(loc, "cores_per_socket " + std::to_string(opt.cores_per_socket) + " does not divide into " +
                                std::to_string(t.numa_per_socket) + " NUMA domains per socket");
    } else {
      const int given = opt.cores_per_socket / t.numa_per_socket;
      if (cpn > 0 && cpn != given)
        warnings.warning(loc, "the CPU affinity shows " + std::to_string(cpn) + " cores per NUMA domain; using the " +
                                  std::to_string(given) + " given");
      cpn = given;
    }
  }
  if (cpn <= 0) {
    warnings.warning(loc, "core count unknown (no CPU affinity and no cores_per_socket); assuming 1 core per NUMA");
    cpn = 1;
  }
  t.cores_per_numa = cpn;
  t.threads_per_core = opt.threads_per_core > 0 ? opt.threads_per_core : (layout.ok ? layout.threads_per_core : 1);
  if (layout.ok && t.threads_per_core == layout.threads_per_core && t.cores_per_numa == layout.cores_per_numa &&
      layout.total_cores == t.cores())
    t.cpu_os_ids = cpu_os_ids_for(layout, t.cores());

  // ---- PCIe switches: a parent per PXB component of several PIX groups, a leaf per
  // PIX group (or lone device) in it; lone devices in a PHB relation get their own
  // switch (their root port) so that the host bridge can be recorded.
  std::vector<int> dev_switch(n, -1);
  std::map<int, int> leaf_of_pix, parent_of_pxb;
  auto multi = [&](UnionFind& uf, int i) {
    for (int j = 0; j < n; ++j)
      if (j != i && uf.find(j) == uf.find(i)) return true;
    return false;
  };
  auto pxb_has_several_pix = [&](int i) {
    for (int j = 0; j < n; ++j)
      if (pxb.find(j) == pxb.find(i) && pix.find(j) != pix.find(i)) return true;
    return false;
  };
  auto add_switch = [&](const std::string& name, int numa, int parent) {
    PcieSwitchSpec s;
    s.name = name;
    s.numa = numa;
    s.gen = opt.pcie_gen > 0 ? opt.pcie_gen : gpu_pcie_generation(opt.gpu_model);
    s.width = 16;
    s.parent = parent;
    s.levels = 1;  // the tree is written level by level
    t.pcie_switches.push_back(s);
    return static_cast<int>(t.pcie_switches.size()) - 1;
  };
  for (int i = 0; i < n; ++i) {
    const bool in_pix = multi(pix, i);
    const bool in_pxb = pxb_has_several_pix(i);
    if (!in_pix && !in_pxb && !in_phb[i]) continue;
    int parent = -1;
    if (in_pxb) {
      auto it = parent_of_pxb.find(pxb.find(i));
      if (it == parent_of_pxb.end())
        it = parent_of_pxb.emplace(pxb.find(i), add_switch("sw" + std::to_string(t.pcie_switches.size()), dev_numa[i], -1))
                 .first;
      parent = it->second;
    }
    auto it = leaf_of_pix.find(pix.find(i));
    if (it == leaf_of_pix.end())
      it = leaf_of_pix.emplace(pix.find(i), add_switch("sw" + std::to_string(t.pcie_switches.size()), dev_numa[i], parent))
               .first;
    dev_switch[i] = it->second;
  }
  // Host bridges: PIX/PXB/PHB groups, numbered per NUMA domain in device order.
  {
    std::map<int, int> hb_index;
    std::map<int, int> next_in_numa;
    for (int i = 0; i < n; ++i) {
      if (dev_switch[i] < 0) continue;
      auto it = hb_index.find(hb.find(i));
      if (it == hb_index.end()) it = hb_index.emplace(hb.find(i), next_in_numa[dev_numa[i]]++).first;
      for (int s = dev_switch[i]; s >= 0; s = t.pcie_switches[s].parent) t.pcie_switches[s].host_bridge = it->second;
    }
  }

  // ---- Devices.
  const int64_t gpu_mem = opt.gpu_memory_bytes > 0 ? opt.gpu_memory_bytes : memory_from_model(opt.gpu_model);
  if (gpu_mem <= 0 && g_count > 0) warnings.warning(loc, "GPU memory unknown (not in the model string or options)");
  if (opt.gpu_model.empty() && g_count > 0) warnings.warning(loc, "GPU model not given; an nvidia-smi matrix does not name it");
  for (int g = 0; g < g_count; ++g) {
    GpuSpec s;
    s.model = opt.gpu_model;
    s.gres_type = opt.gres_type.empty() ? gres_from_model(opt.gpu_model) : opt.gres_type;
    s.memory_bytes = gpu_mem;
    s.numa = dev_numa[g];
    s.pcie_switch = dev_switch[g];
    t.gpus.push_back(s);
  }
  if (!m.nics.empty() && opt.nic_bandwidth_bps <= 0)
    warnings.warning(loc, "NIC line rate unknown (an nvidia-smi matrix does not give it); bandwidth left 0");
  for (size_t k = 0; k < m.nics.size(); ++k) {
    NicSpec s;
    auto it = m.nic_legend.find(m.nics[k]);
    s.name = it != m.nic_legend.end() ? it->second : m.nics[k];
    s.bandwidth_bps = opt.nic_bandwidth_bps;
    s.numa = dev_numa[g_count + k];
    s.pcie_switch = dev_switch[g_count + k];
    t.nics.push_back(s);
  }

  // ---- Self-check: the derived tree must give back every cell.
  auto ancestors = [&](int s) {
    std::vector<int> a;
    for (; s >= 0; s = t.pcie_switches[s].parent) a.push_back(s);
    return a;
  };
  int mismatches = 0;
  for (int a = 0; a < n; ++a)
    for (int b = a + 1; b < n; ++b) {
      const std::string& want = c[a][b];
      if (is_nv_cell(want)) continue;  // NVLink is checked by construction
      std::string got;
      const int sa = dev_switch[a], sb = dev_switch[b];
      if (sa >= 0 && sa == sb) {
        got = "PIX";
      } else if (dev_numa[a] != dev_numa[b]) {
        got = "SYS";
      } else {
        bool common = false;
        if (sa >= 0 && sb >= 0)
          for (int x : ancestors(sa))
            for (int y : ancestors(sb)) common = common || x == y;
        if (common)
          got = "PXB";
        else if (sa >= 0 && sb >= 0 && t.pcie_switches[sa].host_bridge == t.pcie_switches[sb].host_bridge)
          got = "PHB";
        else
          got = "NODE";
      }
      if (got != want && mismatches++ < 5)
        warnings.warning(loc, "the matrix is not consistent with one PCIe tree: " + m.device_name(a) + " to " +
                                  m.device_name(b) + " is " + want + " but the derived layout gives " + got);
    }
  return t;
}

}  // namespace gcsim
