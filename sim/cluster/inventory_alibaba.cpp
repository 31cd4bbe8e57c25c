#include "sim/cluster/inventory_alibaba.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "sim/core/input_file.hpp"

namespace gcsim {

namespace {

// GPU memory when the model name states it: `V100M16` / `V100M32` (GiB). 0 = unknown.
int64_t gpu_memory_from_model(std::string_view model) {
  const size_t m = model.find_last_of("Mm");
  if (m == std::string_view::npos || m == 0 || m + 1 >= model.size()) return 0;
  if (!std::isdigit(static_cast<unsigned char>(model[m - 1]))) return 0;
  int64_t gib = 0;
  const auto [p, ec] = std::from_chars(model.data() + m + 1, model.data() + model.size(), gib);
  if (ec != std::errc() || p != model.data() + model.size() || gib <= 0 || gib > 1024) return 0;
  return gib << 30;
}

struct Shape {
  int cpus = 0;
  int64_t memory_mb = 0;
  int gpus = 0;
  std::string model;  // as written; empty for CPU-only
  auto operator<=>(const Shape&) const = default;
};

// The assumed layout: 2 sockets of cpus/2 cores (1 socket if the count is odd), one
// NUMA domain per socket, one thread per core, GPU i on socket i*sockets/gpus.
NodeTemplate make_template(const Shape& s) {
  NodeTemplate t;
  const std::string gres = to_lower(s.model);
  std::string mem = s.memory_mb % 1024 == 0 ? std::to_string(s.memory_mb / 1024) + "g" : std::to_string(s.memory_mb) + "m";
  t.name = (s.gpus > 0 ? gres + "x" + std::to_string(s.gpus) : std::string("cpu")) + "-" + std::to_string(s.cpus) +
           "c-" + mem;
  t.sockets = s.cpus >= 2 && s.cpus % 2 == 0 ? 2 : 1;
  t.numa_per_socket = 1;
  t.cores_per_numa = s.cpus / t.sockets;
  t.threads_per_core = 1;
  t.memory_mb = s.memory_mb;
  for (int i = 0; i < s.gpus; ++i) {
    GpuSpec g;
    g.gres_type = gres;
    g.model = s.model;
    g.memory_bytes = gpu_memory_from_model(s.model);
    g.numa = i * t.sockets / s.gpus;
    t.gpus.push_back(std::move(g));
  }
  return t;
}

// Collects nodes, one template per distinct shape in order of first appearance.
class ClusterBuilder {
 public:
  ClusterBuilder(std::string name, std::string source) {
    c_.name = std::move(name);
    c_.source = std::move(source);
  }
  bool has(const std::string& node) const { return names_.count(node) > 0; }
  void add(const std::string& node, const Shape& s) {
    auto [it, fresh] = by_shape_.emplace(s, static_cast<int>(c_.templates.size()));
    if (fresh) c_.templates.push_back(make_template(s));
    Node n;
    n.name = node;
    n.template_index = it->second;
    if (s.gpus > 0) n.features.push_back(to_lower(s.model));
    n.partitions = {0};
    names_.insert(node);
    c_.nodes.push_back(std::move(n));
  }
  Cluster finish(const std::string& path, Diagnostics& diags) {
    Partition p;
    p.name = "batch";
    p.is_default = true;
    for (size_t i = 0; i < c_.nodes.size(); ++i) p.nodes.push_back(static_cast<int>(i));
    c_.partitions.push_back(std::move(p));
    c_.index();
    diags.note(SourceLoc{path, 0, 0},
               "the inventory gives no NUMA layout; assumed 2 sockets per node (1 NUMA domain each, 1 thread per "
               "core) with the CPUs and GPUs split evenly between them (1 socket when the CPU count is odd)");
    return std::move(c_);
  }

 private:
  Cluster c_;
  std::map<Shape, int> by_shape_;
  std::set<std::string> names_;
};

}  // namespace

Cluster parse_alibaba_v2023_nodes(const std::string& text, const std::string& path, Diagnostics& diags) {
  Diagnostics errs;
  const auto lines = split_lines(text);
  size_t hdr = 0;
  while (hdr < lines.size() && trim(lines[hdr]).empty()) ++hdr;
  if (hdr == lines.size()) throw InputError(SourceLoc{path, 1, 1}, "empty Alibaba node list: expected a header line");
  const int hdr_line = static_cast<int>(hdr) + 1;
  static const std::vector<std::string> kColumns = {"sn", "cpu_milli", "memory_mib", "gpu", "model"};
  const auto head = split_plain_csv(lines[hdr]);
  std::map<std::string, size_t> col;
  for (size_t c = 0; c < head.size(); ++c) {
    const std::string h = to_lower(head[c].text);
    if (std::find(kColumns.begin(), kColumns.end(), h) == kColumns.end()) {
      errs.error({path, hdr_line, head[c].col},
                 "unknown column '" + std::string(head[c].text) +
                     "' in an Alibaba v2023 node list (expected sn, cpu_milli, memory_mib, gpu, model)");
      continue;
    }
    if (!col.emplace(h, c).second) errs.error({path, hdr_line, head[c].col}, "duplicate column '" + h + "'");
  }
  for (const auto& c : kColumns)
    if (!col.count(c)) errs.error({path, hdr_line, 1}, "missing required column '" + c + "'");
  errs.throw_if_errors();

  ClusterBuilder b("alibaba-gpu-v2023", path);
  int64_t fractional_cpu = 0;
  for (size_t ln = hdr + 1; ln < lines.size() && !errs.full(); ++ln) {
    const std::string_view line = lines[ln];
    const int lineno = static_cast<int>(ln) + 1;
    if (trim(line).empty()) continue;
    const auto cells = split_plain_csv(line);
    if (cells.size() != head.size()) {
      errs.error({path, lineno, 1},
                 "expected " + std::to_string(head.size()) + " fields, found " + std::to_string(cells.size()));
      continue;
    }
    auto cell = [&](const char* name) -> const CsvCell& { return cells[col.at(name)]; };
    bool ok = true;
    auto number = [&](const char* name, double max) -> double {
      const CsvCell& c = cell(name);
      const auto v = parse_non_negative_number(c.text);
      if (!v || *v > max) {
        errs.error({path, lineno, c.col}, std::string(name) + " '" + std::string(c.text) +
                                              "' is not a number in 0.." + std::to_string(static_cast<int64_t>(max)));
        ok = false;
        return 0;
      }
      return *v;
    };
    const std::string sn(cell("sn").text);
    if (sn.empty()) {
      errs.error({path, lineno, cell("sn").col}, "empty node name (sn)");
      ok = false;
    } else if (b.has(sn)) {
      errs.error({path, lineno, cell("sn").col}, "duplicate node '" + sn + "'");
      ok = false;
    }
    const double cpu_milli = number("cpu_milli", 1e8);
    const double memory_mib = number("memory_mib", 1e10);
    const double gpus = number("gpu", 1024);
    if (!ok) continue;
    Shape s;
    s.cpus = static_cast<int>(cpu_milli / 1000.0);
    if (cpu_milli != s.cpus * 1000.0) ++fractional_cpu;
    if (s.cpus < 1) {
      errs.error({path, lineno, cell("cpu_milli").col}, "a node needs at least 1 CPU (cpu_milli >= 1000)");
      continue;
    }
    if (gpus != std::floor(gpus)) {
      errs.error({path, lineno, cell("gpu").col}, "gpu must be a whole number of GPUs");
      continue;
    }
    s.memory_mb = static_cast<int64_t>(memory_mib);
    s.gpus = static_cast<int>(gpus);
    const CsvCell& model = cell("model");
    if (s.gpus > 0) {
      if (is_missing_value(model.text)) {
        errs.error({path, lineno, model.col}, "a node with " + std::to_string(s.gpus) + " GPUs needs a GPU model");
        continue;
      }
      s.model = std::string(model.text);
    }
    b.add(sn, s);
  }
  errs.throw_if_errors();
  Cluster c = b.finish(path, diags);
  if (c.nodes.empty()) throw InputError(SourceLoc{path, hdr_line + 1, 1}, "no nodes in Alibaba node list");
  if (fractional_cpu > 0)
    diags.warning(SourceLoc{path, 0, 0}, std::to_string(fractional_cpu) +
                                             " nodes have a fractional CPU count (cpu_milli); rounded down");
  return c;
}

Cluster read_alibaba_v2023_nodes(const std::string& path, Diagnostics& diags) {
  return parse_alibaba_v2023_nodes(read_input_file(path), path, diags);
}

std::vector<std::string> parse_pai_v2020_header(const std::string& text, const std::string& header_path) {
  std::vector<std::string> cols;
  const auto lines = split_lines(text);
  size_t ln = 0;
  while (ln < lines.size() && trim(lines[ln]).empty()) ++ln;
  if (ln == lines.size()) throw InputError(SourceLoc{header_path, 1, 1}, "empty header file: expected column names");
  Diagnostics errs;
  for (const CsvCell& c : split_plain_csv(lines[ln])) {
    if (c.text.empty()) errs.error({header_path, static_cast<int>(ln) + 1, c.col}, "empty column name");
    cols.emplace_back(c.text);
  }
  for (size_t k = ln + 1; k < lines.size(); ++k)
    if (!trim(lines[k]).empty())
      errs.error({header_path, static_cast<int>(k) + 1, 1}, "a .header file holds one line of column names");
  errs.throw_if_errors();
  return cols;
}

std::vector<std::string> read_pai_v2020_header(const std::string& header_path) {
  return parse_pai_v2020_header(read_input_file(header_path), header_path);
}

Cluster parse_pai_v2020_machines(const std::string& text, const std::vector<std::string>& columns,
                                 const std::string& path, Diagnostics& diags) {
  std::map<std::string, size_t> col;
  for (size_t i = 0; i < columns.size(); ++i) col.emplace(to_lower(columns[i]), i);
  Diagnostics errs;
  for (const char* c : {"machine", "gpu_type", "cap_cpu", "cap_mem", "cap_gpu"})
    if (!col.count(c))
      errs.error({path, 0, 0}, std::string("the column names lack '") + c +
                                   "' (expected machine, gpu_type, cap_cpu, cap_mem, cap_gpu)");
  errs.throw_if_errors();

  ClusterBuilder b("alibaba-pai-v2020", path);
  const auto lines = split_lines(text);
  for (size_t ln = 0; ln < lines.size() && !errs.full(); ++ln) {
    const std::string_view line = lines[ln];
    const int lineno = static_cast<int>(ln) + 1;
    if (trim(line).empty()) continue;
    const auto cells = split_plain_csv(line);
    if (cells.size() != columns.size()) {
      errs.error({path, lineno, 1}, "expected " + std::to_string(columns.size()) + " fields (" +
                                        std::to_string(columns.size()) + " column names), found " +
                                        std::to_string(cells.size()));
      continue;
    }
    auto cell = [&](const char* name) -> const CsvCell& { return cells[col.at(name)]; };
    bool ok = true;
    auto count = [&](const char* name, int64_t max) -> int64_t {
      const CsvCell& c = cell(name);
      int64_t v = 0;
      const auto [p, ec] = std::from_chars(c.text.data(), c.text.data() + c.text.size(), v);
      if (c.text.empty() || ec != std::errc() || p != c.text.data() + c.text.size() || v < 0 || v > max) {
        errs.error({path, lineno, c.col}, std::string(name) + " '" + std::string(c.text) +
                                              "' is not a whole number in 0.." + std::to_string(max));
        ok = false;
      }
      return v;
    };
    const std::string machine(cell("machine").text);
    if (machine.empty()) {
      errs.error({path, lineno, cell("machine").col}, "empty machine name");
      ok = false;
    } else if (b.has(machine)) {
      errs.error({path, lineno, cell("machine").col}, "duplicate machine '" + machine + "'");
      ok = false;
    }
    const int64_t cpus = count("cap_cpu", 100000);
    const int64_t mem_gb = count("cap_mem", 1 << 20);
    const int64_t gpus = count("cap_gpu", 1024);
    if (!ok) continue;
    if (cpus < 1) {
      errs.error({path, lineno, cell("cap_cpu").col}, "a machine needs at least 1 CPU core");
      continue;
    }
    const std::string type(cell("gpu_type").text);
    const bool cpu_only = type.empty() || to_lower(type) == "cpu" || is_missing_value(type);
    if (cpu_only && gpus > 0) {
      errs.error({path, lineno, cell("gpu_type").col},
                 "machine has " + std::to_string(gpus) + " GPUs but gpu_type '" + type + "' names no GPU model");
      continue;
    }
    Shape s;
    s.cpus = static_cast<int>(cpus);
    s.memory_mb = mem_gb * 1024;
    s.gpus = static_cast<int>(gpus);
    if (gpus > 0) s.model = type;
    b.add(machine, s);
  }
  errs.throw_if_errors();
  Cluster c = b.finish(path, diags);
  if (c.nodes.empty()) throw InputError(SourceLoc{path, 1, 1}, "no machines in PAI machine spec");
  diags.note(SourceLoc{path, 0, 0}, "cap_cpu read as cores (1 thread each) and cap_mem as GiB");
  return c;
}

Cluster read_pai_v2020_machines(const std::string& path, const std::string& header_path, Diagnostics& diags) {
  const auto columns = read_pai_v2020_header(header_path);
  return parse_pai_v2020_machines(read_input_file(path), columns, path, diags);
}

}  // namespace gcsim
