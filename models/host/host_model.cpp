// The host and NUMA model (shared/research/nccl_model.md §6, §7 layer 6) and the readers
// of its parameter and calibration files. Modelling choices beyond the digest's guidance:
// - DMA from host memory is capped per socket, not per NUMA domain: the one measurement
//   (colibri #537) is per socket, and capping an NPS4 domain at a quarter of it would put a
//   single Gen4 stream of a DGX A100 below what it reaches.
// - The remote factor moves linearly from the single-stream to the all-GPUs figure with the
//   number of streams reading across sockets (the digest has only the two end points).
// - A page interleaved over domains costs its own domain's time: the factors combine
//   harmonically (bytes / bandwidth summed over the spread).
// - Data loaders: remote fraction = max(cores off the GPU's domain, memory off it), so that
//   both wrong cores and wrong memory count, and first-touch memory follows the cores.
// - NCCL's SHM buffers are first touched by threads NCCL binds to the GPU-local cores that
//   the process may use (its "Setting affinity for GPU" step); with no such core the
//   buffers land where the process's cores are.
#include "models/host/host_model.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <set>
#include <stdexcept>

#include "sim/core/diagnostics.hpp"
#include "sim/core/input_file.hpp"
#include "sim/core/yaml_check.hpp"

namespace gcsim {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// --- YAML ------------------------------------------------------------------------------

using Entry = YamlEntry;
using EntryMap = YamlMap;

const std::vector<std::string> kParamKeys = {"schema_version",     "pcie_efficiency", "dram_dma_per_socket",
                                             "same_socket_factor", "loader",          "gdr_staging",
                                             "default_platform",   "platforms",       "template_platforms"};
const std::vector<std::string> kLoaderKeys = {"rho_memory_bound", "rho_compute_bound"};
const std::vector<std::string> kClassKeys = {"phb", "node", "sys"};
const std::vector<std::string> kPlatformKeys = {"sys_bandwidth", "h2d_remote", "d2h_remote", "h2d_remote_all_gpus",
                                                "d2h_remote_all_gpus"};
const std::vector<std::string> kCalKeys = {"schema_version", "source", "node_templates"};
const std::vector<std::string> kCalTemplateKeys = {"platform", "copy",       "gpus",  "all_gpus",
                                                   "loader",   "gdr_factor", "memory"};
const std::vector<std::string> kMemoryKeys = {"cpu_numa", "mem_numa", "triad", "latency_ns", "threads"};
const std::vector<std::string> kCopyKeys = {"h2d_local", "h2d_remote", "d2h_local", "d2h_remote"};
const std::vector<std::string> kGpuKeys = {"gpu", "h2d_local", "h2d_remote", "d2h_local", "d2h_remote"};
const std::vector<std::string> kCalLoaderKeys = {"local", "remote"};

class HostLoader : public YamlChecker {
 public:
  using YamlChecker::YamlChecker;

  void load_params(const YAML::Node& root, HostParams& p);
  void load_calibration(const YAML::Node& root, HostParams& p);

 private:
  /// A number in an interval; `lo_open` / `hi_open` exclude the end points.
  std::optional<double> number_in(const Entry& e, double lo, bool lo_open, double hi, bool hi_open) {
    auto v = get_double(e);
    if (!v) return std::nullopt;
    const bool low_bad = lo_open ? *v <= lo : *v < lo;
    const bool high_bad = hi_open ? *v >= hi : *v > hi;
    if (low_bad || high_bad) {
      auto end = [](double x) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%g", x);
        return std::string(buf);
      };
      error(e.value, quote(e.key) + " must be in " + (lo_open ? "(" : "[") + end(lo) + ", " + end(hi) +
                         (hi_open ? ")" : "]") + ", got " + e.value.Scalar());
      return std::nullopt;
    }
    return v;
  }
  std::optional<double> factor(const Entry& e) { return number_in(e, 0, true, 1, false); }
  std::optional<double> bytes_per_s(const Entry& e) {
    auto v = get_bandwidth(e);
    if (!v) return std::nullopt;
    return *v / 8;
  }

  /// A map whose keys are names (templates, platforms): entries in file order, repeated keys reported.
  std::vector<Entry> named_map(const Entry& e) {
    std::vector<Entry> out;
    if (!e.value.IsMap()) {
      error(at(e), "expected a map for " + quote(e.key) + ", got " + describe(e.value));
      return out;
    }
    for (auto it = e.value.begin(); it != e.value.end(); ++it) {
      const YAML::Node k = it->first;
      if (!k.IsScalar() || k.Scalar().empty()) {
        error(k, "expected a name as key in " + quote(e.key));
        continue;
      }
      auto prev = std::find_if(out.begin(), out.end(), [&](const Entry& x) { return x.key == k.Scalar(); });
      if (prev != out.end()) {
        error(k, "duplicate key " + quote(k.Scalar()) + " in " + quote(e.key) + " (first at line " +
                     std::to_string(line_of(prev->key_node)) + ")");
        continue;
      }
      out.push_back({k.Scalar(), k, it->second});
    }
    return out;
  }

  bool schema(const EntryMap& top, const YAML::Node& root, const std::string& what) {
    const Entry* e = require(top, root, "schema_version", what);
    if (!e) return false;
    auto v = get_int(*e, 0, 1'000'000);
    if (v && *v != 1) error(e->value, "unsupported schema_version " + std::to_string(*v) + " (this gcsim reads 1)");
    return v.has_value();
  }

  bool root_ok(const YAML::Node& root, const std::string& what) {
    if (root.IsNull()) {
      diags_.error({path_, 0, 0}, "empty " + what);
      return false;
    }
    if (!root.IsMap()) {
      error(root, "expected a map at the top level, got " + describe(root));
      return false;
    }
    return true;
  }

  std::string platform_name(const Entry& e, const HostParams& p) {
    auto s = get_string(e);
    if (!s) return {};
    if (p.platforms.empty()) return {};  // 'platforms' is reported already
    if (!p.platform(*s)) {
      std::vector<std::string> names;
      for (const auto& x : p.platforms) names.push_back(x.name);
      error(e.value, "unknown platform " + quote(*s) + " for " + quote(e.key) + unknown_choice(*s, names));
      return {};
    }
    return *s;
  }

  void load_copy(const std::string& what, GpuCopyCalibration& c, const EntryMap& m);
  void load_template(const Entry& e, const HostParams& p, TemplateCalibration& t);
};

void HostLoader::load_params(const YAML::Node& root, HostParams& p) {
  const std::string what = "host parameter file";
  if (!root_ok(root, what)) return;
  const EntryMap top = map_of(root, what, kParamKeys);
  schema(top, root, what);
  if (const Entry* e = require(top, root, "pcie_efficiency", what))
    if (auto v = factor(*e)) p.pcie_efficiency = *v;
  if (const Entry* e = require(top, root, "dram_dma_per_socket", what))
    if (auto v = bytes_per_s(*e)) p.dram_dma_per_socket_Bps = *v;
  if (const Entry* e = require(top, root, "same_socket_factor", what))
    if (auto v = factor(*e)) p.same_socket_factor = *v;
  if (const Entry* e = require(top, root, "loader", what)) {
    const EntryMap m = map_of(e->value, "'loader'", kLoaderKeys);
    if (const Entry* x = require(m, e->value, "rho_memory_bound", "'loader'"))
      if (auto v = number_in(*x, 0, false, 1, true)) p.rho_memory_bound = *v;
    if (const Entry* x = require(m, e->value, "rho_compute_bound", "'loader'"))
      if (auto v = number_in(*x, 0, false, 1, true)) p.rho_compute_bound = *v;
  }
  if (const Entry* e = require(top, root, "gdr_staging", what)) {
    const EntryMap m = map_of(e->value, "'gdr_staging'", kClassKeys);
    double* dst[] = {&p.gdr_staging.phb, &p.gdr_staging.node, &p.gdr_staging.sys};
    for (size_t i = 0; i < kClassKeys.size(); ++i)
      if (const Entry* x = require(m, e->value, kClassKeys[i], "'gdr_staging'"))
        if (auto v = factor(*x)) *dst[i] = *v;
  }
  if (const Entry* e = require(top, root, "platforms", what)) {
    for (const Entry& pe : named_map(*e)) {
      HostPlatform pl;
      pl.name = pe.key;
      const std::string w = "platform " + quote(pe.key);
      const EntryMap m = map_of(pe.value, w, kPlatformKeys);
      if (const Entry* x = require(m, pe.value, "sys_bandwidth", w, &pe.key_node))
        if (auto v = bytes_per_s(*x)) pl.sys_bandwidth_Bps = *v;
      double* dst[] = {&pl.h2d_remote, &pl.d2h_remote, &pl.h2d_remote_all_gpus, &pl.d2h_remote_all_gpus};
      for (size_t i = 1; i < kPlatformKeys.size(); ++i)
        if (const Entry* x = require(m, pe.value, kPlatformKeys[i], w, &pe.key_node))
          if (auto v = factor(*x)) *dst[i - 1] = *v;
      p.platforms.push_back(std::move(pl));
    }
    if (p.platforms.empty() && e->value.IsMap()) error(at(*e), "'platforms' must name at least one platform");
  }
  if (const Entry* e = require(top, root, "default_platform", what)) p.default_platform = platform_name(*e, p);
  if (const Entry* e = find(top, "template_platforms"))
    for (const Entry& te : named_map(*e))
      if (std::string s = platform_name(te, p); !s.empty()) p.template_platforms[te.key] = s;
}

void HostLoader::load_copy(const std::string& what, GpuCopyCalibration& c, const EntryMap& m) {
  double* dst[] = {&c.h2d_local_Bps, &c.h2d_remote_Bps, &c.d2h_local_Bps, &c.d2h_remote_Bps};
  for (size_t i = 0; i < kCopyKeys.size(); ++i)
    if (const Entry* x = find(m, kCopyKeys[i]))
      if (auto v = bytes_per_s(*x)) *dst[i] = *v;
  for (const char* dir : {"h2d", "d2h"}) {
    const Entry* remote = find(m, std::string(dir) + "_remote");
    if (remote && !find(m, std::string(dir) + "_local"))
      error(remote->key_node, quote(remote->key) + " needs " + quote(std::string(dir) + "_local") + " in " + what);
  }
}

void HostLoader::load_template(const Entry& e, const HostParams& p, TemplateCalibration& t) {
  const std::string w = "node template " + quote(e.key);
  const EntryMap m = map_of(e.value, w, kCalTemplateKeys);
  if (const Entry* x = find(m, "platform"))
    if (std::string s = platform_name(*x, p); !s.empty()) t.platform = s;
  if (const Entry* x = find(m, "copy")) {
    const EntryMap c = map_of(x->value, "'copy'", kCopyKeys);
    GpuCopyCalibration cc;
    load_copy("'copy'", cc, c);
    auto keep = [](double& dst, double v) { if (v > 0) dst = v; };
    keep(t.copy.h2d_local_Bps, cc.h2d_local_Bps);
    keep(t.copy.h2d_remote_Bps, cc.h2d_remote_Bps);
    keep(t.copy.d2h_local_Bps, cc.d2h_local_Bps);
    keep(t.copy.d2h_remote_Bps, cc.d2h_remote_Bps);
  }
  if (const Entry* x = find(m, "gpus"); x && sequence_or_error(*x)) {
    std::map<int, int> seen;  // GPU index -> line
    for (const auto& item : x->value) {
      const EntryMap g = map_of(item, "a 'gpus' entry", kGpuKeys);
      const Entry* idx = require(g, item, "gpu", "a 'gpus' entry");
      std::optional<int> gi;
      if (idx) gi = get_int32(*idx, 0, 63);
      if (gi) {
        if (auto s = seen.find(*gi); s != seen.end()) {
          error(idx->value, "GPU " + std::to_string(*gi) + " is listed twice in 'gpus' (first at line " +
                                std::to_string(s->second) + ")");
          gi.reset();
        } else {
          seen[*gi] = line_of(idx->value);
        }
      }
      GpuCopyCalibration cc;
      load_copy("a 'gpus' entry", cc, g);
      if (gi) {
        auto& dst = t.gpus[*gi];
        auto keep = [](double& d, double v) { if (v > 0) d = v; };
        keep(dst.h2d_local_Bps, cc.h2d_local_Bps);
        keep(dst.h2d_remote_Bps, cc.h2d_remote_Bps);
        keep(dst.d2h_local_Bps, cc.d2h_local_Bps);
        keep(dst.d2h_remote_Bps, cc.d2h_remote_Bps);
      }
    }
  }
  if (const Entry* x = find(m, "all_gpus")) {
    const EntryMap c = map_of(x->value, "'all_gpus'", kCopyKeys);
    GpuCopyCalibration cc;
    load_copy("'all_gpus'", cc, c);
    for (const char* dir : {"h2d", "d2h"}) {
      const Entry* local = find(c, std::string(dir) + "_local");
      if (local && !find(c, std::string(dir) + "_remote"))
        error(local->key_node, quote(local->key) + " needs " + quote(std::string(dir) + "_remote") + " in 'all_gpus'");
    }
    if (cc.h2d_local_Bps > 0 && cc.h2d_remote_Bps > 0)
      t.h2d_remote_all_gpus = std::min(1.0, cc.h2d_remote_Bps / cc.h2d_local_Bps);
    if (cc.d2h_local_Bps > 0 && cc.d2h_remote_Bps > 0)
      t.d2h_remote_all_gpus = std::min(1.0, cc.d2h_remote_Bps / cc.d2h_local_Bps);
  }
  if (const Entry* x = find(m, "loader")) {
    const EntryMap c = map_of(x->value, "'loader'", kCalLoaderKeys);
    const Entry* l = require(c, x->value, "local", "'loader'");
    const Entry* r = require(c, x->value, "remote", "'loader'");
    std::optional<double> lv, rv;
    if (l) lv = number_in(*l, 0, true, kInf, true);
    if (r) rv = number_in(*r, 0, true, kInf, true);
    if (lv && rv) {
      if (*rv > *lv)
        error(r->value, "remote loader throughput " + r->value.Scalar() + " is above the local " + l->value.Scalar() +
                            " (the model cannot speed a loader up)");
      else
        t.loader_rho = 1 - *rv / *lv;
    }
  }
  if (const Entry* x = find(m, "memory"); x && sequence_or_error(*x)) {
    std::map<std::pair<int, int>, int> seen;  // pair -> line
    for (const auto& item : x->value) {
      const EntryMap g = map_of(item, "a 'memory' entry", kMemoryKeys);
      MemoryPairCalibration mp;
      const Entry* cn = require(g, item, "cpu_numa", "a 'memory' entry");
      const Entry* mn = require(g, item, "mem_numa", "a 'memory' entry");
      const Entry* tr = require(g, item, "triad", "a 'memory' entry");
      std::optional<int> ci, mi;
      std::optional<double> tv;
      if (cn) ci = get_int32(*cn, 0, 1023);
      if (mn) mi = get_int32(*mn, 0, 1023);
      if (tr) tv = bytes_per_s(*tr);
      if (const Entry* l = find(g, "latency_ns"))
        if (auto v = number_in(*l, 0, true, kInf, true)) mp.latency_ns = *v;
      if (const Entry* th = find(g, "threads"))
        if (auto v = get_int32(*th, 1, 1 << 20)) mp.threads = *v;
      if (!ci || !mi || !tv) continue;
      if (auto sn = seen.find({*ci, *mi}); sn != seen.end()) {
        error(cn->value, "pair (cpu_numa " + std::to_string(*ci) + ", mem_numa " + std::to_string(*mi) +
                             ") is listed twice in 'memory' (first at line " + std::to_string(sn->second) + ")");
        continue;
      }
      seen[{*ci, *mi}] = line_of(cn->value);
      mp.cpu_numa = *ci;
      mp.mem_numa = *mi;
      mp.triad_Bps = *tv;
      auto same = [&](const MemoryPairCalibration& o) { return o.cpu_numa == mp.cpu_numa && o.mem_numa == mp.mem_numa; };
      t.memory.erase(std::remove_if(t.memory.begin(), t.memory.end(), same), t.memory.end());
      t.memory.push_back(mp);
    }
  }
  if (const Entry* x = find(m, "gdr_factor")) {
    const EntryMap c = map_of(x->value, "'gdr_factor'", kClassKeys);
    std::optional<double>* dst[] = {&t.gdr_phb, &t.gdr_node, &t.gdr_sys};
    for (size_t i = 0; i < kClassKeys.size(); ++i)
      if (const Entry* y = find(c, kClassKeys[i]))
        if (auto v = factor(*y)) *dst[i] = *v;
  }
}

void HostLoader::load_calibration(const YAML::Node& root, HostParams& p) {
  const std::string what = "host calibration file";
  if (!root_ok(root, what)) return;
  const EntryMap top = map_of(root, what, kCalKeys);
  schema(top, root, what);
  std::string source = path_;
  if (const Entry* e = find(top, "source"))
    if (auto s = get_string(*e)) source += " (" + *s + ")";
  if (const Entry* e = require(top, root, "node_templates", what)) {
    for (const Entry& te : named_map(*e)) {
      TemplateCalibration& t = p.calibration[te.key];
      load_template(te, p, t);
      t.sources.push_back(source);
    }
  }
}

// --- formatting for notes -----------------------------------------------------------------

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}
std::string gbps(double Bps) { return fixed(Bps / 1e9, 2) + " GB/s"; }

const char* dir_name(CopyDir d) { return d == CopyDir::kH2D ? "H2D" : "D2H"; }

}  // namespace

// ---------------------------------------------------------------------------------------
// Parameters
// ---------------------------------------------------------------------------------------

const HostPlatform* HostParams::platform(const std::string& name) const {
  for (const auto& p : platforms)
    if (p.name == name) return &p;
  return nullptr;
}

const HostPlatform& HostParams::platform_for(const std::string& template_name) const {
  if (const TemplateCalibration* c = calibration_for(template_name); c && !c->platform.empty())
    if (const HostPlatform* p = platform(c->platform)) return *p;
  if (auto it = template_platforms.find(template_name); it != template_platforms.end())
    if (const HostPlatform* p = platform(it->second)) return *p;
  if (const HostPlatform* p = platform(default_platform)) return *p;
  throw std::invalid_argument("host parameters: no platform for node template '" + template_name +
                              "' and no default platform");
}

const TemplateCalibration* HostParams::calibration_for(const std::string& template_name) const {
  auto it = calibration.find(template_name);
  return it == calibration.end() ? nullptr : &it->second;
}

HostParams parse_host_params(const std::string& text, const std::string& path) {
  HostParams p;
  p.source = path;
  load_yaml_checked(text, path, [&](const YAML::Node& root, Diagnostics& diags) {
    HostLoader(path, diags).load_params(root, p);
  });
  return p;
}

HostParams load_host_params(const std::string& path) { return parse_host_params(read_input_file(path), path); }

std::string default_host_params_path(const std::string& source_dir) { return source_dir + "/configs/host/default.yaml"; }

HostParams parse_host_calibration(HostParams p, const std::string& text, const std::string& path) {
  HostParams out = p;
  load_yaml_checked(text, path, [&](const YAML::Node& root, Diagnostics& diags) {
    HostLoader(path, diags).load_calibration(root, out);
  });
  return out;
}

HostParams apply_host_calibration(HostParams p, const std::string& path) {
  return parse_host_calibration(std::move(p), read_input_file(path), path);
}

// ---------------------------------------------------------------------------------------
// HostModel
// ---------------------------------------------------------------------------------------

HostModel::HostModel(const HostParams& params, const NodeTemplate& tmpl, const NodeTopology& topo)
    : params_(&params),
      tmpl_(&tmpl),
      topo_(&topo),
      platform_(&params.platform_for(tmpl.name)),
      cal_(params.calibration_for(tmpl.name)) {
  if (cal_)
    for (const auto& [g, c] : cal_->gpus)
      if (g >= topo.gpu_count())
        throw std::invalid_argument("host calibration for node template '" + tmpl.name + "' names GPU " +
                                    std::to_string(g) + "; the template has " + std::to_string(topo.gpu_count()));
  // The probe's memory matrix: each socket's DRAM is the sum of its domains' local triad
  // (DMA cannot pull more than the memory gives); a memory-bound loader on remote cores and
  // memory runs at the remote / local triad ratio (rho = 1 - ratio).
  dram_socket_Bps_.assign(static_cast<size_t>(std::max(1, tmpl.total_sockets())), params.dram_dma_per_socket_Bps);
  if (cal_ && !cal_->memory.empty()) {
    std::vector<double> sum(dram_socket_Bps_.size(), 0);
    double local = 0, remote = 0;
    int nl = 0, nr = 0;
    for (const auto& mp : cal_->memory) {
      if (mp.cpu_numa >= tmpl.numa_domains() || mp.mem_numa >= tmpl.numa_domains())
        throw std::invalid_argument("host calibration for node template '" + tmpl.name + "' names NUMA domain " +
                                    std::to_string(std::max(mp.cpu_numa, mp.mem_numa)) + "; the template has " +
                                    std::to_string(tmpl.numa_domains()));
      if (mp.cpu_numa == mp.mem_numa) {
        sum[static_cast<size_t>(tmpl.socket_of_numa(mp.mem_numa))] += mp.triad_Bps;
        local += mp.triad_Bps;
        ++nl;
      } else if (tmpl.socket_of_numa(mp.cpu_numa) != tmpl.socket_of_numa(mp.mem_numa)) {
        remote += mp.triad_Bps;
        ++nr;
      }
    }
    for (size_t k = 0; k < sum.size(); ++k)
      if (sum[k] > 0) dram_socket_Bps_[k] = sum[k];
    if (nl > 0 && nr > 0 && local > 0) memory_rho_ = std::clamp(1 - (remote / nr) / (local / nl), 0.0, 0.95);
  }
  local_edges_.resize(static_cast<size_t>(topo.gpu_count()));
  for (int g = 0; g < topo.gpu_count(); ++g) {
    const PathInfo p = topo.path(DeviceRef::gpu(g), DeviceRef::numa(topo.gpu_numa(g)));
    for (int e : p.edges)
      if (topo.edge(e).kind == TopoEdgeKind::kPcie) local_edges_[static_cast<size_t>(g)].push_back(e);
  }
  // GPU -> NIC routes, once per template: every job start asks for them (nic_routes),
  // and each was a breadth-first search of the node's graph
  routes_.reserve(static_cast<size_t>(topo.gpu_count() * topo.nic_count()));
  for (int g = 0; g < topo.gpu_count(); ++g)
    for (int n = 0; n < topo.nic_count(); ++n) routes_.push_back(compute_route(g, n));
}

double HostModel::raw_bandwidth(const TopoEdge& e) const {
  return e.kind == TopoEdgeKind::kPcie ? pcie_bandwidth_Bps(e.pcie_gen, e.pcie_width) : e.bandwidth_Bps;
}

double HostModel::local_raw_Bps(int gpu) const {
  double bw = kInf;
  for (int e : local_edges_.at(static_cast<size_t>(gpu))) bw = std::min(bw, raw_bandwidth(topo_->edge(e)));
  return bw;
}

double HostModel::calibrated_local(int gpu, CopyDir dir) const {
  if (!cal_) return 0;
  auto pick = [dir](const GpuCopyCalibration& c) { return dir == CopyDir::kH2D ? c.h2d_local_Bps : c.d2h_local_Bps; };
  if (auto it = cal_->gpus.find(gpu); it != cal_->gpus.end() && pick(it->second) > 0) return pick(it->second);
  return pick(cal_->copy);
}

double HostModel::efficiency(int gpu, CopyDir dir) const {
  const double cal = calibrated_local(gpu, dir);
  const double raw = local_raw_Bps(gpu);
  if (cal > 0 && std::isfinite(raw) && raw > 0) return cal / raw;
  return params_->pcie_efficiency;
}

double HostModel::single_remote(int gpu, CopyDir dir) const {
  auto ratio = [dir](const GpuCopyCalibration& c) {
    const double l = dir == CopyDir::kH2D ? c.h2d_local_Bps : c.d2h_local_Bps;
    const double r = dir == CopyDir::kH2D ? c.h2d_remote_Bps : c.d2h_remote_Bps;
    return l > 0 && r > 0 ? std::min(1.0, r / l) : 0.0;
  };
  if (cal_) {
    if (auto it = cal_->gpus.find(gpu); it != cal_->gpus.end())
      if (double f = ratio(it->second); f > 0) return f;
    if (double f = ratio(cal_->copy); f > 0) return f;
  }
  return dir == CopyDir::kH2D ? platform_->h2d_remote : platform_->d2h_remote;
}

double HostModel::all_remote(CopyDir dir) const {
  if (cal_) {
    const double f = dir == CopyDir::kH2D ? cal_->h2d_remote_all_gpus : cal_->d2h_remote_all_gpus;
    if (f > 0) return f;
  }
  return dir == CopyDir::kH2D ? platform_->h2d_remote_all_gpus : platform_->d2h_remote_all_gpus;
}

double HostModel::cross_socket_factor(int gpu, CopyDir dir, int remote_streams) const {
  const double s = single_remote(gpu, dir);
  const int gpus = topo_->gpu_count();
  if (gpus <= 1 || remote_streams <= 1) return s;
  const double t = static_cast<double>(std::min(remote_streams, gpus) - 1) / (gpus - 1);
  return s + (all_remote(dir) - s) * t;
}

std::vector<double> HostModel::memory_spread(int gpu, const MemBinding& mem) const {
  const int domains = topo_->numa_count();
  std::vector<double> w(static_cast<size_t>(domains), 0.0);
  switch (mem.kind) {
    case MemBinding::Kind::kGpuLocal: w.at(static_cast<size_t>(topo_->gpu_numa(gpu))) = 1; break;
    case MemBinding::Kind::kNuma:
      if (mem.numa < 0 || mem.numa >= domains)
        throw std::invalid_argument("memory binding to NUMA domain " + std::to_string(mem.numa) + "; the node has " +
                                    std::to_string(domains));
      w[static_cast<size_t>(mem.numa)] = 1;
      break;
    case MemBinding::Kind::kInterleaved:
      for (auto& x : w) x = 1.0 / domains;
      break;
    case MemBinding::Kind::kFirstTouch: {
      if (mem.cores.empty()) throw std::invalid_argument("first-touch memory binding without cores");
      for (int c : mem.cores) {
        if (c < 0 || c >= tmpl_->cores()) throw std::invalid_argument("core " + std::to_string(c) + " is not on the node");
        w[static_cast<size_t>(tmpl_->numa_of_core(c))] += 1.0 / static_cast<double>(mem.cores.size());
      }
      break;
    }
  }
  return w;
}

bool HostModel::crosses_socket(int gpu, const std::vector<double>& spread) const {
  const int sock = tmpl_->socket_of_numa(topo_->gpu_numa(gpu));
  for (size_t d = 0; d < spread.size(); ++d)
    if (spread[d] > 0 && tmpl_->socket_of_numa(static_cast<int>(d)) != sock) return true;
  return false;
}

double HostModel::copy_factor(int gpu, CopyDir dir, const std::vector<double>& spread, int remote_streams) const {
  const int numa = topo_->gpu_numa(gpu);
  const int sock = tmpl_->socket_of_numa(numa);
  const double cross = cross_socket_factor(gpu, dir, remote_streams);
  double time = 0;  // per byte, in units of the local time
  for (size_t d = 0; d < spread.size(); ++d) {
    if (spread[d] <= 0) continue;
    const int dn = static_cast<int>(d);
    const double f = dn == numa ? 1.0 : tmpl_->socket_of_numa(dn) == sock ? params_->same_socket_factor : cross;
    time += spread[d] / f;
  }
  return time > 0 ? 1.0 / time : 1.0;
}

std::vector<double> HostModel::copy_bandwidths_Bps(CopyDir dir, const std::vector<CopyStream>& streams) const {
  const size_t n = streams.size();
  std::vector<std::vector<double>> spread(n);
  std::map<int, int> edge_use;
  std::vector<double> socket_load(static_cast<size_t>(tmpl_->total_sockets()), 0.0);
  int remote_streams = 0;
  for (size_t i = 0; i < n; ++i) {
    const int g = streams[i].gpu;
    if (g < 0 || g >= topo_->gpu_count()) throw std::invalid_argument("GPU " + std::to_string(g) + " is not on the node");
    spread[i] = memory_spread(g, streams[i].mem);
    for (int e : local_edges_[static_cast<size_t>(g)]) ++edge_use[e];
    for (size_t d = 0; d < spread[i].size(); ++d)
      socket_load[static_cast<size_t>(tmpl_->socket_of_numa(static_cast<int>(d)))] += spread[i][d];
    if (crosses_socket(g, spread[i])) ++remote_streams;
  }
  std::vector<double> out(n);
  for (size_t i = 0; i < n; ++i) {
    const int g = streams[i].gpu;
    double pcie = kInf;
    for (int e : local_edges_[static_cast<size_t>(g)])
      pcie = std::min(pcie, raw_bandwidth(topo_->edge(e)) / edge_use[e]);
    pcie = std::isfinite(pcie) ? pcie * efficiency(g, dir) : (calibrated_local(g, dir) > 0 ? calibrated_local(g, dir) : kInf);
    double dram = kInf;
    for (size_t d = 0; d < spread[i].size(); ++d) {
      if (spread[i][d] <= 0) continue;
      const size_t k = static_cast<size_t>(tmpl_->socket_of_numa(static_cast<int>(d)));
      dram = std::min(dram, dram_socket_Bps_[k] / socket_load[k]);
    }
    const double local = std::min(pcie, dram);
    out[i] = local * copy_factor(g, dir, spread[i], remote_streams);
  }
  return out;
}

namespace {

std::vector<CopyStream> same_binding(int gpu, const MemBinding& mem, const std::vector<int>& streaming) {
  std::vector<CopyStream> s{{gpu, mem}};
  std::set<int> seen{gpu};
  for (int g : streaming)
    if (seen.insert(g).second) s.push_back({g, mem});
  return s;
}

}  // namespace

double HostModel::h2d_bandwidth_Bps(int gpu, const MemBinding& mem, const std::vector<int>& streaming) const {
  return copy_bandwidths_Bps(CopyDir::kH2D, same_binding(gpu, mem, streaming)).front();
}

double HostModel::d2h_bandwidth_Bps(int gpu, const MemBinding& mem, const std::vector<int>& streaming) const {
  return copy_bandwidths_Bps(CopyDir::kD2H, same_binding(gpu, mem, streaming)).front();
}

double HostModel::remote_fraction(const std::vector<int>& cores, const MemBinding& mem,
                                  const std::vector<int>& gpus) const {
  if (cores.empty()) throw std::invalid_argument("remote fraction of a task without cores");
  if (gpus.empty()) throw std::invalid_argument("remote fraction of a task without GPUs");
  double sum = 0;
  for (int g : gpus) {
    if (g < 0 || g >= topo_->gpu_count()) throw std::invalid_argument("GPU " + std::to_string(g) + " is not on the node");
    const int numa = topo_->gpu_numa(g);
    int off = 0;
    for (int c : cores) {
      if (c < 0 || c >= tmpl_->cores()) throw std::invalid_argument("core " + std::to_string(c) + " is not on the node");
      if (tmpl_->numa_of_core(c) != numa) ++off;
    }
    const double core_off = static_cast<double>(off) / static_cast<double>(cores.size());
    const MemBinding m = mem.kind == MemBinding::Kind::kFirstTouch && mem.cores.empty() ? MemBinding::first_touch(cores) : mem;
    const double mem_off = 1.0 - memory_spread(g, m)[static_cast<size_t>(numa)];
    sum += std::max(core_off, mem_off);
  }
  return sum / static_cast<double>(gpus.size());
}

double HostModel::loader_factor(const std::vector<int>& cores, const MemBinding& mem, const std::vector<int>& gpus,
                                double rho) const {
  if (!(rho >= 0 && rho < 1)) throw std::invalid_argument("loader rho must be in [0, 1), got " + fixed(rho, 3));
  return 1.0 - rho * remote_fraction(cores, mem, gpus);
}

double HostModel::loader_factor(const TaskBinding& task, double rho) const {
  const MemBinding mem = task.mem_numa >= 0 ? MemBinding::on_numa(task.mem_numa) : MemBinding::first_touch(task.cores);
  return loader_factor(task.cores, mem, task.gpus, rho);
}

double HostModel::loader_rho(LoaderKind kind) const {
  if (kind == LoaderKind::kComputeBound) return params_->rho_compute_bound;
  if (cal_ && cal_->loader_rho >= 0) return cal_->loader_rho;
  if (memory_rho_ >= 0) return memory_rho_;
  return params_->rho_memory_bound;
}

double HostModel::dram_socket_Bps(int socket) const { return dram_socket_Bps_.at(static_cast<size_t>(socket)); }

NicRoute HostModel::route(int gpu, int nic) const {
  if (gpu >= 0 && gpu < topo_->gpu_count() && nic >= 0 && nic < topo_->nic_count())
    return routes_[static_cast<size_t>(gpu * topo_->nic_count() + nic)];
  return compute_route(gpu, nic);
}

NicRoute HostModel::compute_route(int gpu, int nic) const {
  NicRoute r;
  r.gpu = gpu;
  r.nic = nic;
  if (nic < 0) return r;
  const PathInfo p = topo_->path(DeviceRef::gpu(gpu), DeviceRef::nic(nic));
  r.cls = p.cls;
  r.path_raw_Bps = kInf;
  for (int e : p.edges) r.path_raw_Bps = std::min(r.path_raw_Bps, raw_bandwidth(topo_->edge(e)));
  r.nic_sharers = 1;
  r.staged_on_socket = r.cls > PathClass::kPxb ? 1 : 0;
  return r;
}

std::vector<NicRoute> HostModel::nic_routes(const std::vector<int>& gpus) const {
  std::vector<NicRoute> out;
  std::vector<int> load(static_cast<size_t>(topo_->nic_count()), 0);
  for (int g : gpus) {
    if (g < 0 || g >= topo_->gpu_count()) throw std::invalid_argument("GPU " + std::to_string(g) + " is not on the node");
    int best = -1;
    PathClass best_cls = PathClass::kSys;
    for (int n = 0; n < topo_->nic_count(); ++n) {
      const PathClass c = routes_[static_cast<size_t>(g * topo_->nic_count() + n)].cls;
      if (best < 0 || c < best_cls || (c == best_cls && load[static_cast<size_t>(n)] < load[static_cast<size_t>(best)])) {
        best = n;
        best_cls = c;
      }
    }
    if (best >= 0) ++load[static_cast<size_t>(best)];
    out.push_back(route(g, best));
  }
  for (auto& r : out) {
    if (r.nic < 0) continue;
    r.nic_sharers = load[static_cast<size_t>(r.nic)];
    const int sock = tmpl_->socket_of_numa(topo_->gpu_numa(r.gpu));
    r.staged_on_socket = 0;
    if (r.cls > PathClass::kPxb)
      for (const auto& o : out)
        if (o.nic >= 0 && o.cls > PathClass::kPxb && tmpl_->socket_of_numa(topo_->gpu_numa(o.gpu)) == sock)
          ++r.staged_on_socket;
  }
  return out;
}

double HostModel::inter_node_bandwidth_Bps(const NicRoute& r) const {
  if (r.nic < 0) return 0;
  const double share = tmpl_->nics.at(static_cast<size_t>(r.nic)).bandwidth_bps / 8 / std::max(1, r.nic_sharers);
  if (r.cls <= PathClass::kPxb) return std::min(share, r.path_raw_Bps);
  if (cal_) {
    const std::optional<double>& f = r.cls == PathClass::kPhb ? cal_->gdr_phb : r.cls == PathClass::kNode ? cal_->gdr_node : cal_->gdr_sys;
    if (f) return share * *f;
  }
  const double k = r.cls == PathClass::kPhb ? params_->gdr_staging.phb
                   : r.cls == PathClass::kNode ? params_->gdr_staging.node
                                               : params_->gdr_staging.sys;
  const double eff = std::min(efficiency(r.gpu, CopyDir::kH2D), efficiency(r.gpu, CopyDir::kD2H));
  const int socket = tmpl_->socket_of_numa(topo_->gpu_numa(r.gpu));
  double bw = std::min(share, dram_socket_Bps(socket) / (2.0 * std::max(1, r.staged_on_socket)));
  const double raw = local_raw_Bps(r.gpu);
  if (std::isfinite(raw)) bw = std::min(bw, k * eff * raw);
  if (r.cls == PathClass::kSys) bw = std::min(bw, platform_->sys_bandwidth_Bps);
  return bw;
}

double HostModel::inter_node_bandwidth_Bps(int gpu, const std::vector<int>& streaming) const {
  std::vector<int> gpus{gpu};
  for (int g : streaming)
    if (std::find(gpus.begin(), gpus.end(), g) == gpus.end()) gpus.push_back(g);
  std::sort(gpus.begin(), gpus.end());
  for (const auto& r : nic_routes(gpus))
    if (r.gpu == gpu) return inter_node_bandwidth_Bps(r);
  return 0;
}

double HostModel::gdr_factor(const NicRoute& r) const {
  if (r.nic < 0) return 1;
  const double share = tmpl_->nics.at(static_cast<size_t>(r.nic)).bandwidth_bps / 8 / std::max(1, r.nic_sharers);
  return share > 0 ? inter_node_bandwidth_Bps(r) / share : 1;
}

double HostModel::gdr_factor(int gpu, const std::vector<int>& streaming) const {
  std::vector<int> gpus{gpu};
  for (int g : streaming)
    if (std::find(gpus.begin(), gpus.end(), g) == gpus.end()) gpus.push_back(g);
  std::sort(gpus.begin(), gpus.end());
  for (const auto& r : nic_routes(gpus))
    if (r.gpu == gpu) return gdr_factor(r);
  return 1;
}

HostEffects HostModel::host_effects(const NodeAlloc& alloc, const HostJobOptions& o) const {
  HostEffects fx;
  const std::vector<int>& gpus = alloc.gpus;
  if (gpus.empty()) {
    if (o.notes) fx.notes.push_back("no GPUs on this node: host effects not modelled");
    return fx;
  }
  // The task of each GPU: the first binding that lists it, else the node's whole allocation.
  TaskBinding whole{alloc.cores, alloc.gpus, -1};
  std::vector<const TaskBinding*> tasks;
  for (const auto& b : alloc.bindings)
    if (!b.gpus.empty()) tasks.push_back(&b);
  if (tasks.empty()) tasks.push_back(&whole);
  auto task_of = [&](int g) -> const TaskBinding& {
    for (const TaskBinding* t : tasks)
      if (std::find(t->gpus.begin(), t->gpus.end(), g) != t->gpus.end()) return *t;
    return whole;
  };
  auto mem_of = [&](const TaskBinding& t) {
    if (o.mem) return *o.mem;
    if (t.mem_numa >= 0) return MemBinding::on_numa(t.mem_numa);
    if (t.cores.empty()) return MemBinding::gpu_local();
    return MemBinding::first_touch(t.cores);
  };
  auto numa_text = [&](const std::vector<double>& w) {
    std::string s;
    for (size_t d = 0; d < w.size(); ++d)
      if (w[d] > 0) s += (s.empty() ? "" : ",") + std::to_string(d);
    return "numa " + s;
  };

  // Copies: every GPU of the job at once, each from its task's buffers.
  std::vector<CopyStream> streams, local_streams;
  for (int g : gpus) {
    streams.push_back({g, mem_of(task_of(g))});
    local_streams.push_back({g, MemBinding::gpu_local()});
  }
  int remote_streams = 0;
  for (const auto& s : streams)
    if (crosses_socket(s.gpu, memory_spread(s.gpu, s.mem))) ++remote_streams;
  for (CopyDir dir : {CopyDir::kH2D, CopyDir::kD2H}) {
    const auto bw = copy_bandwidths_Bps(dir, streams);
    const auto ref = copy_bandwidths_Bps(dir, local_streams);
    double worst = kInf, factor = 1;
    for (size_t i = 0; i < bw.size(); ++i) {
      worst = std::min(worst, bw[i]);
      const double f = ref[i] > 0 ? bw[i] / ref[i] : 1;
      factor = std::min(factor, f);
      if (o.notes && f < 0.999)
        fx.notes.push_back("gpu" + std::to_string(streams[i].gpu) + " " + dir_name(dir) + ": buffers on " +
                           numa_text(memory_spread(streams[i].gpu, streams[i].mem)) + ", GPU on numa " +
                           std::to_string(topo_->gpu_numa(streams[i].gpu)) + ": " + gbps(bw[i]) + " against " +
                           gbps(ref[i]) + " with GPU-local buffers (x" + fixed(f, 3) + "; " + platform_->name + ", " +
                           std::to_string(remote_streams) + " of " + std::to_string(topo_->gpu_count()) +
                           " GPUs copying across sockets)");
    }
    (dir == CopyDir::kH2D ? fx.h2d_Bps : fx.d2h_Bps) = worst;
    (dir == CopyDir::kH2D ? fx.h2d_factor : fx.d2h_factor) = factor;
  }

  // Data loaders: the slowest task.
  const double rho = o.loader_rho >= 0 ? o.loader_rho : loader_rho(LoaderKind::kMemoryBound);
  for (size_t ti = 0; ti < tasks.size(); ++ti) {
    const TaskBinding& t = *tasks[ti];
    if (t.cores.empty()) continue;
    const double remote = remote_fraction(t.cores, mem_of(t), t.gpus);
    const double f = loader_factor(t.cores, mem_of(t), t.gpus, rho);
    fx.loader_factor = std::min(fx.loader_factor, f);
    if (o.notes && remote > 0)
      fx.notes.push_back("task " + std::to_string(ti) + ": remote fraction " + fixed(remote, 3) +
                         " of its cores/memory off its GPUs' NUMA domains: loader x" + fixed(f, 3) + " (rho " +
                         fixed(rho, 3) + ")");
  }

  // Inter-node: every GPU of the job sending at once.
  if (topo_->nic_count() == 0) {
    if (o.notes) fx.notes.push_back("no NIC on this node: no inter-node bandwidth");
  } else {
    double worst = kInf, gdr = 1;
    for (const auto& r : nic_routes(gpus)) {
      const double bw = inter_node_bandwidth_Bps(r);
      const double f = gdr_factor(r);
      worst = std::min(worst, bw);
      gdr = std::min(gdr, f);
      if (o.notes && r.cls > PathClass::kPxb)
        fx.notes.push_back("gpu" + std::to_string(r.gpu) + ": NIC " + tmpl_->nics[static_cast<size_t>(r.nic)].name +
                           " at " + std::string(path_class_name(r.cls)) +
                           ": no GPUDirect RDMA, staged through host memory: " + gbps(bw) + " (x" + fixed(f, 3) +
                           " of its NIC share)");
    }
    fx.inter_node_Bps = worst;
    fx.gdr_factor = gdr;
  }

  // Host staging between GPUs without P2P (NCCL's P2P level is PXB).
  std::set<int> staged;
  std::string pairs;
  for (size_t i = 0; i < gpus.size(); ++i)
    for (size_t j = i + 1; j < gpus.size(); ++j) {
      const PathClass c = topo_->path(DeviceRef::gpu(gpus[i]), DeviceRef::gpu(gpus[j])).cls;
      if (c > PathClass::kPxb) {
        staged.insert(gpus[i]);
        staged.insert(gpus[j]);
        if (pairs.size() < 200)
          pairs += (pairs.empty() ? "" : ", ") + ("gpu" + std::to_string(gpus[i]) + "-gpu" + std::to_string(gpus[j]) +
                                                   " " + std::string(path_class_name(c)));
        else if (pairs.back() != '.')
          pairs += ", ...";
      }
    }
  fx.host_staged = !staged.empty();
  if (fx.host_staged) {
    // Where each staged GPU's SHM buffers live.
    std::map<int, std::vector<double>> where;
    int remote = 0;
    for (int g : staged) {
      const TaskBinding& t = task_of(g);
      MemBinding m = mem_of(t);
      if (!o.mem && t.mem_numa < 0 && !t.cores.empty()) {
        const auto local = topo_->gpu_local_cores(g);
        const bool has_local = std::any_of(t.cores.begin(), t.cores.end(), [&](int c) {
          return std::find(local.begin(), local.end(), c) != local.end();
        });
        if (has_local) m = MemBinding::gpu_local();
      }
      where[g] = memory_spread(g, m);
      if (crosses_socket(g, where[g])) ++remote;
    }
    for (const auto& [g, w] : where) {
      const double f = copy_factor(g, CopyDir::kD2H, w, remote);
      fx.staging_factor = std::min(fx.staging_factor, f);
      if (o.notes && f < 0.999)
        fx.notes.push_back("gpu" + std::to_string(g) + ": NCCL's host staging buffers on " + numa_text(w) +
                           ", GPU on numa " + std::to_string(topo_->gpu_numa(g)) + ": staged traffic x" + fixed(f, 3));
    }
    if (o.notes) fx.notes.push_back("host-staged GPU pairs (no P2P beyond PXB): " + pairs);
  }
  return fx;
}

}  // namespace gcsim
