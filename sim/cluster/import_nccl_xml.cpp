// NCCL topology XML: the strict XML reader, then the walk from <system>/<cpu>/<pci>
// to a NodeTemplate.
#include "sim/cluster/import_nccl_xml.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <set>

#include "sim/cluster/import_nvidia_smi.hpp"
#include "sim/core/input_file.hpp"

namespace gcsim {

const std::string* XmlElement::attr(const std::string& key) const {
  for (const auto& [k, v] : attributes)
    if (k == key) return &v;
  return nullptr;
}

// ---------------------------------------------------------------- XML reader

namespace {

class XmlReader {
 public:
  XmlReader(const std::string& text, const std::string& path) : s_(text), path_(path) {
    line_starts_.push_back(0);
    for (size_t i = 0; i < s_.size(); ++i)
      if (s_[i] == '\n') line_starts_.push_back(i + 1);
  }

  XmlElement document() {
    if (s_.compare(0, 3, "\xEF\xBB\xBF") == 0) pos_ = 3;
    std::optional<XmlElement> root;
    while (true) {
      skip_ws();
      if (pos_ >= s_.size()) break;
      if (starts("<?")) {
        skip_pi();
      } else if (starts("<!--")) {
        skip_comment();
      } else if (starts("<!DOCTYPE") && !root) {
        // An external DTD reference (hwloc writes `<!DOCTYPE topology SYSTEM "hwloc2.dtd">`).
        const size_t end = s_.find('>', pos_);
        const size_t subset = s_.find('[', pos_);
        if (subset < end) fail(subset, "a DOCTYPE with an internal subset is not supported");
        if (end == std::string::npos) fail(pos_, "unterminated DOCTYPE");
        pos_ = end + 1;
      } else if (starts("<!")) {
        fail(pos_, "DOCTYPE after the root and other <! declarations are not supported");
      } else if (s_[pos_] == '<') {
        if (root) fail(pos_, "second root element <" + peek_name(pos_ + 1) + "> (an XML document has one)");
        root = element();
      } else {
        fail(pos_, "text outside the root element");
      }
    }
    if (!root) fail(pos_, "no root element");
    return std::move(*root);
  }

 private:
  [[noreturn]] void fail(size_t at, const std::string& msg) const {
    const auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), at);
    const size_t line = static_cast<size_t>(it - line_starts_.begin());
    const size_t col = at - line_starts_[line - 1] + 1;
    throw InputError(SourceLoc{path_, static_cast<int>(line), static_cast<int>(col)}, msg);
  }
  std::pair<int, int> where(size_t at) const {
    const auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), at);
    const size_t line = static_cast<size_t>(it - line_starts_.begin());
    return {static_cast<int>(line), static_cast<int>(at - line_starts_[line - 1] + 1)};
  }
  bool starts(const char* p) const { return s_.compare(pos_, std::char_traits<char>::length(p), p) == 0; }
  void skip_ws() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  static bool name_start(char c) {
    return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == ':';
  }
  static bool name_char(char c) {
    return name_start(c) || std::isdigit(static_cast<unsigned char>(c)) || c == '-' || c == '.';
  }
  std::string peek_name(size_t at) const {
    size_t e = at;
    while (e < s_.size() && name_char(s_[e])) ++e;
    return s_.substr(at, e - at);
  }
  std::string name() {
    if (pos_ >= s_.size() || !name_start(s_[pos_])) fail(pos_, "expected a name");
    const size_t b = pos_;
    while (pos_ < s_.size() && name_char(s_[pos_])) ++pos_;
    return s_.substr(b, pos_ - b);
  }
  void skip_pi() {
    const size_t b = pos_;
    const size_t e = s_.find("?>", pos_ + 2);
    if (e == std::string::npos) fail(b, "unterminated processing instruction (no '?>')");
    pos_ = e + 2;
  }
  void skip_comment() {
    const size_t b = pos_;
    const size_t e = s_.find("--", pos_ + 4);
    if (e == std::string::npos) fail(b, "unterminated comment (no '-->')");
    if (e + 2 >= s_.size() || s_[e + 2] != '>') fail(e, "'--' inside a comment");
    pos_ = e + 3;
  }
  /// Decodes character data or an attribute value from [b, e); refuses '<' and bad '&'.
  std::string decode(size_t b, size_t e, bool attribute) const {
    std::string out;
    for (size_t i = b; i < e; ++i) {
      const char ch = s_[i];
      if (ch == '<' && attribute) fail(i, "'<' in an attribute value (write &lt;)");
      if (ch != '&') {
        out.push_back(ch);
        continue;
      }
      const size_t semi = s_.find(';', i);
      if (semi == std::string::npos || semi >= e || semi - i > 10) fail(i, "'&' that does not start an entity (write &amp;)");
      const std::string ent = s_.substr(i + 1, semi - i - 1);
      if (ent == "amp") out.push_back('&');
      else if (ent == "lt") out.push_back('<');
      else if (ent == "gt") out.push_back('>');
      else if (ent == "quot") out.push_back('"');
      else if (ent == "apos") out.push_back('\'');
      else if (ent.size() > 1 && ent[0] == '#') {
        const bool hex = ent[1] == 'x';
        const std::string digits = ent.substr(hex ? 2 : 1);
        char* end = nullptr;
        const long v = digits.empty() ? -1 : std::strtol(digits.c_str(), &end, hex ? 16 : 10);
        if (v <= 0 || v > 0x7f || *end != '\0') fail(i, "unsupported character reference '&" + ent + ";' (ASCII only)");
        out.push_back(static_cast<char>(v));
      } else {
        fail(i, "unknown entity '&" + ent + ";'");
      }
      i = semi;
    }
    return out;
  }
  XmlElement element() {
    XmlElement el;
    const size_t open = pos_;
    std::tie(el.line, el.col) = where(open);
    ++pos_;  // '<'
    el.name = name();
    while (true) {
      const size_t before = pos_;
      skip_ws();
      if (pos_ >= s_.size()) fail(open, "unterminated start tag <" + el.name);
      if (starts("/>")) {
        pos_ += 2;
        return el;
      }
      if (s_[pos_] == '>') {
        ++pos_;
        break;
      }
      if (before == pos_) fail(pos_, "expected whitespace, '>' or '/>' in <" + el.name + ">");
      const size_t at = pos_;
      std::string key = name();
      skip_ws();
      if (pos_ >= s_.size() || s_[pos_] != '=') fail(pos_, "expected '=' after attribute '" + key + "'");
      ++pos_;
      skip_ws();
      if (pos_ >= s_.size() || (s_[pos_] != '"' && s_[pos_] != '\''))
        fail(pos_, "attribute '" + key + "' value must be quoted");
      const char q = s_[pos_++];
      const size_t e = s_.find(q, pos_);
      if (e == std::string::npos) fail(at, "unterminated value of attribute '" + key + "'");
      std::string value = decode(pos_, e, true);
      pos_ = e + 1;
      if (el.attr(key)) fail(at, "duplicate attribute '" + key + "'");
      el.attributes.emplace_back(std::move(key), std::move(value));
    }
    // Content.
    while (true) {
      if (pos_ >= s_.size()) fail(open, "<" + el.name + "> is never closed");
      if (starts("</")) {
        const size_t at = pos_;
        pos_ += 2;
        const std::string n = name();
        skip_ws();
        if (pos_ >= s_.size() || s_[pos_] != '>') fail(pos_, "expected '>' to end </" + n);
        ++pos_;
        if (n != el.name) {
          const auto [l, c] = where(open);
          fail(at, "</" + n + "> does not match <" + el.name + "> opened at " + std::to_string(l) + ":" +
                       std::to_string(c));
        }
        return el;
      }
      if (starts("<!--")) {
        skip_comment();
      } else if (starts("<![CDATA[")) {
        fail(pos_, "CDATA sections are not supported");
      } else if (starts("<!")) {
        fail(pos_, "<! declarations are not allowed inside elements");
      } else if (starts("<?")) {
        skip_pi();
      } else if (s_[pos_] == '<') {
        el.children.push_back(element());
      } else {
        const size_t e = std::min(s_.find('<', pos_), s_.size());
        (void)decode(pos_, e, false);  // validated, then dropped
        pos_ = e;
      }
    }
  }

  const std::string& s_;
  const std::string& path_;
  size_t pos_ = 0;
  std::vector<size_t> line_starts_;
};

}  // namespace

XmlElement parse_xml(const std::string& text, const std::string& path) { return XmlReader(text, path).document(); }

// ---------------------------------------------------------------- NCCL topology

namespace {

struct GpuModelInfo {
  const char* model;
  const char* gres;
  int64_t memory_gib;
};

/// PCI device id (vendor 0x10de) -> product.
const std::map<std::string, GpuModelInfo>& gpu_by_device() {
  static const std::map<std::string, GpuModelInfo> m = {
      {"0x1db1", {"NVIDIA Tesla V100-SXM2-16GB", "v100", 16}},
      {"0x1db5", {"NVIDIA Tesla V100-SXM2-32GB", "v100", 32}},
      {"0x1db8", {"NVIDIA Tesla V100-SXM3-32GB", "v100", 32}},
      {"0x1eb8", {"NVIDIA Tesla T4", "t4", 16}},
      {"0x20b0", {"NVIDIA A100-SXM4-40GB", "a100", 40}},
      {"0x20b2", {"NVIDIA A100-SXM4-80GB", "a100_80gb", 80}},
      {"0x20b5", {"NVIDIA A100 80GB PCIe", "a100_80gb", 80}},
      {"0x2236", {"NVIDIA A10", "a10", 24}},
      {"0x2237", {"NVIDIA A10G", "a10g", 24}},
      {"0x2330", {"NVIDIA H100 80GB HBM3", "h100", 80}},
      {"0x2335", {"NVIDIA H200", "h200", 141}},
  };
  return m;
}

/// Compute capability x10 -> the usual product of that class (memory not implied).
std::optional<GpuModelInfo> gpu_by_sm(int sm) {
  switch (sm) {
    case 70: return GpuModelInfo{"NVIDIA V100", "v100", 0};
    case 75: return GpuModelInfo{"NVIDIA T4", "t4", 0};
    case 80: return GpuModelInfo{"NVIDIA A100", "a100", 0};
    case 86: return GpuModelInfo{"NVIDIA A10/A6000-class (sm_86)", "a10", 0};
    case 89: return GpuModelInfo{"NVIDIA L4/L40-class (sm_89)", "l40", 0};
    case 90: return GpuModelInfo{"NVIDIA H100", "h100", 0};
    case 100: return GpuModelInfo{"NVIDIA B200", "b200", 0};
    default: return std::nullopt;
  }
}

std::optional<long> parse_int(const std::string* s, int base = 10) {
  if (!s || s->empty()) return std::nullopt;
  char* end = nullptr;
  const long v = std::strtol(s->c_str(), &end, base);
  if (*end != '\0') return std::nullopt;
  return v;
}

/// "0x030200" -> 0x030200.
std::optional<long> parse_hex(const std::string* s) {
  if (!s) return std::nullopt;
  std::string t = to_lower(trim(*s));
  if (t.rfind("0x", 0) == 0) t = t.substr(2);
  if (t.empty() || t.find_first_not_of("0123456789abcdef") != std::string::npos) return std::nullopt;
  return std::strtol(t.c_str(), nullptr, 16);
}

/// NCCL cpumask: 32-bit hex words, most significant first, empty words = 0.
std::optional<std::vector<int>> parse_affinity(const std::string& s) {
  const auto words = split(s, ',');
  std::vector<int> cpus;
  for (size_t w = 0; w < words.size(); ++w) {
    std::string t = to_lower(trim(words[w]));
    if (t.rfind("0x", 0) == 0) t = t.substr(2);
    if (t.size() > 8 || t.find_first_not_of("0123456789abcdef") != std::string::npos) return std::nullopt;
    const unsigned long v = t.empty() ? 0 : std::strtoul(t.c_str(), nullptr, 16);
    const int base = static_cast<int>(words.size() - 1 - w) * 32;
    for (int b = 0; b < 32; ++b)
      if (v >> b & 1UL) cpus.push_back(base + b);
  }
  std::sort(cpus.begin(), cpus.end());
  return cpus;
}

struct Importer {
  Importer(const std::string& p, Diagnostics& d) : path(p), w(d) {}
  Diagnostics errors;                          // wrong values: thrown at the end of run()
  std::map<std::string, int> bus_line;         // busid -> line of its first <pci>

  const std::string& path;
  Diagnostics& w;
  NodeTemplate t;

  struct GpuExtra {
    std::optional<int> dev, sm;
    std::string device_id;
    struct Link {
      std::string target;
      int count = 0;
      long tclass = 0;
      int line = 0, col = 0;
    };
    std::vector<Link> links;
  };
  std::vector<GpuExtra> gx;
  int unknown_devices = 0;
  SourceLoc first_unknown;
  bool width0_noted = false;
  /// Warnings that repeat per element, reported once each with a count.
  struct Repeated {
    SourceLoc first;
    int count = 0;
  };
  std::map<std::string, Repeated> repeated;
  std::vector<std::string> repeated_order;

  void warn_repeated(const SourceLoc& loc, const std::string& msg) {
    auto [it, fresh] = repeated.try_emplace(msg, Repeated{loc, 0});
    if (fresh) repeated_order.push_back(msg);
    ++it->second.count;
  }
  void flush_repeated() {
    for (const auto& msg : repeated_order) {
      const Repeated& r = repeated[msg];
      w.warning(r.first, r.count == 1 ? msg : msg + " (" + std::to_string(r.count) + " times; the first is here)");
    }
  }

  SourceLoc at(const XmlElement& e) const { return {path, e.line, e.col}; }

  /// "16 GT/s", "32.0 GT/s PCIe" -> generation; "" -> nullopt; others read leniently.
  std::optional<int> pcie_gen(const XmlElement& e) {
    const std::string* ls = e.attr("link_speed");
    if (!ls || trim(*ls).empty()) return std::nullopt;
    const std::string v(trim(*ls));
    char* end = nullptr;
    const double gts = std::strtod(v.c_str(), &end);
    const std::string rest(trim(std::string_view(end)));
    // Past 1000 GT/s (or NaN) is no PCIe link, and would not fit the int printed below.
    if (end == v.c_str() || !(gts >= 0 && gts <= 1000)) {
      w.warning(at(e), "unreadable link_speed '" + v + "'; PCIe generation left at the default");
      return std::nullopt;
    }
    if (rest != "GT/s" && rest != "GT/s PCIe")
      warn_repeated(at(e), "malformed link_speed '" + v + "'; read as " + std::to_string(static_cast<int>(gts)) + " GT/s");
    if (gts < 4) return 1;
    if (gts < 7) return 2;
    if (gts < 12) return 3;
    if (gts < 24) return 4;
    if (gts < 48) return 5;
    return 6;
  }
  std::optional<int> pcie_width(const XmlElement& e) {
    const std::string* a = e.attr("link_width");
    auto v = parse_int(a);
    if (a && (!v || *v < 0 || *v > 32)) errors.error(at(e), "link_width '" + *a + "' is not a lane count (0-32)");
    if (!v || *v < 0 || *v > 32) return std::nullopt;
    if (*v == 0) {
      if (!width0_noted) w.note(at(e), "link_width=\"0\" (a VM hiding the link); width left at the default");
      width0_noted = true;
      return std::nullopt;
    }
    return static_cast<int>(*v);
  }

  void add_nics(const XmlElement& nic, int numa, int sw, const std::string& busid) {
    bool any = false;
    for (const auto& net : nic.children) {
      if (net.name != "net") {
        w.warning(at(net), "ignored <" + net.name + "> inside <nic>");
        continue;
      }
      any = true;
      NicSpec n;
      const std::string* name = net.attr("name");
      n.name = name ? *name : "net" + std::to_string(t.nics.size());
      auto speed = parse_int(net.attr("speed"));
      if (speed && *speed > 0)
        n.bandwidth_bps = static_cast<double>(*speed) * 1e6;  // Mb/s
      else
        w.warning(at(net), "NIC '" + n.name + "' has no speed; bandwidth left 0");
      n.numa = numa;
      n.pcie_switch = sw;
      n.bus_id = busid;
      t.nics.push_back(n);
    }
    if (!any) w.warning(at(nic), "<nic> without <net>");
  }

  void add_gpu(const XmlElement& pci, const XmlElement* gpu, int numa, int sw) {
    GpuSpec g;
    GpuExtra x;
    g.numa = numa;
    g.pcie_switch = sw;
    if (const std::string* b = pci.attr("busid")) g.bus_id = to_lower(*b);
    if (const std::string* dv = pci.attr("device")) x.device_id = to_lower(*dv);
    if (gpu) {
      if (auto v = parse_int(gpu->attr("dev"))) x.dev = static_cast<int>(*v);
      if (auto v = parse_int(gpu->attr("sm"))) x.sm = static_cast<int>(*v);
      for (const auto& l : gpu->children) {
        if (l.name == "nvlink") {
          GpuExtra::Link k;
          if (const std::string* tg = l.attr("target")) k.target = to_lower(*tg);
          k.count = static_cast<int>(parse_int(l.attr("count")).value_or(0));
          k.tclass = parse_hex(l.attr("tclass")).value_or(0);
          k.line = l.line;
          k.col = l.col;
          if (k.count <= 0) {
            w.warning(at(l), "<nvlink> without a positive count; ignored");
            continue;
          }
          x.links.push_back(k);
        } else if (l.name != "c2c") {
          w.warning(at(l), "ignored <" + l.name + "> inside <gpu>");
        }
      }
    }
    auto dev = gpu_by_device().find(x.device_id);
    if (dev != gpu_by_device().end()) {
      g.model = dev->second.model;
      g.gres_type = dev->second.gres;
      g.memory_bytes = dev->second.memory_gib << 30;
    } else if (auto m = x.sm ? gpu_by_sm(*x.sm) : std::nullopt) {
      g.model = m->model;
      g.gres_type = m->gres;
    } else {
      g.gres_type = "gpu";
      warn_repeated(at(pci), "GPU model unknown (no PCI device id or sm the importer knows); gres type 'gpu'");
    }
    t.gpus.push_back(g);
    gx.push_back(std::move(x));
  }

  void walk_pci(const XmlElement& e, int numa, int parent_sw) {
    const std::string* busid = e.attr("busid");
    const std::string bus = busid ? to_lower(*busid) : std::string();
    if (!busid) w.warning(at(e), "<pci> without busid");
    else if (auto [it, fresh] = bus_line.emplace(bus, e.line); !fresh)
      errors.error(at(e), "duplicate PCI bus id '" + *busid + "' (first at line " + std::to_string(it->second) + ")");
    const auto cls = parse_hex(e.attr("class"));
    const XmlElement* gpu = nullptr;
    const XmlElement* nic = nullptr;
    bool has_pci = false;
    for (const auto& ch : e.children) {
      if (ch.name == "gpu") gpu = &ch;
      else if (ch.name == "nic") nic = &ch;
      else if (ch.name == "pci") has_pci = true;
    }
    const bool bridge = has_pci || (cls && (*cls >> 8) == 0x0604);
    if (bridge) {
      // A switch (or, for ffff:ff:xx.x with vendor 0xffff, a virtual one a VM declares
      // to say "these devices share a switch").
      PcieSwitchSpec s;
      s.name = bus;
      s.numa = numa;
      if (auto g = pcie_gen(e)) s.gen = *g;
      if (auto wd = pcie_width(e)) s.width = *wd;
      s.parent = parent_sw;
      s.host_bridge = 0;  // NCCL models one CPU node per NUMA domain: one host bridge
      s.levels = 1;       // nested <pci> bridges are written level by level
      t.pcie_switches.push_back(s);
      const int me = static_cast<int>(t.pcie_switches.size()) - 1;
      for (const auto& ch : e.children) {
        if (ch.name == "pci") walk_pci(ch, numa, me);
        else if (ch.name == "nic") add_nics(ch, numa, me, bus);
        else w.warning(at(ch), "ignored <" + ch.name + "> inside a PCIe bridge");
      }
      return;
    }
    (void)pcie_gen(e);  // report malformed speeds and VM widths on endpoints too
    (void)pcie_width(e);
    const long base = cls ? (*cls >> 8) : -1;
    if (gpu || base == 0x0302 || base == 0x0300) {
      if (!gpu && base == 0x0300 && e.attr("vendor") && to_lower(*e.attr("vendor")) != "0x10de") return;  // BMC VGA
      add_gpu(e, gpu, numa, parent_sw);
    } else if (nic || (cls && (*cls >> 16) == 0x02)) {
      if (nic) {
        add_nics(*nic, numa, parent_sw, bus);
      } else {
        NicSpec n;
        n.name = bus;
        n.bus_id = bus;
        n.numa = numa;
        n.pcie_switch = parent_sw;
        warn_repeated(at(e), "NIC without a <nic><net> element: named by its bus id, speed unknown");
        t.nics.push_back(n);
      }
    } else if (!cls) {
      if (unknown_devices++ == 0) first_unknown = at(e);
    }
    // Other classes (NVMe, NVSwitch 0x0680, ...) are not modelled.
  }

  void run(const XmlElement& root) {
    if (root.name == "graphs")
      throw InputError(SourceLoc{path, root.line, root.col},
                       "this is an NCCL graph file (NCCL_GRAPH_FILE), not a topology");
    if (root.name != "system")
      throw InputError(SourceLoc{path, root.line, root.col},
                       "expected an NCCL topology (<system version=\"1\">), found <" + root.name + ">");
    if (const std::string* v = root.attr("version"); v && *v != "1")
      w.warning(at(root), "NCCL topology version " + *v + " (this importer knows version 1)");

    // NUMA index of each <cpu>: rank of its numaid, else document order.
    std::vector<const XmlElement*> cpus;
    for (const auto& ch : root.children) {
      if (ch.name == "cpu") cpus.push_back(&ch);
      else w.warning(at(ch), "ignored <" + ch.name + "> under <system>");
    }
    if (cpus.empty()) throw InputError(SourceLoc{path, root.line, root.col}, "no <cpu> element in the topology");
    std::vector<long> ids;
    bool ids_ok = true;
    for (const auto* c : cpus) {
      const std::string* a = c->attr("numaid");
      auto v = parse_int(a);
      if (a && (!v || *v < 0)) errors.error(at(*c), "numaid '" + *a + "' is not a NUMA node number");
      if (!v || *v < 0) ids_ok = false;
      ids.push_back(v.value_or(-1));
    }
    if (ids_ok && std::set<long>(ids.begin(), ids.end()).size() != ids.size()) {
      w.warning(at(*cpus[0]), "duplicate <cpu numaid>; NUMA domains numbered in document order");
      ids_ok = false;
    } else if (!ids_ok) {
      w.note(at(*cpus[0]), "<cpu> without a usable numaid; NUMA domains numbered in document order");
    }
    std::vector<long> sorted = ids;
    std::sort(sorted.begin(), sorted.end());
    std::vector<std::vector<int>> sets;
    bool sets_ok = true;
    for (size_t i = 0; i < cpus.size(); ++i) {
      const int numa =
          ids_ok ? static_cast<int>(std::lower_bound(sorted.begin(), sorted.end(), ids[i]) - sorted.begin())
                 : static_cast<int>(i);
      const XmlElement& c = *cpus[i];
      if (const std::string* a = c.attr("affinity")) {
        auto s = parse_affinity(*a);
        if (!s || s->empty()) {
          w.warning(at(c), "unreadable affinity '" + *a + "'");
          sets_ok = false;
        } else {
          sets.push_back(*s);
        }
      } else {
        sets_ok = false;
      }
      for (const auto& ch : c.children) {
        if (ch.name == "pci") walk_pci(ch, numa, -1);
        else if (ch.name == "nic") add_nics(ch, numa, -1, "");
        else w.warning(at(ch), "ignored <" + ch.name + "> under <cpu>");
      }
    }
    if (unknown_devices > 0)
      w.warning(first_unknown, std::to_string(unknown_devices) +
                                   " PCI device(s) without class, <gpu> or <nic> (only bus ids): their type is "
                                   "unknown and they are not modelled");
    if (t.gpus.empty()) w.warning(SourceLoc{path, root.line, root.col}, "the topology lists no GPUs");

    // CPU side.
    const int numa_count = static_cast<int>(cpus.size());
    t.sockets = numa_count;
    t.numa_per_socket = 1;
    w.note(SourceLoc{path, 0, 0}, "NCCL topologies do not give sockets; one socket per NUMA domain assumed");
    CpuLayout layout;
    if (sets_ok) layout = infer_cpu_layout(sets);
    if (layout.ok && layout.total_cores == layout.cores_per_numa * numa_count) {
      t.cores_per_numa = layout.cores_per_numa;
      t.threads_per_core = layout.threads_per_core;
      t.cpu_os_ids = cpu_os_ids_for(layout, t.cores());
    } else if (layout.ok) {
      t.cores_per_numa = layout.cores_per_numa;
      t.threads_per_core = layout.threads_per_core;
      w.warning(SourceLoc{path, 0, 0}, "CPU affinity masks cover " + std::to_string(layout.total_cores) +
                                           " cores, not " + std::to_string(numa_count) + " x " +
                                           std::to_string(layout.cores_per_numa));
    } else {
      t.cores_per_numa = 1;
      w.warning(SourceLoc{path, 0, 0}, "core count unknown (" +
                                           (sets_ok ? layout.problem : std::string("<cpu> without affinity")) +
                                           "); 1 core per NUMA domain assumed");
    }
    w.note(SourceLoc{path, 0, 0}, "NCCL topologies do not give memory; memory_mb left 0");

    order_gpus();
    nvlinks();
    flush_repeated();
    errors.throw_if_errors();
  }

  /// GPUs by their CUDA index when every one has `dev`.
  void order_gpus() {
    std::vector<size_t> idx(t.gpus.size());
    for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
    for (const auto& x : gx)
      if (!x.dev) return;
    std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return *gx[a].dev < *gx[b].dev; });
    std::vector<GpuSpec> g2;
    std::vector<GpuExtra> x2;
    for (size_t i : idx) {
      g2.push_back(t.gpus[i]);
      x2.push_back(gx[i]);
    }
    t.gpus = std::move(g2);
    gx = std::move(x2);
  }

  void nvlinks() {
    constexpr long kNvswitch = 0x068000, kGpu = 0x030200;
    std::map<std::string, int> by_bus;
    for (size_t i = 0; i < t.gpus.size(); ++i) by_bus[t.gpus[i].bus_id] = static_cast<int>(i);
    std::vector<int> switch_links(t.gpus.size(), 0);
    std::map<std::pair<int, int>, int> pairs;
    int max_sm = 0;
    for (size_t i = 0; i < gx.size(); ++i) {
      max_sm = std::max(max_sm, gx[i].sm.value_or(0));
      for (const auto& l : gx[i].links) {
        const SourceLoc loc{path, l.line, l.col};
        if (l.tclass == kNvswitch) {
          switch_links[i] += l.count;
        } else if (l.tclass == kGpu) {
          auto it = by_bus.find(l.target);
          if (it == by_bus.end()) {
            w.warning(loc, "NVLink target " + l.target + " is not a GPU of this topology; ignored");
          } else if (it->second == static_cast<int>(i)) {
            warn_repeated(loc, "NVLink from a GPU to itself; ignored");
          } else {
            const int me = static_cast<int>(i);
            const std::pair<int, int> key{std::min(me, it->second), std::max(me, it->second)};
            pairs[key] = std::max(pairs[key], l.count);
          }
        }
        // tclass 0x060400 (CPU, POWER9 NVLink to the host) is not modelled.
      }
    }
    const int with_switch =
        static_cast<int>(std::count_if(switch_links.begin(), switch_links.end(), [](int v) { return v > 0; }));
    const double per_link = max_sm >= 100 ? 50e9 * 8 : 25e9 * 8;  // per direction
    if (with_switch > 0) {
      int lo = 1 << 30, hi = 0;
      for (int v : switch_links)
        if (v > 0) lo = std::min(lo, v), hi = std::max(hi, v);
      if (with_switch < static_cast<int>(t.gpus.size()))
        w.warning(SourceLoc{path, 0, 0}, std::to_string(t.gpus.size() - with_switch) +
                                             " GPU(s) have no NVSwitch link while others do");
      if (lo != hi)
        w.warning(SourceLoc{path, 0, 0}, "GPUs have different NVSwitch link counts (" + std::to_string(lo) + " to " +
                                             std::to_string(hi) + "); using " + std::to_string(lo));
      if (!pairs.empty()) w.warning(SourceLoc{path, 0, 0}, "GPU-GPU NVLinks next to NVSwitch links ignored");
      t.nvlink.kind = NvlinkKind::kNvswitch;
      t.nvlink.links_per_gpu = lo;
      t.nvlink.link_bandwidth_bps = per_link;
    } else if (!pairs.empty()) {
      t.nvlink.kind = NvlinkKind::kPairs;
      t.nvlink.link_bandwidth_bps = per_link;
      for (const auto& [k, v] : pairs) t.nvlink.pairs.push_back({k.first, k.second, v});
    }
  }
};

}  // namespace

NodeTemplate import_nccl_topo_xml(const std::string& path, Diagnostics& warnings) {
  const XmlElement root = parse_xml(read_input_file(path), path);
  Importer im(path, warnings);
  std::string name = std::filesystem::path(path).filename().string();
  for (const char* ext : {".gz", ".xml"})
    if (name.size() > std::strlen(ext) && name.substr(name.size() - std::strlen(ext)) == ext)
      name.resize(name.size() - std::strlen(ext));
  im.t.name = name;
  im.run(root);
  return std::move(im.t);
}

}  // namespace gcsim
