#include "tools/real/probe.hpp"

#include <numa.h>
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <stdexcept>
#include <thread>

#ifdef GCSIM_HAVE_CUDA
#include <cuda_runtime.h>
#endif

namespace gcsim::real {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

bool pin_thread(int os_cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(os_cpu, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0;
}

/// A buffer on one NUMA node (libnuma), or from the default allocator without it.
class NodeBuffer {
 public:
  NodeBuffer(size_t bytes, int os_node, bool numa) : bytes_(bytes), numa_(numa) {
    p_ = numa ? numa_alloc_onnode(bytes, os_node) : std::aligned_alloc(4096, (bytes + 4095) / 4096 * 4096);
    if (!p_) throw std::runtime_error("cannot allocate " + std::to_string(bytes >> 20) + " MiB on NUMA node " +
                                      std::to_string(os_node));
  }
  NodeBuffer(const NodeBuffer&) = delete;
  NodeBuffer& operator=(const NodeBuffer&) = delete;
  ~NodeBuffer() {
    if (numa_) numa_free(p_, bytes_);
    else std::free(p_);
  }
  [[nodiscard]] void* get() const { return p_; }
  [[nodiscard]] size_t bytes() const { return bytes_; }

 private:
  void* p_ = nullptr;
  size_t bytes_;
  bool numa_;
};

/// STREAM triad with one thread per CPU in `cpus`, each on its own slice; best of `reps`.
double triad_Bps(const std::vector<int>& cpus, double* a, const double* b, const double* c, size_t n, int reps) {
  const size_t k = cpus.size();
  std::vector<double> best(static_cast<size_t>(reps), 1e300);
  std::barrier sync(static_cast<std::ptrdiff_t>(k) + 1);
  std::vector<std::thread> th;
  std::atomic<bool> pinned_ok{true};
  for (size_t t = 0; t < k; ++t) {
    th.emplace_back([&, t] {
      if (!pin_thread(cpus[t])) pinned_ok = false;
      const size_t lo = n * t / k, hi = n * (t + 1) / k;
      const double s = 3.0;
      for (int r = 0; r < reps; ++r) {
        sync.arrive_and_wait();  // start together
        for (size_t i = lo; i < hi; ++i) a[i] = b[i] + s * c[i];
        asm volatile("" ::: "memory");  // the stores happen before the barrier
        sync.arrive_and_wait();  // done
      }
    });
  }
  for (int r = 0; r < reps; ++r) {
    sync.arrive_and_wait();
    const auto t0 = Clock::now();
    sync.arrive_and_wait();
    best[static_cast<size_t>(r)] = seconds_since(t0);
  }
  for (auto& x : th) x.join();
  if (!pinned_ok) throw std::runtime_error("cannot pin a probe thread to its CPU");
  const double t = *std::min_element(best.begin(), best.end());
  return 24.0 * static_cast<double>(n) / t;
}

/// Average latency of dependent loads over a random single cycle of cache lines.
double chase_ns(int cpu, void* mem, size_t bytes, size_t steps) {
  double result = 0;
  std::thread th([&] {
    pin_thread(cpu);
    constexpr size_t kLine = 64;
    const size_t lines = bytes / kLine;
    auto* base = static_cast<unsigned char*>(mem);
    std::vector<uint32_t> order(lines);
    for (size_t i = 0; i < lines; ++i) order[i] = static_cast<uint32_t>(i);
    std::mt19937_64 rng(0x9e3779b97f4a7c15ull);  // Sattolo: one cycle through every line
    for (size_t i = lines - 1; i > 0; --i) std::swap(order[i], order[std::uniform_int_distribution<size_t>(0, i - 1)(rng)]);
    for (size_t i = 0; i < lines; ++i)
      *reinterpret_cast<void**>(base + order[i] * kLine) = base + order[(i + 1) % lines] * kLine;
    void* p = base + order[0] * kLine;
    for (size_t i = 0; i < lines; ++i) p = *static_cast<void**>(p);  // warm the TLB and caches
    const auto t0 = Clock::now();
    for (size_t i = 0; i < steps; ++i) {
      p = *static_cast<void**>(p);
      asm volatile("" : "+r"(p)::"memory");  // each load depends on the last; none may go
    }
    const double t = seconds_since(t0);
    result = t * 1e9 / static_cast<double>(steps);
  });
  th.join();
  return result;
}

std::string gb(double Bps) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2fGB/s", Bps / 1e9);
  return buf;
}

std::string yaml_quote(const std::string& s) {
  std::string out = "\"";
  for (char ch : s) {
    if (ch == '"' || ch == '\\') out += '\\';
    out += ch;
  }
  return out + "\"";
}

}  // namespace

ProbeResult run_probe(const Machine& m, const ProbeOptions& o, std::ostream& progress) {
  if (!m.live) throw std::runtime_error("probe measures this machine; --topology-file is for place and topo");
  const auto t0 = Clock::now();
  ProbeResult r;
  r.host = m.cluster.nodes.front().name;
  r.template_name = o.template_name.empty() ? m.tmpl().name : o.template_name;
  r.quick = o.quick;
  r.numa_api = numa_available() >= 0;
  const NodeTemplate& t = m.tmpl();
  const int domains = t.numa_domains();
  // Each of the three arrays well above the last-level cache (a VM may see more than it reports).
  r.buffer_bytes = o.quick ? (int64_t{128} << 20) : (int64_t{512} << 20);
  r.chase_bytes = o.quick ? (int64_t{64} << 20) : (int64_t{512} << 20);
  const int reps = o.quick ? 3 : 10;
  const size_t steps = o.quick ? 2'000'000 : 20'000'000;

  // Each abstract domain: its allowed OS CPUs, and its OS NUMA node.
  std::vector<std::vector<int>> cpus(static_cast<size_t>(domains));
  std::vector<int> os_node(static_cast<size_t>(domains), 0);
  for (int d = 0; d < domains; ++d) {
    for (int c = d * t.cores_per_numa; c < (d + 1) * t.cores_per_numa; ++c) {
      // One thread per core: its first allowed PU.
      const auto pus = m.allowed_pus_of_core(c);
      if (!pus.empty()) cpus[static_cast<size_t>(d)].push_back(pus.front());
    }
    const int first = t.cpu_os_ids.empty() ? d * t.cores_per_numa * t.threads_per_core
                                           : t.cpu_os_ids[static_cast<size_t>(d * t.cores_per_numa * t.threads_per_core)];
    os_node[static_cast<size_t>(d)] = r.numa_api ? std::max(0, numa_node_of_cpu(first)) : 0;
  }
  if (!r.numa_api) r.notes.push_back("libnuma is not available here: one memory domain, default allocation");
  struct bitmask* mems = r.numa_api ? numa_get_mems_allowed() : nullptr;

  for (int e = 0; e < domains; ++e) {
    const int node = os_node[static_cast<size_t>(e)];
    if (mems && !numa_bitmask_isbitset(mems, static_cast<unsigned>(node))) {
      r.notes.push_back("memory of NUMA domain " + std::to_string(e) + " (node " + std::to_string(node) +
                        ") is not allowed to this process: not measured");
      continue;
    }
    const size_t n = static_cast<size_t>(r.buffer_bytes) / sizeof(double);
    NodeBuffer A(n * sizeof(double), node, r.numa_api), B(n * sizeof(double), node, r.numa_api),
        C(n * sizeof(double), node, r.numa_api);
    auto* a = static_cast<double*>(A.get());
    auto* b = static_cast<double*>(B.get());
    auto* c = static_cast<double*>(C.get());
    for (size_t i = 0; i < n; ++i) {
      a[i] = 0;
      b[i] = 1;
      c[i] = 2;
    }
    NodeBuffer chase(static_cast<size_t>(r.chase_bytes), node, r.numa_api);
    for (int d = 0; d < domains; ++d) {
      const auto& cs = cpus[static_cast<size_t>(d)];
      if (cs.empty()) continue;
      ProbeMemoryPair p;
      p.cpu_numa = d;
      p.mem_numa = e;
      p.os_cpu_node = os_node[static_cast<size_t>(d)];
      p.os_mem_node = node;
      p.threads = static_cast<int>(cs.size());
      p.triad_Bps = triad_Bps(cs, a, b, c, n, reps);
      p.latency_ns = chase_ns(cs.front(), chase.get(), chase.bytes(), steps);
      progress << "gcsim real probe: CPU domain " << d << " -> memory domain " << e << ": triad " << gb(p.triad_Bps)
               << " (" << p.threads << " threads), latency " << static_cast<int>(p.latency_ns + 0.5) << " ns\n";
      r.memory.push_back(p);
    }
  }
  if (mems) numa_free_nodemask(mems);
  if (r.memory.empty()) throw std::runtime_error("no (CPU domain, memory domain) pair could be measured");

#ifdef GCSIM_HAVE_CUDA
  int ndev = 0;
  if (!t.gpus.empty() && cudaGetDeviceCount(&ndev) == cudaSuccess && ndev > 0) {
    const size_t bytes = o.quick ? (size_t{64} << 20) : (size_t{256} << 20);
    for (int g = 0; g < static_cast<int>(t.gpus.size()); ++g) {
      int dev = -1;
      if (t.gpus[g].bus_id.empty() || cudaDeviceGetByPCIBusId(&dev, t.gpus[g].bus_id.c_str()) != cudaSuccess) {
        r.notes.push_back("GPU " + std::to_string(g) + ": no CUDA device at its bus id; copies not measured");
        continue;
      }
      if (!std::binary_search(m.allowed_gpus.begin(), m.allowed_gpus.end(), g)) continue;
      cudaSetDevice(dev);
      void* dbuf = nullptr;
      if (cudaMalloc(&dbuf, bytes) != cudaSuccess) continue;
      cudaEvent_t ev0, ev1;
      cudaEventCreate(&ev0);
      cudaEventCreate(&ev1);
      for (int e = 0; e < domains; ++e) {
        NodeBuffer host(bytes, os_node[static_cast<size_t>(e)], r.numa_api);
        std::memset(host.get(), 1, bytes);
        if (cudaHostRegister(host.get(), bytes, cudaHostRegisterDefault) != cudaSuccess) continue;
        auto time_copy = [&](cudaMemcpyKind kind) {
          float best = 1e30f;
          for (int rep = 0; rep < reps; ++rep) {
            cudaEventRecord(ev0);
            if (kind == cudaMemcpyHostToDevice) cudaMemcpy(dbuf, host.get(), bytes, kind);
            else cudaMemcpy(host.get(), dbuf, bytes, kind);
            cudaEventRecord(ev1);
            cudaEventSynchronize(ev1);
            float ms = 0;
            cudaEventElapsedTime(&ms, ev0, ev1);
            best = std::min(best, ms);
          }
          return static_cast<double>(bytes) / (best * 1e-3);
        };
        ProbeGpuCopy pc;
        pc.gpu = g;
        pc.gpu_numa = t.gpus[g].numa;
        pc.mem_numa = e;
        pc.h2d_Bps = time_copy(cudaMemcpyHostToDevice);
        pc.d2h_Bps = time_copy(cudaMemcpyDeviceToHost);
        cudaHostUnregister(host.get());
        progress << "gcsim real probe: GPU " << g << " <-> memory domain " << e << ": H2D " << gb(pc.h2d_Bps)
                 << ", D2H " << gb(pc.d2h_Bps) << "\n";
        r.copies.push_back(pc);
      }
      cudaEventDestroy(ev0);
      cudaEventDestroy(ev1);
      cudaFree(dbuf);
    }
    r.cuda = !r.copies.empty();
  } else if (!t.gpus.empty()) {
    r.notes.push_back("no CUDA device answered: host-device copies not measured");
  }
#else
  if (!t.gpus.empty()) r.notes.push_back("built without CUDA: host-device copies not measured");
#endif
  if (t.gpus.empty()) r.notes.push_back("no GPUs: memory figures only");
  r.seconds = seconds_since(t0);
  return r;
}

std::string format_probe_table(const ProbeResult& r) {
  std::string out = "# gcsim real probe on " + r.host + (r.quick ? " (--quick)" : "") + ": buffers 3 x " +
                    std::to_string(r.buffer_bytes >> 20) + " MiB, chase " + std::to_string(r.chase_bytes >> 20) +
                    " MiB\n";
  for (const auto& n : r.notes) out += "# " + n + "\n";
  out += "CPU_NUMA  MEM_NUMA  THREADS  TRIAD_GB/s  LATENCY_NS\n";
  char buf[160];
  for (const auto& p : r.memory) {
    std::snprintf(buf, sizeof buf, "%-9d %-9d %-8d %-11.2f %.1f\n", p.cpu_numa, p.mem_numa, p.threads, p.triad_Bps / 1e9,
                  p.latency_ns);
    out += buf;
  }
  if (!r.copies.empty()) {
    out += "GPU  MEM_NUMA  H2D_GB/s  D2H_GB/s\n";
    for (const auto& c : r.copies) {
      std::snprintf(buf, sizeof buf, "%-4d %-9d %-9.2f %.2f\n", c.gpu, c.mem_numa, c.h2d_Bps / 1e9, c.d2h_Bps / 1e9);
      out += buf;
    }
  }
  std::snprintf(buf, sizeof buf, "# %.1f s\n", r.seconds);
  return out + buf;
}

std::string probe_calibration_yaml(const ProbeResult& r) {
  std::string y = "# Host calibration written by `gcsim real probe` (schema: configs/host/README.md).\n";
  y += "# memory: STREAM triad (24 bytes per element, one thread per allowed core of the CPU\n";
  y += "# domain, best of " + std::to_string(r.quick ? 3 : 10) + ") and pointer-chase latency (one core).\n";
  y += "schema_version: 1\n";
  y += "source: " + yaml_quote("gcsim real probe" + std::string(r.quick ? " --quick" : "") + " on " + r.host) + "\n";
  y += "node_templates:\n";
  y += "  " + yaml_quote(r.template_name) + ":\n";
  y += "    memory:\n";
  char buf[256];
  for (const auto& p : r.memory) {
    std::snprintf(buf, sizeof buf, "      - {cpu_numa: %d, mem_numa: %d, triad: %s, latency_ns: %.1f, threads: %d}\n",
                  p.cpu_numa, p.mem_numa, gb(p.triad_Bps).c_str(), p.latency_ns, p.threads);
    y += buf;
  }
  if (!r.copies.empty()) {
    y += "    gpus:\n";
    std::vector<int> gpus;
    for (const auto& c : r.copies) gpus.push_back(c.gpu);
    std::sort(gpus.begin(), gpus.end());
    gpus.erase(std::unique(gpus.begin(), gpus.end()), gpus.end());
    for (int g : gpus) {
      // local = the GPU's own domain (the first measured when it was not); remote = the slowest other.
      const ProbeGpuCopy* local = nullptr;
      for (const auto& c : r.copies)
        if (c.gpu == g && (c.mem_numa == c.gpu_numa || !local)) {
          if (!local || c.mem_numa == c.gpu_numa) local = &c;
        }
      double h2d_remote = 0, d2h_remote = 0;
      for (const auto& c : r.copies)
        if (c.gpu == g && &c != local) {
          h2d_remote = h2d_remote == 0 ? c.h2d_Bps : std::min(h2d_remote, c.h2d_Bps);
          d2h_remote = d2h_remote == 0 ? c.d2h_Bps : std::min(d2h_remote, c.d2h_Bps);
        }
      y += "      - {gpu: " + std::to_string(g) + ", h2d_local: " + gb(local->h2d_Bps) + ", d2h_local: " +
           gb(local->d2h_Bps);
      if (h2d_remote > 0) y += ", h2d_remote: " + gb(std::min(h2d_remote, local->h2d_Bps));
      if (d2h_remote > 0) y += ", d2h_remote: " + gb(std::min(d2h_remote, local->d2h_Bps));
      y += "}\n";
    }
  }
  return y;
}

}  // namespace gcsim::real
