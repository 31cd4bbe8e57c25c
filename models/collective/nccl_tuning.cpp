// Loader of configs/nccl/*.yaml into NcclTuning: strict keys (unknown or missing keys are
// errors with file:line:col), numbers checked, several errors collected before failing.
#include "models/collective/nccl_tuning.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>

#include "sim/core/diagnostics.hpp"
#include "sim/core/input_file.hpp"
#include "sim/core/yaml_check.hpp"

namespace gcsim {

namespace {

constexpr std::array<std::string_view, kNcclAlgos> kAlgoNames = {"Tree", "Ring", "CollNetDirect", "CollNetChain",
                                                                 "NVLS", "NVLSTree", "PAT"};
constexpr std::array<std::string_view, kNcclProtos> kProtoNames = {"LL", "LL128", "Simple"};
constexpr std::array<std::string_view, 12> kPathNames = {"LOC", "NVL", "NVB", "C2C", "PIX", "PXB",
                                                         "P2C", "PXN", "PHB", "SYS", "NET", "DIS"};
constexpr std::array<std::string_view, 3> kHwNames = {"NVLINK", "PCI", "NET"};

bool iequal(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  return true;
}

// Reads the tuning file node by node (its sections are fixed tables); positions and
// error collection come from the shared YAML checker.
class Reader : public YamlChecker {
 public:
  using YamlChecker::YamlChecker;

  /// The entries of a map, keys checked against `allowed`; `required` ones must be present.
  std::map<std::string, YAML::Node> map_of(const YAML::Node& n, const std::string& what,
                                           const std::vector<std::string>& allowed,
                                           const std::vector<std::string>& required) {
    std::map<std::string, YAML::Node> out;
    if (!n.IsMap()) {
      error(n, "expected a map for " + what);
      return out;
    }
    for (auto it = n.begin(); it != n.end(); ++it) {
      if (!it->first.IsScalar()) {
        error(it->first, "expected a scalar key in " + what);
        continue;
      }
      const std::string key = it->first.Scalar();
      if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
        error(it->first, "unknown key '" + key + "' in " + what);
        continue;
      }
      if (out.count(key)) {
        error(it->first, "repeated key '" + key + "' in " + what);
        continue;
      }
      out.emplace(key, it->second);
    }
    for (const auto& r : required)
      if (!out.count(r)) error(n, "missing key '" + r + "' in " + what);
    return out;
  }

  double number(const YAML::Node& n, const std::string& what) {
    if (!n.IsScalar()) {
      error(n, "expected a number for " + what);
      return 0;
    }
    const std::string& s = n.Scalar();
    double v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || p != s.data() + s.size()) {
      error(n, "expected a number for " + what + ", got '" + s + "'");
      return 0;
    }
    return v;
  }
  double non_negative(const YAML::Node& n, const std::string& what) {
    const double v = number(n, what);
    if (v < 0) error(n, what + " must not be negative");
    return v;
  }
  double positive(const YAML::Node& n, const std::string& what) {
    const double v = number(n, what);
    if (!(v > 0)) error(n, what + " must be positive");
    return v;
  }
  int integer(const YAML::Node& n, const std::string& what) {
    const double v = number(n, what);
    // range first: converting a double outside int's range (or NaN) is undefined
    if (!(v >= static_cast<double>(std::numeric_limits<int>::min()) &&
          v <= static_cast<double>(std::numeric_limits<int>::max())) ||
        v != std::trunc(v)) {
      error(n, "expected an integer for " + what);
      return 0;
    }
    return static_cast<int>(v);
  }
  bool boolean(const YAML::Node& n, const std::string& what) {
    if (n.IsScalar() && (n.Scalar() == "true" || n.Scalar() == "false")) return n.Scalar() == "true";
    error(n, "expected true or false for " + what);
    return false;
  }
  std::string text(const YAML::Node& n, const std::string& what) {
    if (!n.IsScalar()) {
      error(n, "expected a string for " + what);
      return {};
    }
    return n.Scalar();
  }
  std::vector<double> numbers(const YAML::Node& n, const std::string& what, size_t want = 0) {
    std::vector<double> out;
    if (!n.IsSequence()) {
      error(n, "expected a list of numbers for " + what);
      return out;
    }
    for (const auto& e : n) out.push_back(non_negative(e, what));
    if (want > 0 && out.size() != want)
      error(n, what + ": expected " + std::to_string(want) + " numbers, got " + std::to_string(out.size()));
    return out;
  }
  template <size_t N>
  std::array<double, N> triple(const YAML::Node& n, const std::string& what) {
    std::array<double, N> a{};
    auto v = numbers(n, what, N);
    for (size_t i = 0; i < N && i < v.size(); ++i) a[i] = v[i];
    return a;
  }
  NcclPath path_type(const YAML::Node& n, const std::string& what) {
    auto p = parse_nccl_path(text(n, what));
    if (!p) {
      error(n, "unknown path type '" + (n.IsScalar() ? n.Scalar() : std::string()) + "' for " + what);
      return NcclPath::kPxb;
    }
    return *p;
  }

  /// {Tree: {LL: x, ...}, ...}: cells not given stay -1 (not applicable).
  NcclLatencyTable latency_table(const YAML::Node& n, const std::string& what) {
    NcclLatencyTable t;
    for (auto& row : t) row.fill(-1);
    std::vector<std::string> algos(kAlgoNames.begin(), kAlgoNames.end());
    std::vector<std::string> protos(kProtoNames.begin(), kProtoNames.end());
    for (const auto& [algo, row] : map_of(n, what, algos, {})) {
      const int a = static_cast<int>(*parse_nccl_algo(algo));
      for (const auto& [proto, v] : map_of(row, what + "." + algo, protos, {})) {
        const int p = static_cast<int>(*parse_nccl_proto(proto));
        t[a][p] = non_negative(v, what + "." + algo + "." + proto);
      }
    }
    return t;
  }

  std::array<double, kNcclProtos> per_proto(const YAML::Node& n, const std::string& what) {
    std::array<double, kNcclProtos> a{};
    std::vector<std::string> protos(kProtoNames.begin(), kProtoNames.end());
    auto m = map_of(n, what, protos, protos);
    for (int p = 0; p < kNcclProtos; ++p) {
      auto it = m.find(std::string(kProtoNames[p]));
      if (it != m.end()) a[p] = positive(it->second, what + "." + std::string(kProtoNames[p]));
    }
    return a;
  }

  void load(const YAML::Node& root, NcclTuning& t) {
    const std::vector<std::string> top = {"schema_version", "base_latency_us", "hw_latency_us", "generations",
                                          "gpu_models", "default_gpu", "pcie_x16_bw_by_gen", "local_bw", "cpu",
                                          "net_transports", "search", "protocol", "enqueue", "p2p", "calibration"};
    auto m = map_of(root, "the NCCL tuning file", top, top);
    // An unknown key is reported and the rest still checked; a missing one stops here.
    if (!root.IsMap() || std::any_of(top.begin(), top.end(), [&](const std::string& k) { return !m.count(k); })) return;
    if (integer(m["schema_version"], "schema_version") != 1) error(m["schema_version"], "schema_version must be 1");

    t.base_latency = latency_table(m["base_latency_us"], "base_latency_us");
    {
      std::vector<std::string> hw(kHwNames.begin(), kHwNames.end());
      auto h = map_of(m["hw_latency_us"], "hw_latency_us", hw, hw);
      for (int i = 0; i < 3; ++i) {
        auto it = h.find(std::string(kHwNames[i]));
        if (it != h.end()) t.hw_latency[i] = latency_table(it->second, "hw_latency_us." + std::string(kHwNames[i]));
      }
    }

    // Generations.
    {
      const YAML::Node& g = m["generations"];
      if (!g.IsMap() || g.size() == 0) error(g, "expected a non-empty map for generations");
      const std::vector<std::string> keys = {"min_sm", "intra_speeds", "inter_speeds", "ll_max_bw_1node",
                                             "ring_ll128_per_channel", "tree_per_channel", "tree_ll128_per_channel",
                                             "nvls_tree_per_channel", "nvls_efficiency"};
      if (g.IsMap()) {
        for (auto it = g.begin(); it != g.end(); ++it) {
          NcclGeneration gen;
          gen.name = it->first.Scalar();
          const std::string w = "generations." + gen.name;
          auto e = map_of(it->second, w, keys, keys);
          if (e.size() != keys.size()) continue;
          gen.min_sm = integer(e["min_sm"], w + ".min_sm");
          gen.intra_speeds = numbers(e["intra_speeds"], w + ".intra_speeds");
          gen.inter_speeds = numbers(e["inter_speeds"], w + ".inter_speeds");
          for (const auto* sp : {&gen.intra_speeds, &gen.inter_speeds}) {
            if (sp->empty() || !std::is_sorted(sp->rbegin(), sp->rend()) ||
                std::adjacent_find(sp->begin(), sp->end()) != sp->end() || sp->back() <= 0)
              error(it->second, w + ": speeds must be positive and strictly decreasing");
          }
          gen.ll_max_bw_1node = positive(e["ll_max_bw_1node"], w + ".ll_max_bw_1node");
          gen.ring_ll128_per_channel = positive(e["ring_ll128_per_channel"], w + ".ring_ll128_per_channel");
          gen.tree_per_channel = triple<3>(e["tree_per_channel"], w + ".tree_per_channel");
          gen.tree_ll128_per_channel = triple<3>(e["tree_ll128_per_channel"], w + ".tree_ll128_per_channel");
          gen.nvls_tree_per_channel = triple<3>(e["nvls_tree_per_channel"], w + ".nvls_tree_per_channel");
          gen.nvls_efficiency = non_negative(e["nvls_efficiency"], w + ".nvls_efficiency");
          t.generations.push_back(std::move(gen));
        }
      }
      std::stable_sort(t.generations.begin(), t.generations.end(),
                       [](const NcclGeneration& a, const NcclGeneration& b) { return a.min_sm < b.min_sm; });
      if (!t.generations.empty() && t.generations.front().min_sm != 0)
        error(g, "generations: one generation must have min_sm 0 (the oldest row)");
    }

    // GPU products.
    auto gpu_entry = [&](const YAML::Node& n, const std::string& w, bool with_match) {
      NcclGpuModel gm;
      std::vector<std::string> keys = {"sm", "nvlink_link_bw", "pcie_gen", "pcie_p2p"};
      if (with_match) keys.insert(keys.begin(), "match");
      auto e = map_of(n, w, keys, keys);
      if (e.size() != keys.size()) return gm;
      if (with_match) {
        gm.match = text(e["match"], w + ".match");
        if (gm.match.empty()) error(e["match"], w + ".match must not be empty");
      }
      gm.sm = integer(e["sm"], w + ".sm");
      gm.nvlink_link_bw = positive(e["nvlink_link_bw"], w + ".nvlink_link_bw");
      gm.pcie_gen = integer(e["pcie_gen"], w + ".pcie_gen");
      if (gm.pcie_gen < 1 || gm.pcie_gen > 6) error(e["pcie_gen"], w + ".pcie_gen must be 1..6");
      gm.pcie_p2p = boolean(e["pcie_p2p"], w + ".pcie_p2p");
      return gm;
    };
    if (!m["gpu_models"].IsSequence()) {
      error(m["gpu_models"], "expected a list for gpu_models");
    } else {
      for (const auto& e : m["gpu_models"]) t.gpu_models.push_back(gpu_entry(e, "gpu_models entry", true));
    }
    t.default_gpu = gpu_entry(m["default_gpu"], "default_gpu", false);

    {
      auto v = numbers(m["pcie_x16_bw_by_gen"], "pcie_x16_bw_by_gen", 6);
      for (size_t i = 0; i < 6 && i < v.size(); ++i) t.pcie_x16_bw_by_gen[i] = v[i];
    }
    t.local_bw = positive(m["local_bw"], "local_bw");

    // CPU vendors.
    {
      auto c = map_of(m["cpu"], "cpu", {}, {"default_vendor"});
      const std::vector<std::string> keys = {"sys_bw", "net_overhead_us", "ll_max_bw_multinode", "p2p_phb_overhead",
                                             "p2p_sys_max_gpus"};
      for (auto& [name, node] : c) {
        if (name == "default_vendor") {
          t.default_cpu_vendor = text(node, "cpu.default_vendor");
          continue;
        }
        const std::string w = "cpu." + name;
        auto e = map_of(node, w, keys, keys);
        if (e.size() != keys.size()) continue;
        NcclCpuVendor v;
        v.name = name;
        v.sys_bw = positive(e["sys_bw"], w + ".sys_bw");
        v.net_overhead_us = non_negative(e["net_overhead_us"], w + ".net_overhead_us");
        v.ll_max_bw_multinode = triple<2>(e["ll_max_bw_multinode"], w + ".ll_max_bw_multinode");
        v.p2p_phb_overhead = positive(e["p2p_phb_overhead"], w + ".p2p_phb_overhead");
        v.p2p_sys_max_gpus = integer(e["p2p_sys_max_gpus"], w + ".p2p_sys_max_gpus");
        t.cpus.push_back(std::move(v));
      }
      if (!t.cpu(t.default_cpu_vendor)) error(m["cpu"], "cpu.default_vendor '" + t.default_cpu_vendor + "' is not described");
    }

    // Network transports.
    for (auto& [name, node] : map_of(m["net_transports"], "net_transports", {}, {"ib"})) {
      const std::string w = "net_transports." + name;
      auto e = map_of(node, w, {"latency_us", "flush_us", "ll128"}, {"latency_us", "flush_us", "ll128"});
      if (e.size() != 3) continue;
      t.net_transports.push_back({name, non_negative(e["latency_us"], w + ".latency_us"),
                                  non_negative(e["flush_us"], w + ".flush_us"), boolean(e["ll128"], w + ".ll128")});
    }

    {
      const std::vector<std::string> keys = {"max_search_channels", "max_channels", "speed_drop_ratio", "dup_min_speed", "dup_sm_above",
                                             "dup_newer_min_speed", "dup_newer_max_channels", "tree_intra_max_ratio",
                                             "p2p_max_path", "gdr_max_path", "nvls_min_local_gpus", "nvls_max_arity",
                                             "collnet_max_local_gpus"};
      auto s = map_of(m["search"], "search", keys, keys);
      if (s.size() == keys.size()) {
        t.max_search_channels = integer(s["max_search_channels"], "search.max_search_channels");
        t.max_channels = integer(s["max_channels"], "search.max_channels");
        if (t.max_search_channels < 1 || t.max_channels < t.max_search_channels)
          error(s["max_channels"], "search: need 1 <= max_search_channels <= max_channels");
        t.speed_drop_ratio = positive(s["speed_drop_ratio"], "search.speed_drop_ratio");
        t.dup_min_speed = positive(s["dup_min_speed"], "search.dup_min_speed");
        t.dup_sm_above = integer(s["dup_sm_above"], "search.dup_sm_above");
        t.dup_newer_min_speed = positive(s["dup_newer_min_speed"], "search.dup_newer_min_speed");
        t.dup_newer_max_channels = integer(s["dup_newer_max_channels"], "search.dup_newer_max_channels");
        t.tree_intra_max_ratio = positive(s["tree_intra_max_ratio"], "search.tree_intra_max_ratio");
        t.p2p_max_path = path_type(s["p2p_max_path"], "search.p2p_max_path");
        t.gdr_max_path = path_type(s["gdr_max_path"], "search.gdr_max_path");
        t.nvls_min_local_gpus = integer(s["nvls_min_local_gpus"], "search.nvls_min_local_gpus");
        t.nvls_max_arity = integer(s["nvls_max_arity"], "search.nvls_max_arity");
        t.collnet_max_local_gpus = integer(s["collnet_max_local_gpus"], "search.collnet_max_local_gpus");
      }
    }
    {
      const std::vector<std::string> keys = {
          "ring_ll_factor", "ring_ll128_factor", "tree_factor", "tree_ll_divisor", "tree_ll128_factor_1node",
          "tree_ll128_factor_multinode", "pat_factor", "nvls_min_channels", "collnet_hopper_factor",
          "collnet_inter_factor", "plateau_factor", "plateau_factor_pre_ampere", "plateau_min_bytes", "ll128_sms",
          "tree_correction"};
      auto p = map_of(m["protocol"], "protocol", keys, keys);
      if (p.size() == keys.size()) {
        t.ring_ll_factor = positive(p["ring_ll_factor"], "protocol.ring_ll_factor");
        t.ring_ll128_factor = positive(p["ring_ll128_factor"], "protocol.ring_ll128_factor");
        t.tree_factor = positive(p["tree_factor"], "protocol.tree_factor");
        t.tree_ll_divisor = positive(p["tree_ll_divisor"], "protocol.tree_ll_divisor");
        t.tree_ll128_factor_1node = positive(p["tree_ll128_factor_1node"], "protocol.tree_ll128_factor_1node");
        t.tree_ll128_factor_multinode =
            positive(p["tree_ll128_factor_multinode"], "protocol.tree_ll128_factor_multinode");
        t.pat_factor = positive(p["pat_factor"], "protocol.pat_factor");
        t.nvls_min_channels = integer(p["nvls_min_channels"], "protocol.nvls_min_channels");
        t.collnet_hopper_factor = positive(p["collnet_hopper_factor"], "protocol.collnet_hopper_factor");
        t.collnet_inter_factor = positive(p["collnet_inter_factor"], "protocol.collnet_inter_factor");
        t.plateau_factor = positive(p["plateau_factor"], "protocol.plateau_factor");
        t.plateau_factor_pre_ampere = positive(p["plateau_factor_pre_ampere"], "protocol.plateau_factor_pre_ampere");
        t.plateau_min_bytes = non_negative(p["plateau_min_bytes"], "protocol.plateau_min_bytes");
        if (const YAML::Node l = p["ll128_sms"]; l.IsSequence()) {
          for (const auto& e : l) {
            const int sm = integer(e, "protocol.ll128_sms");
            if (sm < 0) error(e, "protocol.ll128_sms must not be negative");
            t.ll128_sms.push_back(sm);
          }
        } else {
          error(l, "expected a list of numbers for protocol.ll128_sms");
        }
        std::vector<std::string> protos(kProtoNames.begin(), kProtoNames.end());
        auto tc = map_of(p["tree_correction"], "protocol.tree_correction", protos, protos);
        for (int i = 0; i < kNcclProtos; ++i) {
          auto it = tc.find(std::string(kProtoNames[i]));
          if (it != tc.end())
            t.tree_correction[i] = numbers(it->second, "protocol.tree_correction." + std::string(kProtoNames[i]));
        }
      }
    }
    {
      const std::vector<std::string> keys = {"threads", "simple_threads_low_bw", "simple_low_bw_limit",
                                             "thread_threshold"};
      auto e = map_of(m["enqueue"], "enqueue", keys, keys);
      if (e.size() == keys.size()) {
        auto th = per_proto(e["threads"], "enqueue.threads");
        for (int i = 0; i < kNcclProtos; ++i) t.threads[i] = static_cast<int>(th[i]);
        t.simple_threads_low_bw = integer(e["simple_threads_low_bw"], "enqueue.simple_threads_low_bw");
        t.simple_low_bw_limit = non_negative(e["simple_low_bw_limit"], "enqueue.simple_low_bw_limit");
        t.thread_threshold = per_proto(e["thread_threshold"], "enqueue.thread_threshold");
      }
    }
    {
      auto e = map_of(m["p2p"], "p2p", {"ll_threshold", "per_channel_net_bw"}, {"ll_threshold", "per_channel_net_bw"});
      if (e.size() == 2) {
        t.p2p_ll_threshold = non_negative(e["ll_threshold"], "p2p.ll_threshold");
        t.p2p_per_channel_net_bw = positive(e["per_channel_net_bw"], "p2p.per_channel_net_bw");
      }
    }
    {
      const std::vector<std::string> keys = {"launch_process_per_gpu_us", "launch_per_extra_gpu_us",
                                             "shm_duplex_efficiency"};
      std::vector<std::string> allowed = keys;
      allowed.push_back("links");
      auto e = map_of(m["calibration"], "calibration", allowed, keys);
      if (e.count("links")) {
        const std::vector<std::string> classes = {"nvlink", "pcie", "shm", "net"};
        for (auto& [name, node] : map_of(e["links"], "calibration.links", classes, {})) {
          const std::string what = "calibration.links." + name;
          const std::vector<std::string> fields = {"latency_us", "bw_efficiency"};
          auto f = map_of(node, what, fields, fields);
          if (f.size() != fields.size()) continue;
          NcclLinkCalibration& lc = t.link_calibration[static_cast<size_t>(*parse_nccl_link_class(name))];
          lc.latency_us = number(f["latency_us"], what + ".latency_us");
          lc.bw_efficiency = positive(f["bw_efficiency"], what + ".bw_efficiency");
        }
        e.erase("links");
      }
      if (e.size() == keys.size()) {
        t.launch_process_per_gpu_us = non_negative(e["launch_process_per_gpu_us"], "calibration.launch_process_per_gpu_us");
        t.launch_per_extra_gpu_us = non_negative(e["launch_per_extra_gpu_us"], "calibration.launch_per_extra_gpu_us");
        t.shm_duplex_efficiency = positive(e["shm_duplex_efficiency"], "calibration.shm_duplex_efficiency");
        if (t.shm_duplex_efficiency > 1) error(e["shm_duplex_efficiency"], "calibration.shm_duplex_efficiency must be <= 1");
      }
    }
  }
};

}  // namespace

std::string_view nccl_algo_name(NcclAlgo a) { return kAlgoNames[static_cast<size_t>(a)]; }
std::string_view nccl_proto_name(NcclProto p) { return kProtoNames[static_cast<size_t>(p)]; }
std::string_view nccl_path_name(NcclPath p) { return kPathNames[static_cast<size_t>(p)]; }

std::string_view nccl_link_class_name(NcclLinkClass c) {
  constexpr std::array<std::string_view, kNcclLinkClasses> names = {"nvlink", "pcie", "shm", "net"};
  return names[static_cast<size_t>(c)];
}

std::optional<NcclLinkClass> parse_nccl_link_class(std::string_view s) {
  for (int i = 0; i < kNcclLinkClasses; ++i)
    if (iequal(s, nccl_link_class_name(static_cast<NcclLinkClass>(i)))) return static_cast<NcclLinkClass>(i);
  return std::nullopt;
}

std::optional<NcclAlgo> parse_nccl_algo(std::string_view s) {
  for (size_t i = 0; i < kAlgoNames.size(); ++i)
    if (iequal(s, kAlgoNames[i])) return static_cast<NcclAlgo>(i);
  return std::nullopt;
}
std::optional<NcclProto> parse_nccl_proto(std::string_view s) {
  for (size_t i = 0; i < kProtoNames.size(); ++i)
    if (iequal(s, kProtoNames[i])) return static_cast<NcclProto>(i);
  return std::nullopt;
}
std::optional<NcclPath> parse_nccl_path(std::string_view s) {
  for (size_t i = 0; i < kPathNames.size(); ++i)
    if (iequal(s, kPathNames[i])) return static_cast<NcclPath>(i);
  return std::nullopt;
}

int NcclTuning::generation_index(int sm) const {
  int idx = 0;
  for (size_t i = 0; i < generations.size(); ++i)
    if (generations[i].min_sm <= sm) idx = static_cast<int>(i);
  return idx;
}
const NcclGeneration& NcclTuning::generation(int sm) const { return generations.at(static_cast<size_t>(generation_index(sm))); }

const NcclGpuModel& NcclTuning::gpu_model(const std::string& model, bool* matched) const {
  const std::string m = to_lower(model);
  for (const auto& g : gpu_models) {
    if (!g.match.empty() && m.find(to_lower(g.match)) != std::string::npos) {
      if (matched) *matched = true;
      return g;
    }
  }
  if (matched) *matched = false;
  return default_gpu;
}

const NcclCpuVendor* NcclTuning::cpu(const std::string& vendor) const {
  for (const auto& c : cpus)
    if (iequal(c.name, vendor)) return &c;
  return nullptr;
}

const NcclNetTransport* NcclTuning::net_transport(const std::string& name) const {
  for (const auto& n : net_transports)
    if (iequal(n.name, name)) return &n;
  return nullptr;
}

double NcclTuning::pcie_bw(int gen, int width) const {
  const int g = std::clamp(gen, 1, 6);
  const int w = width <= 0 ? 16 : width;
  return pcie_x16_bw_by_gen[static_cast<size_t>(g - 1)] * w / 16.0;
}

NcclTuning parse_nccl_tuning(const std::string& text, const std::string& path) {
  NcclTuning t;
  t.source = path;
  load_yaml_checked(text, path, [&](const YAML::Node& root, Diagnostics& diags) { Reader(path, diags).load(root, t); });
  return t;
}

NcclTuning load_nccl_tuning(const std::string& path) { return parse_nccl_tuning(read_input_file(path), path); }

std::string default_nccl_tuning_path(const std::string& source_dir) {
  return source_dir + "/configs/nccl/default.yaml";
}

}  // namespace gcsim
