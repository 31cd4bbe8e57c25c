// hwloc importer: libhwloc loads the XML (v1/v2) or hands us the live topology; this file
// walks it into a NodeTemplate (see import_hwloc.hpp for the mapping rules).
#include "sim/cluster/import_hwloc.hpp"

#include <fcntl.h>
#include <hwloc.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <type_traits>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string_view>
#include <tuple>

#include "sim/cluster/import_nccl_xml.hpp"
#include "sim/core/input_file.hpp"

// Under a sanitizer, a crash would run the death callback (libFuzzer's writes a crash
// file); the probe child below clears it. Null in builds without a sanitizer runtime.
extern "C" void __sanitizer_set_death_callback(void (*)(void)) __attribute__((weak));

namespace gcsim {

namespace {

// hwloc's XML loader stores attribute numbers in enum fields unchecked (an osdev_type
// of 16 loads as is); reading such a field as the enum is undefined, so read its bits.
template <class E>
int raw_enum(const E& e) {
  std::underlying_type_t<E> v;
  std::memcpy(&v, &e, sizeof v);
  return static_cast<int>(v);
}

using PciAttr = hwloc_obj_attr_u::hwloc_pcidev_attr_s;

constexpr unsigned kNvidia = 0x10de;
constexpr unsigned kAmd = 0x1002;

// Models for GPUs whose XML carries neither an OS device nor a PCIDevice name.
struct KnownGpu {
  unsigned vendor, device;
  const char* model;
};
constexpr KnownGpu kKnownGpus[] = {
    {kNvidia, 0x06d2, "Tesla M2070"},          {kNvidia, 0x1094, "Tesla M2075"},
    {kNvidia, 0x11ba, "Quadro K5000"},         {kNvidia, 0x15f8, "Tesla P100-PCIE-16GB"},
    {kNvidia, 0x15f9, "Tesla P100-SXM2-16GB"}, {kNvidia, 0x1db1, "Tesla V100-SXM2-16GB"},
    {kNvidia, 0x1db8, "Tesla V100-SXM3-32GB"}, {kNvidia, 0x1eb8, "Tesla T4"},
    {kNvidia, 0x20b0, "NVIDIA A100-SXM4-40GB"}, {kNvidia, 0x20b2, "NVIDIA A100-SXM4-80GB"},
    {kNvidia, 0x20b5, "NVIDIA A100 80GB PCIe"}, {kNvidia, 0x2330, "NVIDIA H100 80GB HBM3"},
    {kNvidia, 0x2331, "NVIDIA H100 PCIe"},      {kAmd, 0x66a1, "Vega 20"},
    {kAmd, 0x738c, "AMD Instinct MI100"},       {kAmd, 0x7408, "AMD Instinct MI250X"},
    {kAmd, 0x740c, "AMD Instinct MI250X/MI250"}, {kAmd, 0x74a0, "AMD Instinct MI300A"},
    {kAmd, 0x74a1, "AMD Instinct MI300X"},
};

// Display chips on server boards that share a GPU vendor id (not compute devices).
constexpr std::pair<unsigned, unsigned> kServerVga[] = {{kAmd, 0x515e} /* Radeon ES1000 */};

std::string hex4(unsigned v) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04x", v & 0xffffu);
  return buf;
}

std::string bus_id(const PciAttr& p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04x:%02x:%02x.%01x", static_cast<unsigned>(p.domain), p.bus, p.dev, p.func);
  return buf;
}

std::string pci_id(const PciAttr& p) { return hex4(p.vendor_id) + ":" + hex4(p.device_id); }

bool bus_less(const PciAttr& a, const PciAttr& b) {
  return std::tie(a.domain, a.bus, a.dev, a.func) < std::tie(b.domain, b.bus, b.dev, b.func);
}

std::string_view subtype_of(hwloc_obj_t o) { return o->subtype ? std::string_view(o->subtype) : std::string_view(); }

std::string info(hwloc_obj_t o, const char* name) {
  const char* v = hwloc_obj_get_info_by_name(o, name);
  return v ? std::string(v) : std::string();
}

bool is_nvswitch(hwloc_obj_t o) {
  const auto& p = o->attr->pcidev;
  return subtype_of(o) == "NVSwitch" || (p.vendor_id == kNvidia && p.class_id == 0x0680);
}

bool is_gpu(hwloc_obj_t o) {
  const auto& p = o->attr->pcidev;
  if (p.vendor_id != kNvidia && p.vendor_id != kAmd) return false;
  if (p.class_id != 0x0300 && p.class_id != 0x0302 && p.class_id != 0x0380 && p.class_id != 0x1200) return false;
  if (is_nvswitch(o)) return false;
  for (const auto& [v, d] : kServerVga)
    if (p.vendor_id == v && p.device_id == d) return false;
  return true;
}

bool is_nic(hwloc_obj_t o) { return o->attr->pcidev.class_id == 0x0200 || o->attr->pcidev.class_id == 0x0207; }

std::vector<hwloc_obj_t> os_devices(hwloc_obj_t pci) {
  std::vector<hwloc_obj_t> out;
  for (hwloc_obj_t c = pci->io_first_child; c; c = c->next_sibling)
    if (c->type == HWLOC_OBJ_OS_DEVICE) out.push_back(c);
  return out;
}

bool name_starts(hwloc_obj_t o, std::string_view prefix) {
  return o->name && std::string_view(o->name).substr(0, prefix.size()) == prefix;
}

// The OS device a vendor library made (NVML, CUDA, RSMI), as opposed to OpenCL or DRM.
bool is_vendor_gpu_osdev(hwloc_obj_t o) {
  const auto st = subtype_of(o);
  return st == "NVML" || st == "CUDA" || st == "RSMI" || name_starts(o, "nvml") || name_starts(o, "cuda") ||
         name_starts(o, "rsmi");
}

bool is_opencl_osdev(hwloc_obj_t o) { return subtype_of(o) == "OpenCL" || name_starts(o, "opencl"); }

// PCIe generation and lane count from hwloc's link speed (GB/s, after line coding).
// Several pairs give the same speed (Gen3 x16 = Gen4 x8); x16 is preferred, then the
// widest link.
std::pair<int, int> pcie_gen_width(double gbps) {
  static constexpr double kLane[] = {0.25, 0.5, 8.0 * 128 / 130 / 8, 16.0 * 128 / 130 / 8, 32.0 * 128 / 130 / 8,
                                     64.0 * 242 / 256 / 8};
  static constexpr int kWidths[] = {16, 32, 8, 4, 2, 1};
  std::pair<int, int> best{4, 16};
  double best_err = 1e300;
  for (int w : kWidths) {
    for (int g = 0; g < 6; ++g) {
      const double err = std::fabs(kLane[g] * w - gbps) / gbps;
      if (err < 0.01) return {g + 1, w};
      if (err < best_err) {
        best_err = err;
        best = {g + 1, w};
      }
    }
  }
  return best;
}

std::string stem_of(const std::string& path) {
  std::string s = path.substr(path.find_last_of('/') == std::string::npos ? 0 : path.find_last_of('/') + 1);
  for (const char* ext : {".gz", ".xml", ".output"}) {
    const std::string e(ext);
    if (s.size() > e.size() && s.compare(s.size() - e.size(), e.size(), e) == 0) s.resize(s.size() - e.size());
  }
  return s;
}

std::string join_ints(const std::vector<unsigned>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s;
}

class Importer {
 public:
  Importer(hwloc_topology_t topo, const std::string& source, Diagnostics& w)
      : topo_(topo), loc_{source, 0, 0}, w_(w) {}

  HwlocImport run() {
    out_.node.name = stem_of(loc_.file);
    cpu_side();
    devices();
    nvlink();
    return std::move(out_);
  }

 private:
  struct Domain {
    hwloc_const_cpuset_t cpuset = nullptr;  // nullptr = the whole package
    std::vector<hwloc_obj_t> cores;
  };

  void warn(const std::string& msg) { w_.warning(loc_, msg); }
  // Findings of the same kind about several objects become one warning listing them.
  void note(const std::string& what, const std::string& who) {
    if (!notes_.count(what)) note_order_.push_back(what);
    notes_[what].push_back(who);
  }
  void flush_notes() {
    for (const auto& what : note_order_) {
      std::string list;
      for (const auto& b : notes_[what]) list += (list.empty() ? "" : ", ") + b;
      warn(what + " (" + list + ")");
    }
    notes_.clear();
    note_order_.clear();
  }

  // ---- CPU side ----------------------------------------------------------------------
  void cpu_side() {
    NodeTemplate& t = out_.node;
    core_type_ = HWLOC_OBJ_CORE;
    if (hwloc_get_nbobjs_by_type(topo_, HWLOC_OBJ_CORE) == 0) {
      core_type_ = HWLOC_OBJ_PU;
      warn("the topology has no Core objects; every PU is taken as a core");
    }
    const int ncores = hwloc_get_nbobjs_by_type(topo_, core_type_);
    core_abstract_.assign(static_cast<size_t>(std::max(ncores, 0)), -1);

    // Sockets: packages that hold cores.
    std::vector<hwloc_obj_t> packages;
    std::vector<unsigned> empty_packages;
    const int npkg = hwloc_get_nbobjs_by_type(topo_, HWLOC_OBJ_PACKAGE);
    for (int i = 0; i < npkg; ++i) {
      hwloc_obj_t p = hwloc_get_obj_by_type(topo_, HWLOC_OBJ_PACKAGE, static_cast<unsigned>(i));
      if (hwloc_get_nbobjs_inside_cpuset_by_type(topo_, p->cpuset, core_type_) > 0) packages.push_back(p);
      else empty_packages.push_back(p->os_index);
    }
    if (!empty_packages.empty())
      warn("package(s) P#" + join_ints(empty_packages) + " have no cores (restricted topology); ignored");
    if (packages.empty()) {
      if (npkg == 0) warn("the topology has no Package objects; the machine is taken as one socket");
      packages.push_back(hwloc_get_root_obj(topo_));
    }

    // NUMA domains: distinct cpusets of the NUMA nodes that have CPUs.
    std::vector<hwloc_obj_t> numa_domains;
    std::vector<unsigned> cpuless;
    int64_t memory = 0;
    const int nnuma = hwloc_get_nbobjs_by_type(topo_, HWLOC_OBJ_NUMANODE);
    for (int i = 0; i < nnuma; ++i) {
      hwloc_obj_t n = hwloc_get_obj_by_type(topo_, HWLOC_OBJ_NUMANODE, static_cast<unsigned>(i));
      if (hwloc_bitmap_iszero(n->cpuset) || subtype_of(n) == "GPUMemory") {
        cpuless.push_back(n->os_index);
        continue;
      }
      memory += static_cast<int64_t>(n->attr->numanode.local_memory);
      auto same = std::find_if(numa_domains.begin(), numa_domains.end(),
                               [&](hwloc_obj_t d) { return hwloc_bitmap_isequal(d->cpuset, n->cpuset); });
      if (same != numa_domains.end()) {
        warn("NUMA node P#" + std::to_string(n->os_index) + (n->subtype ? " (" + std::string(n->subtype) + ")" : "") +
             " has the same CPUs as P#" + std::to_string((*same)->os_index) +
             " (a second memory tier); counted in that domain");
        continue;
      }
      numa_domains.push_back(n);
    }
    if (!cpuless.empty())
      warn("CPU-less NUMA node(s) P#" + join_ints(cpuless) +
           " (GPU or CXL memory) are not NUMA domains and not counted in memory_mb");
    t.memory_mb = memory / (int64_t{1} << 20);
    if (t.memory_mb == 0) warn("the topology gives no memory sizes; memory_mb is 0");

    // Each package's domains.
    std::vector<std::vector<Domain>> pkg_domains;
    for (hwloc_obj_t p : packages) {
      std::vector<hwloc_obj_t> cores;
      for (hwloc_obj_t c = nullptr; (c = hwloc_get_next_obj_inside_cpuset_by_type(topo_, p->cpuset, core_type_, c));)
        cores.push_back(c);
      std::vector<Domain> doms;
      std::string why;
      for (hwloc_obj_t d : numa_domains) {
        if (!hwloc_bitmap_intersects(d->cpuset, p->cpuset)) continue;
        if (!hwloc_bitmap_isincluded(d->cpuset, p->cpuset)) {
          why = "NUMA node P#" + std::to_string(d->os_index) + " spans several packages";
          break;
        }
        Domain dom{d->cpuset, {}};
        for (hwloc_obj_t c : cores)
          if (hwloc_bitmap_isincluded(c->cpuset, d->cpuset)) dom.cores.push_back(c);
        if (!dom.cores.empty()) doms.push_back(std::move(dom));
      }
      size_t covered = 0;
      for (const auto& d : doms) covered += d.cores.size();
      if (why.empty() && covered != cores.size())
        why = "NUMA nodes cover " + std::to_string(covered) + " of its " + std::to_string(cores.size()) +
              " cores";
      if (why.empty() && doms.empty()) why = "it has no NUMA node";
      if (!why.empty()) {
        if (!numa_domains.empty())
          note("packages whose NUMA nodes do not split their cores are one NUMA domain each",
               "P#" + std::to_string(p->os_index) + ": " + why);
        doms.assign(1, Domain{nullptr, cores});
      }
      std::sort(doms.begin(), doms.end(), [](const Domain& a, const Domain& b) {
        return a.cores.front()->logical_index < b.cores.front()->logical_index;
      });
      pkg_domains.push_back(std::move(doms));
    }
    flush_notes();
    bool equal_counts = true;
    for (const auto& d : pkg_domains) equal_counts = equal_counts && d.size() == pkg_domains.front().size();
    if (!equal_counts) {
      std::string counts;
      for (const auto& d : pkg_domains) counts += (counts.empty() ? "" : "/") + std::to_string(d.size());
      warn("packages have different NUMA domain counts (" + counts + "); each package is modelled as one domain");
      for (size_t i = 0; i < packages.size(); ++i) {
        std::vector<hwloc_obj_t> cores;
        for (const auto& d : pkg_domains[i]) cores.insert(cores.end(), d.cores.begin(), d.cores.end());
        std::sort(cores.begin(), cores.end(),
                  [](hwloc_obj_t a, hwloc_obj_t b) { return a->logical_index < b->logical_index; });
        pkg_domains[i].assign(1, Domain{nullptr, cores});
      }
    }

    // Uniform layout: the smallest domain and the fewest PUs per core.
    size_t cpn = SIZE_MAX, cpn_max = 0, total = 0;
    for (const auto& pd : pkg_domains)
      for (const auto& d : pd) {
        cpn = std::min(cpn, d.cores.size());
        cpn_max = std::max(cpn_max, d.cores.size());
        total += d.cores.size();
      }
    if (cpn == SIZE_MAX || cpn == 0) throw InputError(loc_, "the topology has no cores");
    if (cpn_max != cpn)
      warn("NUMA domains have " + std::to_string(cpn) + " to " + std::to_string(cpn_max) + " cores; using " +
           std::to_string(cpn) + " per domain drops " + std::to_string(total - cpn * numa_count(pkg_domains)) +
           " cores");
    t.boards = 1;
    t.sockets = static_cast<int>(packages.size());
    t.numa_per_socket = static_cast<int>(pkg_domains.front().size());
    t.cores_per_numa = static_cast<int>(cpn);

    int id = 0;
    std::vector<hwloc_obj_t> kept;
    for (const auto& pd : pkg_domains)
      for (const auto& d : pd)
        for (size_t k = 0; k < cpn; ++k) {
          core_abstract_.at(d.cores[k]->logical_index) = id++;
          kept.push_back(d.cores[k]);
        }
    int tpc = INT32_MAX, tpc_max = 0;
    for (hwloc_obj_t c : kept) {
      const int n = core_type_ == HWLOC_OBJ_PU ? 1 : hwloc_get_nbobjs_inside_cpuset_by_type(topo_, c->cpuset, HWLOC_OBJ_PU);
      tpc = std::min(tpc, n);
      tpc_max = std::max(tpc_max, n);
    }
    if (tpc < 1) throw InputError(loc_, "a core of the topology has no PU");
    if (tpc_max != tpc)
      warn("cores have " + std::to_string(tpc) + " to " + std::to_string(tpc_max) + " PUs; using " +
           std::to_string(tpc) + " threads per core");
    t.threads_per_core = tpc;
    for (hwloc_obj_t c : kept) {
      if (core_type_ == HWLOC_OBJ_PU) {
        t.cpu_os_ids.push_back(static_cast<int>(c->os_index));
        continue;
      }
      int n = 0;
      for (hwloc_obj_t pu = nullptr;
           n < tpc && (pu = hwloc_get_next_obj_inside_cpuset_by_type(topo_, c->cpuset, HWLOC_OBJ_PU, pu)); ++n)
        t.cpu_os_ids.push_back(static_cast<int>(pu->os_index));
    }
  }

  static size_t numa_count(const std::vector<std::vector<Domain>>& pd) {
    size_t n = 0;
    for (const auto& d : pd) n += d.size();
    return n;
  }

  // Abstract ids of the kept cores that intersect `set`, ascending.
  std::vector<int> local_cores(hwloc_const_cpuset_t set) const {
    std::vector<int> out;
    if (!set || hwloc_bitmap_iszero(set)) return out;
    for (hwloc_obj_t c = nullptr; (c = hwloc_get_next_obj_by_type(topo_, core_type_, c));) {
      const int a = core_abstract_.at(c->logical_index);
      if (a >= 0 && hwloc_bitmap_intersects(c->cpuset, set)) out.push_back(a);
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  // NUMA domain of an I/O object (and its local cores), warning when it has none.
  // An empty `what` (bridges) stays silent: the devices below them warn.
  int io_numa(hwloc_obj_t o, const std::string& what, std::vector<int>* cores_out) {
    hwloc_obj_t anc = hwloc_get_non_io_ancestor_obj(topo_, o);
    std::vector<int> cores = local_cores(anc ? anc->cpuset : nullptr);
    int numa = 0;
    if (cores.empty()) {
      if (!what.empty())
        warn(what + " has no local CPU (its locality is outside the CPUs this topology has); NUMA domain 0 assumed");
    } else {
      numa = out_.node.numa_of_core(cores.front());
      const int last = out_.node.numa_of_core(cores.back());
      if (last != numa && !what.empty())
        note("devices local to several NUMA domains are recorded in the first",
             what + ": " + std::to_string(numa) + "-" + std::to_string(last));
    }
    if (cores_out) *cores_out = std::move(cores);
    return numa;
  }

  // ---- PCI devices -------------------------------------------------------------------
  enum class Role { kHost, kRootPort, kUpstream, kDownstream };

  static bool is_pci_bridge(hwloc_obj_t o) {
    return o && o->type == HWLOC_OBJ_BRIDGE && raw_enum(o->attr->bridge.upstream_type) == HWLOC_OBJ_BRIDGE_PCI;
  }

  Role role(hwloc_obj_t b) {
    if (!is_pci_bridge(b)) return Role::kHost;
    auto it = roles_.find(b);
    if (it != roles_.end()) return it->second;
    Role r = Role::kRootPort;
    if (is_pci_bridge(b->parent)) {
      const Role up = role(b->parent);
      r = up == Role::kUpstream ? Role::kDownstream : Role::kUpstream;
    }
    roles_[b] = r;
    return r;
  }

  // The bridge that stands for the switch `b` belongs to (a downstream port -> its switch).
  hwloc_obj_t owner(hwloc_obj_t b) { return role(b) == Role::kDownstream ? b->parent : b; }

  int host_bridge_id(hwloc_obj_t b) {
    while (b && is_pci_bridge(b)) b = b->parent;
    if (!b || b->type != HWLOC_OBJ_BRIDGE) return -1;
    auto it = host_bridges_.find(b);
    if (it != host_bridges_.end()) return it->second;
    const int id = static_cast<int>(host_bridges_.size());
    host_bridges_[b] = id;
    return id;
  }

  // PcieSwitchSpec index for the switch or root port above `o`, creating it (and those
  // above it) on first use; -1 when `o` sits right below a host bridge or a CPU object.
  int switch_above(hwloc_obj_t o) {
    if (!is_pci_bridge(o->parent)) return -1;
    hwloc_obj_t b = owner(o->parent);
    auto it = switch_index_.find(b);
    if (it != switch_index_.end()) return it->second;
    const int parent = switch_above(b);
    PcieSwitchSpec s;
    const auto& up = b->attr->bridge.upstream.pci;
    const bool rp = role(b) == Role::kRootPort;
    s.name = (rp ? "rp:" : "sw:") + bus_id(up);
    s.numa = io_numa(b, "", nullptr);
    if (up.linkspeed > 0) {
      std::tie(s.gen, s.width) = pcie_gen_width(up.linkspeed);
    } else {
      ++unknown_speed_;
    }
    s.parent = parent;
    s.host_bridge = host_bridge_id(b);
    s.levels = 1;
    const int idx = static_cast<int>(out_.node.pcie_switches.size());
    out_.node.pcie_switches.push_back(std::move(s));
    switch_index_[b] = idx;
    return idx;
  }

  void devices() {
    // Bridges get host-bridge ids in hwloc order, whatever order devices are met in.
    for (hwloc_obj_t b = nullptr; (b = hwloc_get_next_bridge(topo_, b));)
      if (raw_enum(b->attr->bridge.upstream_type) == HWLOC_OBJ_BRIDGE_HOST) host_bridge_id(b);

    std::vector<hwloc_obj_t> gpus, nics;
    for (hwloc_obj_t p = nullptr; (p = hwloc_get_next_pcidev(topo_, p));) {
      if (is_nvswitch(p)) nvswitches_.push_back(p);
      else if (is_gpu(p)) gpus.push_back(p);
      else if (is_nic(p)) nics.push_back(p);
    }
    auto by_bus = [](hwloc_obj_t a, hwloc_obj_t b) { return bus_less(a->attr->pcidev, b->attr->pcidev); };
    std::sort(gpus.begin(), gpus.end(), by_bus);
    std::sort(nics.begin(), nics.end(), by_bus);

    // Models the vendor libraries reported, per PCI id, for GPUs that lack OS devices.
    std::map<std::string, std::string> model_by_id;
    std::map<std::string, int64_t> memory_by_id;
    for (hwloc_obj_t p : gpus) {
      std::string m = osdev_model(p);
      if (!m.empty()) model_by_id.emplace(pci_id(p->attr->pcidev), m);
      if (const int64_t b = gpu_memory(p, ""); b > 0) memory_by_id.emplace(pci_id(p->attr->pcidev), b);
    }

    NodeTemplate& t = out_.node;
    for (hwloc_obj_t p : gpus) {
      const auto& a = p->attr->pcidev;
      GpuSpec g;
      g.bus_id = bus_id(a);
      g.model = osdev_model(p);
      if (g.model.empty() && model_by_id.count(pci_id(a))) g.model = model_by_id[pci_id(a)];
      if (g.model.empty()) g.model = info(p, "PCIDevice");
      if (g.model.empty())
        for (const auto& k : kKnownGpus)
          if (k.vendor == a.vendor_id && k.device == a.device_id) g.model = k.model;
      if (g.model.empty()) {
        g.model = "PCI " + pci_id(a);
        note("unknown GPU model for PCI id " + pci_id(a) + " (no OS device names it)", g.bus_id);
      }
      if (g.model.rfind("deon ", 0) == 0) {
        note("GPU model '" + g.model + "' looks cut short (hwloc RSMI backend); read as 'Ra" + g.model + "'",
                 g.bus_id);
        g.model = "Ra" + g.model;
      }
      g.gres_type = gres_type_slug(g.model);
      g.memory_bytes = gpu_memory(p, g.model);
      if (g.memory_bytes == 0 && memory_by_id.count(pci_id(a))) g.memory_bytes = memory_by_id[pci_id(a)];
      if (g.memory_bytes == 0) note("GPU memory size unknown", g.bus_id);
      std::vector<int> cores;
      g.numa = io_numa(p, "GPU " + g.bus_id, &cores);
      g.pcie_switch = switch_above(p);
      partitions_warning(p, g.bus_id);
      gpu_index_[p] = static_cast<int>(t.gpus.size());
      t.gpus.push_back(std::move(g));
      out_.gpu_cores.push_back(std::move(cores));
    }
    flush_notes();

    int unnamed = 0;
    for (hwloc_obj_t p : nics) {
      const auto& a = p->attr->pcidev;
      NicSpec n;
      n.bus_id = bus_id(a);
      std::string fabric, net;
      for (hwloc_obj_t o : os_devices(p)) {
        if (!o->name) continue;
        if (raw_enum(o->attr->osdev.type) == HWLOC_OBJ_OSDEV_OPENFABRICS && fabric.empty()) fabric = o->name;
        if (raw_enum(o->attr->osdev.type) == HWLOC_OBJ_OSDEV_NETWORK && net.empty()) net = o->name;
      }
      n.name = !fabric.empty() ? fabric : !net.empty() ? net : "nic" + std::to_string(unnamed++);
      n.bandwidth_bps = a.linkspeed > 0 ? static_cast<double>(a.linkspeed) * 8e9 : 0.0;
      n.numa = io_numa(p, "NIC " + n.bus_id, nullptr);
      n.pcie_switch = switch_above(p);
      t.nics.push_back(std::move(n));
    }
    flush_notes();
    if (unknown_speed_ > 0)
      warn(std::to_string(unknown_speed_) + " PCI bridge(s) without a link speed; Gen4 x16 assumed");
  }

  std::string osdev_model(hwloc_obj_t p) const {
    std::string vendor_lib, opencl;
    for (hwloc_obj_t o : os_devices(p)) {
      const std::string m = info(o, "GPUModel");
      if (m.empty()) continue;
      if (is_vendor_gpu_osdev(o) && vendor_lib.empty()) vendor_lib = m;
      else if (is_opencl_osdev(o) && opencl.empty()) opencl = m;
    }
    return !vendor_lib.empty() ? vendor_lib : opencl;
  }

  static int64_t gpu_memory(hwloc_obj_t p, const std::string& model) {
    for (const char* key : {"CUDAGlobalMemorySize", "RSMIVRAMSize", "OpenCLGlobalMemorySize"})
      for (hwloc_obj_t o : os_devices(p)) {
        const std::string v = info(o, key);
        if (!v.empty()) {
          const long long kib = std::strtoll(v.c_str(), nullptr, 10);
          if (kib > 0) return static_cast<int64_t>(kib) * 1024;
        }
      }
    // "... 16GB ..." in the model name, read as GiB (how GPU memory is marketed).
    for (size_t i = 0; i + 2 < model.size(); ++i) {
      if (!std::isdigit(static_cast<unsigned char>(model[i])) ||
          (i > 0 && std::isdigit(static_cast<unsigned char>(model[i - 1]))))
        continue;
      size_t j = i;
      while (j < model.size() && std::isdigit(static_cast<unsigned char>(model[j]))) ++j;
      if (model.compare(j, 2, "GB") == 0) return std::stoll(model.substr(i, j - i)) << 30;
    }
    return 0;
  }

  void partitions_warning(hwloc_obj_t p, const std::string& bus) {
    std::map<std::string, std::vector<std::string>> by_kind;
    for (hwloc_obj_t o : os_devices(p))
      if (is_vendor_gpu_osdev(o) && o->name) by_kind[o->subtype ? o->subtype : "GPU"].push_back(o->name);
    for (const auto& [kind, names] : by_kind)
      if (names.size() > 1)
        note("a GPU carries " + std::to_string(names.size()) + " " + kind +
                     " devices (a partitioned GPU); modelled as one GPU",
                 bus + ": " + names.front() + ".." + names.back());
  }

  // ---- NVLink ------------------------------------------------------------------------
  int gpu_of(hwloc_obj_t o) const {
    while (o && o->type != HWLOC_OBJ_PCI_DEVICE) o = o->parent;
    auto it = gpu_index_.find(o);
    return it == gpu_index_.end() ? -1 : it->second;
  }

  bool is_switch_obj(hwloc_obj_t o) const {
    while (o && o->type != HWLOC_OBJ_PCI_DEVICE) o = o->parent;
    return o && std::find(nvswitches_.begin(), nvswitches_.end(), o) != nvswitches_.end();
  }

  void nvlink() {
    NodeTemplate& t = out_.node;
    if (t.gpus.empty()) return;
    const double per_link = nvlink_link_mbps(t.gpus.front().model);
    NvlinkSpec& nv = t.nvlink;

    unsigned nr = 1;
    hwloc_distances_s* d = nullptr;
    if (hwloc_distances_get_by_name(topo_, "NVLinkBandwidth", &nr, &d, 0) != 0 || nr == 0) d = nullptr;
    std::unique_ptr<hwloc_distances_s, std::function<void(hwloc_distances_s*)>> guard(
        d, [this](hwloc_distances_s* x) { hwloc_distances_release(topo_, x); });

    if (!nvswitches_.empty()) {
      nv.kind = NvlinkKind::kNvswitch;
      nv.link_bandwidth_bps = per_link * 8e6;
      std::vector<int> links(t.gpus.size(), 0);
      bool any = false;
      if (d) {
        for (unsigned i = 0; i < d->nbobjs; ++i) {
          const int g = gpu_of(d->objs[i]);
          if (g < 0) continue;
          double sum = 0;
          for (unsigned j = 0; j < d->nbobjs; ++j)
            if (is_switch_obj(d->objs[j])) sum += static_cast<double>(d->values[i * d->nbobjs + j]);
          links[static_cast<size_t>(g)] = static_cast<int>(std::lround(sum / per_link));
          any = any || sum > 0;
        }
      }
      if (any) {
        const auto [lo, hi] = std::minmax_element(links.begin(), links.end());
        if (*lo != *hi)
          warn("GPUs have " + std::to_string(*lo) + " to " + std::to_string(*hi) + " NVSwitch links; using " +
               std::to_string(*lo));
        nv.links_per_gpu = *lo;
      } else {
        const std::string m = to_lower(t.gpus.front().model);
        nv.links_per_gpu = m.find("v100") != std::string::npos   ? 6
                           : m.find("a100") != std::string::npos ? 12
                           : m.find("h100") != std::string::npos || m.find("h200") != std::string::npos ? 18
                                                                                                       : 0;
        warn(std::to_string(nvswitches_.size()) + " NVSwitches but no GPU-NVSwitch bandwidths; " +
             std::to_string(nv.links_per_gpu) + " links per GPU assumed from the GPU model");
      }
      return;
    }
    if (!d) {
      const std::string m = to_lower(t.gpus.front().model);
      if (m.find("sxm") != std::string::npos)
        warn("SXM GPUs but no NVLinkBandwidth matrix in the topology; NVLink not modelled");
      return;
    }
    nv.kind = NvlinkKind::kPairs;
    nv.link_bandwidth_bps = per_link * 8e6;
    const unsigned n = d->nbobjs;
    for (unsigned i = 0; i < n; ++i)
      for (unsigned j = i + 1; j < n; ++j) {
        const int a = gpu_of(d->objs[i]), b = gpu_of(d->objs[j]);
        const double bw = static_cast<double>(d->values[i * n + j]);
        if (a < 0 || b < 0 || a == b || bw <= 0) continue;  // diagonal / non-GPU entries
        const int links = static_cast<int>(std::lround(bw / per_link));
        if (links == 0 || std::fabs(links * per_link - bw) > 0.05 * per_link)
          warn("NVLink bandwidth " + std::to_string(static_cast<long long>(bw)) + " MB/s between GPUs " +
               std::to_string(a) + " and " + std::to_string(b) + " is not a multiple of " +
               std::to_string(static_cast<long long>(per_link)) + " MB/s per link");
        if (links > 0) nv.pairs.push_back({std::min(a, b), std::max(a, b), links});
      }
    std::sort(nv.pairs.begin(), nv.pairs.end(),
              [](const auto& x, const auto& y) { return std::tie(x.a, x.b) < std::tie(y.a, y.b); });
    if (nv.pairs.empty()) nv.kind = NvlinkKind::kNone;
  }

  hwloc_topology_t topo_;
  SourceLoc loc_;
  Diagnostics& w_;
  HwlocImport out_;
  hwloc_obj_type_t core_type_ = HWLOC_OBJ_CORE;
  std::vector<int> core_abstract_;  // by core logical index: abstract id, -1 = dropped
  std::map<hwloc_obj_t, Role> roles_;
  std::map<hwloc_obj_t, int> host_bridges_;
  std::map<hwloc_obj_t, int> switch_index_;
  std::map<hwloc_obj_t, int> gpu_index_;
  std::vector<hwloc_obj_t> nvswitches_;
  std::map<std::string, std::vector<std::string>> notes_;
  std::vector<std::string> note_order_;
  int unknown_speed_ = 0;
};

}  // namespace

std::string gres_type_slug(const std::string& model) {
  std::string m = model;
  const auto open = m.find('['), close = m.find(']');
  if (open != std::string::npos && close != std::string::npos && close > open + 1)
    m = m.substr(open + 1, close - open - 1);
  m = to_lower(trim(m));
  for (const char* prefix : {"nvidia ", "amd "})
    if (m.rfind(prefix, 0) == 0) m = m.substr(std::strlen(prefix));
  std::string out;
  for (char c : m) {
    const bool keep = std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-';
    if (keep) out += c;
    else if (!out.empty() && out.back() != '_') out += '_';
  }
  while (!out.empty() && out.back() == '_') out.pop_back();
  return out.empty() ? "gpu" : out;
}

double nvlink_link_mbps(const std::string& gpu_model) {
  const std::string m = to_lower(gpu_model);
  if (m.find("p100") != std::string::npos) return 20000;
  if (m.find("b100") != std::string::npos || m.find("b200") != std::string::npos) return 50000;
  return 25000;
}

HwlocImport import_hwloc_topology_detailed(hwloc_topology_t topo, const std::string& source, Diagnostics& warnings) {
  return Importer(topo, source, warnings).run();
}

NodeTemplate import_hwloc_topology(hwloc_topology_t topo, const std::string& source, Diagnostics& warnings) {
  return import_hwloc_topology_detailed(topo, source, warnings).node;
}

namespace {

// hwloc 2.9 inserts <object>s without checking them: one with no type, an unknown type, or
// an empty or malformed cpuset makes hwloc_topology_load dereference NULL (fuzzer finding).
// So each object must name a type hwloc knows, and CPU-side objects carry a bitmap cpuset.
bool hwloc_bitmap_text(const std::string& v) {
  if (v.empty()) return false;
  bool digit = false;
  for (size_t i = 0; i < v.size(); ++i) {
    const char c = v[i];
    if (c == ',') continue;
    if (v.compare(i, 7, "0xf...f") == 0) {
      i += 6;
      digit = true;
      continue;
    }
    if (c != '0' || i + 1 >= v.size() || v[i + 1] != 'x') return false;
    i += 2;
    size_t n = 0;
    while (i < v.size() && std::isxdigit(static_cast<unsigned char>(v[i]))) ++i, ++n;
    if (n == 0 || n > 8) return false;
    digit = true;
    if (i < v.size() && v[i] != ',') return false;
  }
  return digit;
}

void check_hwloc_objects(const XmlElement& e, const std::string& path) {
  static const std::set<std::string> kCpuSide = {
      "Machine", "System", "Package", "Socket", "Die", "Core", "PU", "Group", "NUMANode", "Node", "MemCache",
      "Cache", "L1Cache", "L2Cache", "L3Cache", "L4Cache", "L5Cache", "L1iCache", "L2iCache", "L3iCache"};
  static const std::set<std::string> kIo = {"Bridge", "PCIDev", "OSDev", "Misc"};
  Diagnostics d;
  std::function<void(const XmlElement&)> walk = [&](const XmlElement& x) {
    if (d.full()) return;
    if (x.name == "object") {
      const SourceLoc at{path, x.line, x.col};
      const std::string* type = x.attr("type");
      if (!type) {
        d.error(at, "not a valid hwloc XML topology: <object> without a type");
      } else if (kCpuSide.count(*type)) {
        const std::string* cpuset = x.attr("cpuset");
        if (!cpuset || !hwloc_bitmap_text(*cpuset))
          d.error(at, "not a valid hwloc XML topology: " + *type + " object without a valid cpuset");
        for (const char* key : {"complete_cpuset", "allowed_cpuset", "nodeset", "complete_nodeset", "allowed_nodeset"})
          if (const std::string* v = x.attr(key); v && !hwloc_bitmap_text(*v))
            d.error(at, "not a valid hwloc XML topology: " + std::string(key) + " '" + *v + "' is not a bitmap");
      } else if (!kIo.count(*type)) {
        d.error(at, "not a valid hwloc XML topology: unknown object type '" + *type + "'");
      }
    }
    for (const auto& c : x.children) walk(c);
  };
  // hwloc writes exactly one root object, the Machine (System in v1 files).
  const XmlElement* top = nullptr;
  for (const auto& c : e.children)
    if (c.name == "object") {
      if (top) d.error({path, c.line, c.col}, "not a valid hwloc XML topology: a second root object");
      top = &c;
    }
  if (!top) d.error({path, e.line, e.col}, "not a valid hwloc XML topology: no root object");
  else if (const std::string* t = top->attr("type"); t && *t != "Machine" && *t != "System")
    d.error({path, top->line, top->col}, "not a valid hwloc XML topology: the root object is " + *t + ", not Machine");
  walk(e);
  d.throw_if_errors();
}

// How libhwloc's load of `xml` ends, tried in a child process first: libhwloc 2.9
// dereferences NULL or loops on some well-formed topologies whose objects disagree
// (a fuzzer finding), and a reader must answer bad input with an error, never a crash.
// The child runs with default signal dispositions, stderr closed and a 20 s alarm.
struct ProbeResult {
  bool loaded = false;
  std::string why;  // when !loaded
};

ProbeResult probe_hwloc_load(const std::string& xml) {
  const pid_t pid = ::fork();
  if (pid < 0) return {true, {}};  // no child to spare: load in-process as before
  if (pid == 0) {
    if (__sanitizer_set_death_callback) __sanitizer_set_death_callback(nullptr);
    for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGALRM}) ::signal(sig, SIG_DFL);
    if (const int null = ::open("/dev/null", O_WRONLY); null >= 0) ::dup2(null, STDERR_FILENO);
    ::alarm(20);
    hwloc_topology_t topo = nullptr;
    int rc = 3;
    if (hwloc_topology_init(&topo) == 0) {
      if (hwloc_topology_set_xmlbuffer(topo, xml.c_str(), static_cast<int>(xml.size() + 1)) == 0) {
        hwloc_topology_set_io_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_ALL);
        rc = hwloc_topology_load(topo) == 0 ? 0 : 3;
      }
      hwloc_topology_destroy(topo);
    }
    ::_exit(rc);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return {true, {}};
  if (WIFEXITED(status) && (WEXITSTATUS(status) == 0 || WEXITSTATUS(status) == 3)) return {true, {}};
  if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
    return {false, "libhwloc " + std::to_string(hwloc_get_api_version() >> 16) + ".x did not finish loading it in 20 s"};
  // Not the signal's name: under ASan the child exits 1 where a plain build gets SIGSEGV,
  // and the diagnostic must be the same in both.
  return {false, "libhwloc " + std::to_string(hwloc_get_api_version() >> 16) +
                     ".x crashed loading it; its objects are inconsistent"};
}

}  // namespace

HwlocImport import_hwloc_xml_detailed(const std::string& path, Diagnostics& warnings) {
  const SourceLoc loc{path, 0, 0};
  const std::string xml = read_input_file(path);
  // hwloc 2.x reads v1 and v2 XML; name the one case it cannot read.
  const auto tag = xml.find("<topology");
  if (tag != std::string::npos) {
    const auto end = xml.find('>', tag);
    const auto ver = xml.find("version=\"", tag);
    if (ver != std::string::npos && ver < end) {
      const std::string v = xml.substr(ver + 9, xml.find('"', ver + 9) - ver - 9);
      const int major = std::atoi(v.c_str());
      if (major > 2)
        throw InputError(loc, "hwloc XML version " + v + " is not supported: libhwloc " +
                                  std::to_string(hwloc_get_api_version() >> 16) +
                                  ".x reads only v1 and v2 XML; export the topology with hwloc 2.x");
    }
  }
  // libhwloc 2.9's own XML parser dereferences NULL on malformed input (the fuzzer's
  // 21-byte `<topologyversion="2.1`): check well-formedness and the root first.
  XmlElement root;
  try {
    root = parse_xml(xml, path);
  } catch (const InputError& e) {
    Diagnostics d;
    for (const auto& x : e.diagnostics().all()) d.error(x.loc, "not a valid hwloc XML topology: " + x.message);
    throw InputError(d);
  }
  if (root.name != "topology")
    throw InputError(SourceLoc{path, root.line, root.col},
                     "root element is <" + root.name + ">, not <topology>: not an hwloc XML topology");
  check_hwloc_objects(root, path);
  if (const ProbeResult probe = probe_hwloc_load(xml); !probe.loaded)
    throw InputError(SourceLoc{path, root.line, root.col}, "not a valid hwloc XML topology: " + probe.why);
  hwloc_topology_t topo = nullptr;
  if (hwloc_topology_init(&topo) != 0) throw InputError(loc, "hwloc_topology_init failed");
  std::unique_ptr<hwloc_topology, void (*)(hwloc_topology_t)> guard(topo, hwloc_topology_destroy);
  if (hwloc_topology_set_xmlbuffer(topo, xml.c_str(), static_cast<int>(xml.size() + 1)) != 0)
    throw InputError(loc, "not a valid hwloc XML topology (hwloc cannot parse it: " + std::string(std::strerror(errno)) +
                              ")");
  hwloc_topology_set_io_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_ALL);
  if (hwloc_topology_load(topo) != 0)
    throw InputError(loc, "not a valid hwloc XML topology (hwloc refused it: " + std::string(std::strerror(errno)) +
                              ")");
  return import_hwloc_topology_detailed(topo, path, warnings);
}

HwlocImport discover_this_machine(const std::string& name, Diagnostics& warnings, std::vector<int>* allowed_pus) {
  const SourceLoc loc{"<this machine>", 0, 0};
  hwloc_topology_t topo = nullptr;
  if (hwloc_topology_init(&topo) != 0) throw InputError(loc, "hwloc_topology_init failed");
  std::unique_ptr<hwloc_topology, void (*)(hwloc_topology_t)> guard(topo, hwloc_topology_destroy);
  hwloc_topology_set_flags(topo, HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED);
  hwloc_topology_set_io_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
  if (hwloc_topology_load(topo) != 0)
    throw InputError(loc, "hwloc cannot discover this machine: " + std::string(std::strerror(errno)));
  if (allowed_pus) {
    allowed_pus->clear();
    const hwloc_const_cpuset_t allowed = hwloc_topology_get_allowed_cpuset(topo);
    for (int i = hwloc_bitmap_first(allowed); i >= 0; i = hwloc_bitmap_next(allowed, i)) allowed_pus->push_back(i);
  }
  HwlocImport out = import_hwloc_topology_detailed(topo, name, warnings);
  out.node.name = name;
  return out;
}

NodeTemplate import_hwloc_xml(const std::string& path, Diagnostics& warnings) {
  return import_hwloc_xml_detailed(path, warnings).node;
}

}  // namespace gcsim
