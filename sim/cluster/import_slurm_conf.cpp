#include "sim/cluster/import_slurm_conf.hpp"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/core/hostlist.hpp"
#include "sim/core/input_file.hpp"
#include "sim/workload/slurm_time.hpp"

namespace gcsim {

namespace {

namespace fs = std::filesystem;

std::string quote(std::string_view s) { return "'" + std::string(s) + "'"; }

// --- lexing: Slurm's `Key=Value Key=Value` lines ------------------------------------------

/// One `key=value` token of a line.
struct Pair {
  std::string key;         // as written
  std::string lkey;        // lower-case (Slurm keys are case-insensitive)
  std::string value;       // quotes removed
  bool has_equals = false;
  SourceLoc key_loc;
  SourceLoc value_loc;
};

/// One logical line (continuations joined) of a config file.
struct Line {
  SourceLoc loc;  // first token
  std::vector<Pair> pairs;
};

/// Where each character of a logical line came from.
struct Joined {
  std::string text;
  std::vector<std::pair<int, int>> pos;  // (line, col) per character
};

/// Splits a config file into logical lines of pairs: `#` comments (not inside quotes,
/// `\#` is a literal), `\` at the end of a line continues it, and (when allowed)
/// `Include FILE` reads FILE, relative to the including file's directory.
class ConfLexer {
 public:
  ConfLexer(Diagnostics& diags, bool allow_include) : diags_(diags), allow_include_(allow_include) {}

  std::vector<Line> read(const std::string& path, int depth = 0) {
    std::vector<Line> out;
    const std::string text = read_input_file(path);
    const auto lines = split_lines(text);
    Joined cur;
    for (size_t i = 0; i < lines.size(); ++i) {
      const std::string_view raw = lines[i];
      const int lineno = static_cast<int>(i) + 1;
      // Strip the comment.
      std::string kept;
      std::vector<std::pair<int, int>> kept_pos;
      bool in_quote = false;
      for (size_t c = 0; c < raw.size(); ++c) {
        const char ch = raw[c];
        if (ch == '"') in_quote = !in_quote;
        if (ch == '\\' && c + 1 < raw.size() && raw[c + 1] == '#') {
          kept += '#';
          kept_pos.emplace_back(lineno, static_cast<int>(c) + 1);
          ++c;
          continue;
        }
        if (ch == '#' && !in_quote) break;
        kept += ch;
        kept_pos.emplace_back(lineno, static_cast<int>(c) + 1);
      }
      while (!kept.empty() && (kept.back() == ' ' || kept.back() == '\t' || kept.back() == '\r')) {
        kept.pop_back();
        kept_pos.pop_back();
      }
      const bool continues = !kept.empty() && kept.back() == '\\';
      if (continues) {
        kept.pop_back();
        kept_pos.pop_back();
        kept += ' ';
        kept_pos.emplace_back(lineno, static_cast<int>(kept_pos.size()) + 1);
      }
      cur.text += kept;
      cur.pos.insert(cur.pos.end(), kept_pos.begin(), kept_pos.end());
      if (continues && i + 1 < lines.size()) continue;
      tokenize(path, cur, out, depth);
      cur = Joined{};
    }
    return out;
  }

 private:
  SourceLoc at(const std::string& path, const Joined& j, size_t i) const {
    if (j.pos.empty()) return {path, 0, 0};
    const auto& p = j.pos[std::min(i, j.pos.size() - 1)];
    return {path, p.first, p.second};
  }

  void tokenize(const std::string& path, const Joined& j, std::vector<Line>& out, int depth) {
    struct Tok {
      std::string text;
      size_t start = 0;
      size_t eq = std::string::npos;  // offset of the first '=' within text
    };
    std::vector<Tok> toks;
    const std::string& s = j.text;
    size_t i = 0;
    while (i < s.size()) {
      if (s[i] == ' ' || s[i] == '\t') {
        ++i;
        continue;
      }
      Tok t;
      t.start = i;
      bool in_quote = false;
      while (i < s.size() && (in_quote || (s[i] != ' ' && s[i] != '\t'))) {
        if (s[i] == '"') {
          in_quote = !in_quote;
        } else {
          if (s[i] == '=' && t.eq == std::string::npos && !in_quote) t.eq = t.text.size();
          t.text += s[i];
        }
        ++i;
      }
      if (in_quote) {
        diags_.error(at(path, j, t.start), "unterminated quote");
        return;
      }
      toks.push_back(std::move(t));
    }
    if (toks.empty()) return;
    if (allow_include_ && toks[0].eq == std::string::npos && to_lower(toks[0].text) == "include") {
      if (toks.size() != 2) {
        diags_.error(at(path, j, toks[0].start), "expected 'Include FILE'");
        return;
      }
      fs::path inc = toks[1].text;
      if (inc.is_relative()) inc = fs::path(path).parent_path() / inc;
      const SourceLoc loc = at(path, j, toks[1].start);
      if (depth >= 8) {
        diags_.error(loc, "Include nested too deeply (a file includes itself?)");
        return;
      }
      std::error_code ec;
      if (!fs::is_regular_file(inc, ec)) {
        diags_.error(loc, "cannot open included file " + quote(inc.string()));
        return;
      }
      auto sub = read(inc.string(), depth + 1);
      out.insert(out.end(), std::make_move_iterator(sub.begin()), std::make_move_iterator(sub.end()));
      return;
    }
    Line line;
    line.loc = at(path, j, toks[0].start);
    for (const auto& t : toks) {
      Pair p;
      p.key_loc = at(path, j, t.start);
      if (t.eq == std::string::npos) {
        p.key = t.text;
      } else {
        p.key = t.text.substr(0, t.eq);
        p.value = t.text.substr(t.eq + 1);
        p.has_equals = true;
      }
      p.lkey = to_lower(p.key);
      // Column of the value: skip the key, the '=' and a leading quote.
      size_t v = t.start + p.key.size() + 1;
      if (v < s.size() && s[v] == '"') ++v;
      p.value_loc = at(path, j, v);
      if (!p.has_equals || p.key.empty()) {
        diags_.error(p.key_loc, "expected KEY=VALUE, got " + quote(t.text));
        return;  // the rest of a malformed line says nothing reliable
      }
      line.pairs.push_back(std::move(p));
    }
    if (!line.pairs.empty()) out.push_back(std::move(line));
  }

  Diagnostics& diags_;
  bool allow_include_;
};

// --- vocabularies ---------------------------------------------------------------------------

/// Cluster-wide slurm.conf keys gcsim knows: the ones policies read (kept in slurm_params)
/// and daemon plumbing that does not change scheduling (kept too, without a warning).
const std::vector<std::string> kGlobalKeys = {
    // scheduling, priority, selection, topology, limits
    "SchedulerType", "SchedulerParameters", "SchedulerTimeSlice", "SelectType", "SelectTypeParameters",
    "PriorityType", "PriorityWeightAge", "PriorityWeightAssoc", "PriorityWeightFairshare",
    "PriorityWeightJobSize", "PriorityWeightPartition", "PriorityWeightQOS", "PriorityWeightTRES",
    "PriorityMaxAge", "PriorityDecayHalfLife", "PriorityCalcPeriod", "PriorityFavorSmall", "PriorityFlags",
    "PriorityUsageResetPeriod", "PriorityParameters", "PrioritySiteFactorPlugin", "FairShareDampeningFactor",
    "TopologyPlugin", "TopologyParam", "OverTimeLimit", "GresTypes", "DefMemPerNode", "MaxMemPerCPU",
    "MaxMemPerNode", "DefCpuPerGPU", "EnforcePartLimits", "PreemptType", "PreemptMode", "PreemptExemptTime",
    "PreemptParameters", "MaxJobCount", "MinJobAge", "KillWait", "InactiveLimit", "CompleteWait", "MaxArraySize",
    "FirstJobId", "MaxJobId", "DependencyParameters", "AccountingStorageType", "AccountingStorageEnforce",
    "AccountingStorageTRES", "AccountingStorageHost", "AccountingStoragePort", "AccountingStorageUser",
    "AccountingStoragePass", "AccountingStorageParameters", "AccountingStorageExternalHost",
    "JobCompType", "JobCompLoc", "JobCompHost", "JobCompPort", "JobCompUser", "JobCompPass", "JobCompParams",
    "TaskPlugin", "TaskPluginParam", "ProctrackType", "SlurmdParameters", "SlurmctldParameters",
    "ReturnToService", "SlurmdTimeout", "SlurmctldTimeout", "MessageTimeout", "BatchStartTimeout",
    "TreeWidth", "MaxTasksPerNode", "MaxStepCount", "JobSubmitPlugins", "ResvOverRun", "DisableRootJobs",
    "RebootProgram", "ResumeProgram", "SuspendProgram", "SuspendTime", "ResumeTimeout", "SuspendTimeout",
    "ResumeRate", "SuspendRate", "SuspendExcNodes", "SuspendExcParts",
    // plumbing
    "SlurmctldHost", "ControlMachine", "ControlAddr", "BackupController", "BackupAddr", "SlurmctldPort",
    "SlurmdPort", "SlurmctldAddr", "AuthType", "AuthInfo", "AuthAltTypes", "AuthAltParameters", "CredType",
    "CryptoType", "SlurmUser", "SlurmdUser", "StateSaveLocation", "SlurmdSpoolDir", "SlurmctldPidFile",
    "SlurmdPidFile", "SlurmctldLogFile", "SlurmdLogFile", "SlurmSchedLogFile", "SlurmSchedLogLevel",
    "SlurmctldDebug", "SlurmdDebug", "SlurmctldSyslogDebug", "SlurmdSyslogDebug", "DebugFlags", "LogTimeFormat",
    "MpiDefault", "MpiParams", "SwitchType", "SwitchParameters", "JobAcctGatherType", "JobAcctGatherFrequency",
    "JobAcctGatherParams", "AcctGatherNodeFreq", "MailProg", "MailDomain", "Prolog", "Epilog", "PrologSlurmctld",
    "EpilogSlurmctld", "PrologFlags", "PrologEpilogTimeout", "TaskProlog", "TaskEpilog", "SrunProlog",
    "SrunEpilog", "HealthCheckProgram", "HealthCheckInterval", "HealthCheckNodeState", "PluginDir",
    "PlugStackConfig", "LaunchParameters", "LaunchType", "SrunPortRange", "CommunicationParameters",
    "JobCredentialPrivateKey", "JobCredentialPublicCertificate", "PropagateResourceLimits",
    "PropagateResourceLimitsExcept", "PropagatePrioProcess", "UsePAM", "WaitTime", "TmpFS",
    "UnkillableStepTimeout", "UnkillableStepProgram", "KillOnBadExit", "JobContainerType", "CoreSpecPlugin",
    "ExtSensorsType", "PowerParameters", "AcctGatherEnergyType", "AcctGatherInterconnectType",
    "AcctGatherFilesystemType", "AcctGatherProfileType", "HashPlugin", "CliFilterPlugins", "SlurmctldPrimaryOnProg",
    "SlurmctldPrimaryOffProg", "FederationParameters", "TCPTimeout", "EioTimeout",
    "GetEnvTimeout", "GroupUpdateForce", "GroupUpdateTime", "VSizeFactor", "X11Parameters", "MCSPlugin",
    "MCSParameters", "NodeFeaturesPlugins", "BurstBufferType", "RoutePlugin", "ClusterName", "DefMemPerCPU",
    "DefMemPerGPU", "KeepAliveTime", "MaxDBDMsgs", "MaxBatchRequeue", "RequeueExit", "RequeueExitHold",
    "ScronParameters", "InteractiveStepOptions", "AllowSpecResourcesUsage", "JobRequeue", "GpuFreqDef",
    "CpuFreqDef", "CpuFreqGovernors", "TrackWCKey"};

const std::vector<std::string> kNodeKeys = {"NodeName",  "NodeHostname",    "NodeAddr",       "Port",
                                            "Boards",    "SocketsPerBoard", "Sockets",        "CoresPerSocket",
                                            "ThreadsPerCore", "CPUs",      "RealMemory",     "Gres",
                                            "Weight",    "Feature",         "Features",       "State",
                                            "TmpDisk",   "Reason",          "Procs"};

/// Partition keys gcsim reads itself; every other known one goes to Partition::params.
const std::vector<std::string> kPartitionKeys = {
    "PartitionName", "Nodes", "Default", "MaxTime", "DefaultTime", "PriorityTier",
    // kept in Partition::params
    "State", "OverSubscribe", "Shared", "DefMemPerCPU", "DefMemPerGPU", "DefMemPerNode", "MaxMemPerCPU",
    "MaxMemPerNode", "MaxNodes", "MinNodes", "MaxCPUsPerNode", "MaxCPUsPerSocket", "DefCpuPerGPU",
    "PriorityJobFactor", "Priority", "TRESBillingWeights", "PreemptMode", "ExclusiveUser", "ExclusiveTopo",
    "GraceTime", "AllowAccounts", "AllowGroups", "AllowQos", "DenyAccounts", "DenyQos", "AllowAllocNodes",
    "Alternate", "Hidden", "LLN", "QOS", "ReqResv", "RootOnly", "DisableRootJobs", "OverTimeLimit",
    "SelectTypeParameters", "PowerDownOnIdle", "SuspendTime", "ResumeTimeout", "SuspendTimeout", "CpuBind",
    "MaxCPUsPerGPU"};

const std::vector<std::string> kGresKeys = {"NodeName", "Name",  "Type",  "File",      "MultipleFiles",
                                            "Cores",    "Links", "Count", "Flags",     "AutoDetect"};

const std::vector<std::string> kTopologyKeys = {"SwitchName", "Nodes", "Switches", "LinkSpeed"};

/// lower-case key -> canonical spelling.
std::map<std::string, std::string> index_of(const std::vector<std::string>& keys) {
  std::map<std::string, std::string> m;
  for (const auto& k : keys) m.emplace(to_lower(k), k);
  return m;
}

// --- values ---------------------------------------------------------------------------------

std::optional<int64_t> to_int(std::string_view s) {
  int64_t v = 0;
  const char* b = s.data();
  const char* e = s.data() + s.size();
  if (b != e && *b == '+') ++b;
  const auto [ptr, ec] = std::from_chars(b, e, v);
  if (s.empty() || ec != std::errc() || ptr != e) return std::nullopt;
  return v;
}

/// A count with Slurm's optional K/M/G/T suffix (powers of 1024), as Gres= and Count= take.
std::optional<int64_t> to_count(std::string_view s) {
  int shift = 0;
  if (!s.empty()) {
    switch (s.back()) {
      case 'k': case 'K': shift = 10; break;
      case 'm': case 'M': shift = 20; break;
      case 'g': case 'G': shift = 30; break;
      case 't': case 'T': shift = 40; break;
      default: break;
    }
  }
  if (shift) s.remove_suffix(1);
  auto v = to_int(s);
  if (!v || *v < 0) return std::nullopt;
  return *v << shift;
}

/// `0-15,32-47` -> the indexes, in order.
std::optional<std::vector<int>> to_index_list(std::string_view s) {
  std::vector<int> out;
  for (auto part : split(s, ',')) {
    const size_t dash = part.find('-');
    auto lo = to_int(part.substr(0, dash));
    auto hi = dash == std::string_view::npos ? lo : to_int(part.substr(dash + 1));
    if (!lo || !hi || *lo < 0 || *hi < *lo || *hi - *lo > 1'000'000) return std::nullopt;
    for (int64_t i = *lo; i <= *hi; ++i) out.push_back(static_cast<int>(i));
  }
  return out;
}

/// Splits at commas outside brackets: `a[1-2,4],b` -> `a[1-2,4]`, `b`.
std::vector<std::string> split_top_level(std::string_view s) {
  std::vector<std::string> out;
  std::string cur;
  int depth = 0;
  for (char c : s) {
    if (c == '[') ++depth;
    if (c == ']') --depth;
    if (c == ',' && depth == 0) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

// --- the importer ---------------------------------------------------------------------------

struct GresItem {
  std::string name, type;
  int64_t count = 0;
};

/// A node as slurm.conf describes it.
struct NodeDef {
  std::string name;
  int boards = 1, sockets = 1, cores = 1, threads = 1;  // sockets per board, cores per socket
  int64_t memory_mb = 1;
  int weight = 1;
  std::vector<std::string> features;
  std::vector<GresItem> gpus;  // Name=gpu entries of Gres=
  SourceLoc line_loc;
  SourceLoc gres_loc;
  [[nodiscard]] int total_cores() const { return boards * sockets * cores; }
};

/// One GPU of a node as gres.conf describes it.
struct GpuDev {
  std::string type;
  int first_core = -1;
  std::vector<int> links;  // Links=, empty when not given
  SourceLoc line_loc, cores_loc, links_loc;
  int last_core = -1;
};

using PairMap = std::map<std::string, Pair>;  // lkey -> pair, later pairs win

class Importer {
 public:
  Importer(std::string path, Diagnostics& diags) : path_(std::move(path)), diags_(diags) {}

  Cluster run();

 private:
  void error(const SourceLoc& loc, const std::string& msg) {
    // Values taken from a DEFAULT line are checked once per node that uses them; say it once.
    if (reported_.insert(loc.file + ":" + std::to_string(loc.line) + ":" + std::to_string(loc.col) + msg).second)
      diags_.error(loc, msg);
  }
  void warn_once(const std::string& what_key, const SourceLoc& loc, const std::string& msg) {
    if (warned_.insert(what_key).second) diags_.warning(loc, msg);
  }
  void not_modelled(const Pair& p) {
    warn_once("param:" + p.lkey, p.key_loc, "parameter " + quote(p.key) + " is not modelled by gcsim");
  }

  std::optional<int64_t> get_int(const Pair& p, int64_t min, int64_t max) {
    auto v = to_int(p.value);
    if (!v) {
      error(p.value_loc, "expected an integer for " + quote(p.key) + ", got " + quote(p.value));
      return std::nullopt;
    }
    if (*v < min || *v > max) {
      error(p.value_loc, quote(p.key) + " must be " +
                             (*v < min ? "at least " + std::to_string(min) : "at most " + std::to_string(max)) +
                             ", got " + p.value);
      return std::nullopt;
    }
    return v;
  }
  std::optional<std::vector<std::string>> get_hostlist(const Pair& p) {
    std::string err;
    auto names = hostlist::expand(p.value, &err);
    if (!names || p.value.empty()) {
      error(p.value_loc, "bad hostlist " + quote(p.value) + " for " + quote(p.key) +
                             (err.empty() ? std::string() : ": " + err));
      return std::nullopt;
    }
    return names;
  }

  void read_slurm_conf(Cluster& c);
  void global_pair(const Pair& p, Cluster& c);
  void node_line(const Line& line);
  void parse_gres(const Pair& p, NodeDef& n);
  void partition_line(const Line& line);
  void resolve_partitions(Cluster& c);
  std::optional<std::vector<int>> resolve_nodes(const Pair& p, const std::string& owner);
  void read_gres_conf();
  void gres_line(const Line& line);
  void build_nodes(Cluster& c);
  void read_topology(Cluster& c);

  std::string path_;
  std::string dir_;
  Diagnostics& diags_;
  std::set<std::string> reported_;
  std::set<std::string> warned_;
  std::set<std::string> failed_nodes_;     // names on NodeName lines with errors
  std::set<int> gres_failed_;              // nodes named by gres.conf lines with errors
  std::map<std::string, std::string> global_index_ = index_of(kGlobalKeys);
  std::map<std::string, std::string> node_index_ = index_of(kNodeKeys);
  std::map<std::string, std::string> part_index_ = index_of(kPartitionKeys);

  PairMap node_defaults_, part_defaults_;
  std::vector<NodeDef> nodes_;
  std::map<std::string, int> node_by_name_;
  struct PartDef {
    std::string name;
    PairMap kv;
    SourceLoc loc;
  };
  std::vector<PartDef> parts_;
  std::map<std::string, std::vector<int>> nodesets_;
  std::optional<SourceLoc> topology_plugin_loc_;

  // gres.conf
  bool have_gres_conf_ = false;
  bool autodetect_all_ = false;
  std::set<int> autodetect_nodes_;
  std::set<int> autodetect_off_nodes_;
  std::vector<std::vector<GpuDev>> gpu_devs_;  // per node, gres.conf order
};

Cluster Importer::run() {
  Cluster c;
  c.source = path_;
  dir_ = fs::path(path_).parent_path().string();
  read_slurm_conf(c);
  resolve_partitions(c);
  gpu_devs_.assign(nodes_.size(), {});
  read_gres_conf();
  build_nodes(c);
  read_topology(c);
  if (c.name.empty()) {
    const std::string d = fs::path(path_).parent_path().filename().string();
    c.name = d.empty() ? "slurm" : d;
  }
  return c;
}

void Importer::read_slurm_conf(Cluster& c) {
  ConfLexer lexer(diags_, true);
  const auto lines = lexer.read(path_);
  for (const auto& line : lines) {
    const std::string& first = line.pairs.front().lkey;
    if (first == "nodename") {
      node_line(line);
    } else if (first == "partitionname") {
      partition_line(line);
    } else if (first == "nodeset") {
      const Pair& name = line.pairs.front();
      std::vector<int> members;
      bool ok = true;
      for (size_t i = 1; i < line.pairs.size(); ++i) {
        const Pair& p = line.pairs[i];
        if (p.lkey == "nodes") {
          if (auto v = resolve_nodes(p, "NodeSet " + quote(name.value))) members.insert(members.end(), v->begin(), v->end());
          else ok = false;
        } else if (p.lkey == "feature" || p.lkey == "features") {
          for (size_t n = 0; n < nodes_.size(); ++n)
            for (const auto& f : nodes_[n].features)
              if (f == p.value) members.push_back(static_cast<int>(n));
        } else {
          not_modelled(p);
        }
      }
      std::sort(members.begin(), members.end());
      members.erase(std::unique(members.begin(), members.end()), members.end());
      if (ok) nodesets_[name.value] = members;
    } else if (first == "downnodes" || first == "frontendname") {
      not_modelled(line.pairs.front());
    } else {
      for (const auto& p : line.pairs) global_pair(p, c);
    }
  }
}

void Importer::global_pair(const Pair& p, Cluster& c) {
  if (p.lkey == "clustername") {
    c.name = p.value;
    return;
  }
  if (p.lkey == "defmempercpu") {
    if (auto v = get_int(p, 0, int64_t{1} << 40)) c.def_mem_per_cpu_mb = *v;
    return;
  }
  if (p.lkey == "defmempergpu") {
    if (auto v = get_int(p, 0, int64_t{1} << 40)) c.def_mem_per_gpu_mb = *v;
    return;
  }
  if (p.lkey == "topologyplugin") topology_plugin_loc_ = p.value_loc;
  auto it = global_index_.find(p.lkey);
  if (it == global_index_.end()) {
    not_modelled(p);
    c.slurm_params[p.key] = p.value;
    c.slurm_param_locs[p.key] = p.value_loc;
    return;
  }
  c.slurm_params[it->second] = p.value;
  c.slurm_param_locs[it->second] = p.value_loc;
}

void Importer::node_line(const Line& line) {
  const Pair& head = line.pairs.front();
  PairMap kv;
  const bool is_default = to_lower(head.value) == "default";
  if (!is_default) kv = node_defaults_;
  for (const auto& p : line.pairs) {
    if (!node_index_.count(p.lkey)) {
      not_modelled(p);
      continue;
    }
    kv[p.lkey] = p;
  }
  if (is_default) {
    kv.erase("nodename");
    for (auto& [k, p] : kv) node_defaults_[k] = p;
    return;
  }
  auto names = get_hostlist(head);
  if (!names) return;

  NodeDef n;
  n.line_loc = head.key_loc;
  auto find = [&](const char* k) -> const Pair* {
    auto it = kv.find(k);
    return it == kv.end() ? nullptr : &it->second;
  };
  bool ok = true;
  auto geti = [&](const char* k, int64_t min, int64_t max) -> std::optional<int64_t> {
    const Pair* p = find(k);
    if (!p) return std::nullopt;
    auto v = get_int(*p, min, max);
    if (!v) ok = false;
    return v;
  };
  const auto boards = geti("boards", 1, 64);
  const auto spb = geti("socketsperboard", 1, 64);
  const auto sockets = geti("sockets", 1, 4096);
  const auto cores = geti("corespersocket", 1, 4096);
  const auto threads = geti("threadspercore", 1, 64);
  auto cpus = geti("cpus", 1, 1'000'000);
  if (!cpus) cpus = geti("procs", 1, 1'000'000);  // the old name of CPUs
  if (auto v = geti("realmemory", 1, int64_t{1} << 40)) n.memory_mb = *v;
  if (auto v = geti("weight", 0, 2'000'000'000)) n.weight = static_cast<int>(*v);
  n.threads = threads ? static_cast<int>(*threads) : 1;
  n.boards = boards ? static_cast<int>(*boards) : 1;
  if (!spb && !sockets && !cores) {
    // No socket layout: gcsim's choice is one socket holding every core.
    n.boards = 1;
    n.sockets = 1;
    n.cores = cpus ? std::max<int>(1, static_cast<int>(*cpus) / n.threads) : 1;
  } else {
    n.cores = cores ? static_cast<int>(*cores) : 1;
    if (spb) {
      n.sockets = static_cast<int>(*spb);
    } else if (sockets) {
      if (*sockets % n.boards != 0) {
        error(find("sockets")->value_loc, "'Sockets' " + std::to_string(*sockets) + " is not a multiple of 'Boards' " +
                                              std::to_string(n.boards));
        ok = false;
      }
      n.sockets = std::max(1, static_cast<int>(*sockets) / n.boards);
    }
    const int64_t all = int64_t{n.boards} * n.sockets * n.cores * n.threads;
    if (cpus && *cpus != all && *cpus != all / n.threads) {
      const Pair* p = find("cpus") ? find("cpus") : find("procs");
      if (reported_.insert("cpus-warn" + p->value_loc.file + std::to_string(p->value_loc.line) +
                           std::to_string(p->value_loc.col)).second)
        diags_.warning(p->value_loc, "CPUs=" + p->value +
                                         " does not match Boards*SocketsPerBoard*CoresPerSocket*ThreadsPerCore (" +
                                         std::to_string(all) + "); gcsim uses " + std::to_string(all) + " as Slurm does");
    }
  }
  if (const int64_t all = int64_t{n.boards} * n.sockets * n.cores * n.threads; ok && all > kMaxNodeCpus) {
    error(head.value_loc, "node " + quote(head.value) + " has " + std::to_string(all) + " CPUs; a node has at most " +
                              std::to_string(kMaxNodeCpus) + " (Slurm counts a node's CPUs in 16 bits)");
    ok = false;
  }
  if (nodes_.size() + failed_nodes_.size() + names->size() > max_cluster_nodes()) {
    error(head.value_loc, "the cluster would have more than " + std::to_string(max_cluster_nodes()) + " nodes with the " +
                              std::to_string(names->size()) + " names of this line");
    return;
  }
  const Pair* feat = find("feature") ? find("feature") : find("features");
  if (feat)
    for (auto f : split(feat->value, ','))
      if (!trim(f).empty()) n.features.emplace_back(trim(f));
  if (const Pair* g = find("gres")) {
    n.gres_loc = g->value_loc;
    parse_gres(*g, n);
  }
  if (!ok) {
    failed_nodes_.insert(names->begin(), names->end());
    return;
  }
  for (const auto& name : *names) {
    if (auto prev = node_by_name_.find(name); prev != node_by_name_.end()) {
      error(head.value_loc, "duplicate node " + quote(name) + " (first defined at line " +
                                std::to_string(nodes_[prev->second].line_loc.line) + ")");
      return;
    }
    NodeDef copy = n;
    copy.name = name;
    node_by_name_[name] = static_cast<int>(nodes_.size());
    nodes_.push_back(std::move(copy));
  }
}

void Importer::parse_gres(const Pair& p, NodeDef& n) {
  if (to_lower(p.value) == "(null)" || p.value.empty()) return;
  for (auto raw : split(p.value, ',')) {
    std::string item(trim(raw));
    if (auto paren = item.find('('); paren != std::string::npos) item.erase(paren);  // (S:0-1) socket hint
    auto parts = split(item, ':');
    GresItem g;
    bool ok = !item.empty() && !parts.empty() && !parts[0].empty() && parts.size() <= 3;
    if (ok) {
      g.name = std::string(parts[0]);
      g.count = 1;
      if (parts.size() == 2) {
        if (auto c = to_count(parts[1])) g.count = *c;
        else g.type = std::string(parts[1]);
      } else if (parts.size() == 3) {
        g.type = std::string(parts[1]);
        auto c = to_count(parts[2]);
        if (!c) ok = false;
        else g.count = *c;
      }
    }
    if (!ok || (g.type.empty() && parts.size() == 3)) {
      error(p.value_loc, "bad Gres entry " + quote(item) + " (expected NAME[:TYPE][:COUNT], e.g. gpu:a100:4)");
      continue;
    }
    if (to_lower(g.name) != "gpu") {
      warn_once("gres:" + g.name, p.value_loc, "GRES " + quote(g.name) + " is not modelled by gcsim");
      continue;
    }
    if (g.count > 1024) {
      error(p.value_loc, "Gres count " + std::to_string(g.count) + " for " + quote(item) + " is more than 1024");
      continue;
    }
    if (g.count > 0) n.gpus.push_back(g);
  }
}

void Importer::partition_line(const Line& line) {
  const Pair& head = line.pairs.front();
  const bool is_default = to_lower(head.value) == "default";
  PairMap kv;
  if (!is_default) kv = part_defaults_;
  for (const auto& p : line.pairs) {
    if (!part_index_.count(p.lkey)) not_modelled(p);
    kv[p.lkey] = p;
  }
  if (is_default) {
    kv.erase("partitionname");
    for (auto& [k, p] : kv) part_defaults_[k] = p;
    return;
  }
  if (head.value.empty()) {
    error(head.value_loc, "empty PartitionName");
    return;
  }
  for (const auto& prev : parts_) {
    if (prev.name == head.value) {
      error(head.value_loc, "duplicate partition " + quote(head.value) + " (first defined at line " +
                                std::to_string(prev.loc.line) + ")");
      return;
    }
  }
  parts_.push_back({head.value, std::move(kv), head.key_loc});
}

std::optional<std::vector<int>> Importer::resolve_nodes(const Pair& p, const std::string& owner) {
  std::vector<int> out;
  std::string first_unknown;
  size_t unknown = 0;
  bool ok = true;
  for (const auto& item : split_top_level(p.value)) {
    if (item == "ALL") {
      for (size_t i = 0; i < nodes_.size(); ++i) out.push_back(static_cast<int>(i));
      continue;
    }
    if (auto ns = nodesets_.find(item); ns != nodesets_.end()) {
      out.insert(out.end(), ns->second.begin(), ns->second.end());
      continue;
    }
    std::string err;
    auto names = hostlist::expand(item, &err);
    if (!names || item.empty()) {
      error(p.value_loc, "bad hostlist " + quote(p.value) + " for " + quote(p.key) +
                             (err.empty() ? std::string() : ": " + err));
      ok = false;
      continue;
    }
    for (const auto& n : *names) {
      auto it = node_by_name_.find(n);
      if (it == node_by_name_.end()) {
        // A node whose line had errors was never added; do not report it twice.
        if (!failed_nodes_.count(n) && unknown++ == 0) first_unknown = n;
        continue;
      }
      out.push_back(it->second);
    }
  }
  if (unknown > 0) {
    std::string msg = owner + " names unknown node " + quote(first_unknown);
    if (unknown > 1) msg += " and " + std::to_string(unknown - 1) + " more";
    error(p.value_loc, msg);
    return std::nullopt;
  }
  if (!ok) return std::nullopt;
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

void Importer::resolve_partitions(Cluster& c) {
  std::string default_name;
  int default_line = 0;
  for (const auto& pd : parts_) {
    Partition p;
    p.name = pd.name;
    bool ok = true;
    const std::string owner = "partition " + quote(pd.name);
    for (const auto& [lkey, pair] : pd.kv) {
      if (lkey == "partitionname") continue;
      if (lkey == "nodes") {
        if (auto v = resolve_nodes(pair, owner)) p.nodes = *v;
        else ok = false;
      } else if (lkey == "default") {
        const std::string v = to_lower(pair.value);
        if (v == "yes") {
          p.is_default = true;
        } else if (v != "no") {
          error(pair.value_loc, "expected YES or NO for 'Default', got " + quote(pair.value));
        }
      } else if (lkey == "maxtime" || lkey == "defaulttime") {
        auto t = slurm_time::parse_time_limit(pair.value);
        if (!t) {
          error(pair.value_loc, "bad time " + quote(pair.value) + " for " + quote(pair.key) +
                                    " (expected e.g. 30, 1:00:00, 2-00:00:00, UNLIMITED)");
          ok = false;
        } else if (lkey == "maxtime") {
          p.max_time = *t;
        } else {
          p.default_time = *t;
        }
      } else if (lkey == "prioritytier") {
        if (auto v = get_int(pair, 0, 65533)) p.priority_tier = static_cast<int>(*v);
        else ok = false;
      } else if (lkey == "maxnodes" || lkey == "minnodes" || lkey == "defmempercpu" || lkey == "defmempergpu" ||
                 lkey == "defmempernode" || lkey == "maxmempercpu" || lkey == "maxmempernode" ||
                 lkey == "priorityjobfactor" || lkey == "defcpupergpu") {
        // Numbers the policies read: check them here so a typo fails at load time.
        if (to_lower(pair.value) != "unlimited" && to_lower(pair.value) != "infinite") {
          if (!get_int(pair, 0, int64_t{1} << 40)) ok = false;
        }
        auto it = part_index_.find(lkey);
        p.params[it->second] = pair.value;
      } else {
        auto it = part_index_.find(lkey);
        p.params[it == part_index_.end() ? pair.key : it->second] = pair.value;
      }
    }
    if (!ok) continue;
    if (p.is_default) {
      if (!default_name.empty()) {
        diags_.warning(pd.kv.at("default").value_loc,
                       "partition " + quote(p.name) + " replaces " + quote(default_name) + " (line " +
                           std::to_string(default_line) + ") as the default partition, as Slurm does");
        for (auto& other : c.partitions) other.is_default = false;
      }
      default_name = p.name;
      default_line = pd.loc.line;
    }
    c.partitions.push_back(std::move(p));
  }
}

void Importer::read_gres_conf() {
  const fs::path gres = fs::path(dir_) / "gres.conf";
  std::error_code ec;
  if (!fs::is_regular_file(gres, ec)) return;
  have_gres_conf_ = true;
  ConfLexer lexer(diags_, true);
  const std::string gpath = dir_.empty() ? std::string("gres.conf") : gres.string();
  for (const auto& line : lexer.read(gpath)) gres_line(line);
}

void Importer::gres_line(const Line& line) {
  static const auto index = index_of(kGresKeys);
  PairMap kv;
  for (const auto& p : line.pairs) {
    if (!index.count(p.lkey)) {
      not_modelled(p);
      continue;
    }
    kv[p.lkey] = p;
  }
  auto find = [&](const char* k) -> const Pair* {
    auto it = kv.find(k);
    return it == kv.end() ? nullptr : &it->second;
  };
  // Which nodes the line is for.
  std::vector<int> targets;
  // After an error in the line its nodes' GPU counts are not checked: that would only
  // repeat the error.
  auto fail = [&] { gres_failed_.insert(targets.begin(), targets.end()); };
  bool explicit_nodes = false;
  if (const Pair* p = find("nodename")) {
    explicit_nodes = true;
    auto names = get_hostlist(*p);
    if (!names) return;
    std::string first_unknown;
    size_t unknown = 0;
    for (const auto& n : *names) {
      auto it = node_by_name_.find(n);
      if (it == node_by_name_.end()) {
        if (unknown++ == 0) first_unknown = n;
      } else {
        targets.push_back(it->second);
      }
    }
    if (unknown > 0) {
      error(p->value_loc, "gres.conf names node " + quote(first_unknown) + " that slurm.conf lacks" +
                              (unknown > 1 ? " (and " + std::to_string(unknown - 1) + " more)" : std::string()));
      return fail();
    }
  } else {
    for (size_t i = 0; i < nodes_.size(); ++i) targets.push_back(static_cast<int>(i));
  }
  if (const Pair* p = find("autodetect")) {
    const std::string v = to_lower(p->value);
    if (v == "off") {
      if (explicit_nodes) autodetect_off_nodes_.insert(targets.begin(), targets.end());
      else autodetect_all_ = false;
    } else if (v == "nvml" || v == "nvidia" || v == "rsmi" || v == "oneapi" || v == "nrt" || v == "full") {
      warn_once("autodetect", p->key_loc,
                "AutoDetect=" + p->value + ": gcsim cannot query the GPU driver; GPUs come from the Gres= counts "
                "in slurm.conf, without CPU or NVLink affinity");
      if (explicit_nodes) autodetect_nodes_.insert(targets.begin(), targets.end());
      else autodetect_all_ = true;
    } else {
      error(p->value_loc, "unknown AutoDetect " + quote(p->value) +
                              " (expected nvml, nvidia, rsmi, oneapi, nrt, full or off)");
    }
  }
  const Pair* name = find("name");
  if (!name) {
    if (!find("autodetect")) {
      error(line.loc, "missing Name= in gres.conf line");
      fail();
    }
    return;
  }
  if (to_lower(name->value) != "gpu") {
    warn_once("gres:" + name->value, name->value_loc, "GRES " + quote(name->value) + " is not modelled by gcsim");
    return;
  }
  GpuDev dev;
  dev.line_loc = line.loc;
  if (const Pair* t = find("type")) dev.type = t->value;
  int64_t ndev = 1;
  bool have_file = false;
  if (const Pair* f = find("file")) {
    std::string err;
    auto files = hostlist::expand(f->value, &err);
    if (!files || f->value.empty()) {
      error(f->value_loc, "bad device file list " + quote(f->value) + " for 'File'" +
                              (err.empty() ? std::string() : ": " + err));
      return fail();
    }
    ndev = static_cast<int64_t>(files->size());
    have_file = true;
  } else if (find("multiplefiles")) {
    ndev = 1;  // one MIG-capable GPU behind several device files
    have_file = true;
  }
  if (const Pair* c = find("count")) {
    auto v = to_count(c->value);
    if (!v) {
      error(c->value_loc, "expected a count for 'Count', got " + quote(c->value));
      return fail();
    }
    if (have_file && *v != ndev) {
      error(c->value_loc, "'Count' " + c->value + " does not match the " + std::to_string(ndev) +
                              " device file" + (ndev == 1 ? "" : "s") + " of 'File'");
      return fail();
    }
    if (*v > 1024) {
      error(c->value_loc, "'Count' " + c->value + " is more than 1024 GPUs");
      return fail();
    }
    ndev = *v;
  }
  if (const Pair* c = find("cores")) {
    auto cores = to_index_list(c->value);
    if (!cores || cores->empty()) {
      error(c->value_loc, "bad core list " + quote(c->value) + " for 'Cores' (expected e.g. 0-15,32-47)");
      return fail();
    }
    dev.first_core = *std::min_element(cores->begin(), cores->end());
    dev.last_core = *std::max_element(cores->begin(), cores->end());
    dev.cores_loc = c->value_loc;
  }
  if (const Pair* l = find("links")) {
    if (ndev != 1) {
      error(l->key_loc, "'Links' needs a line with a single device, this one has " + std::to_string(ndev));
      return fail();
    }
    for (auto part : split(l->value, ',')) {
      auto v = to_int(trim(part));
      if (!v || *v < -1 || *v > 1024) {
        error(l->value_loc, "bad 'Links' list " + quote(l->value) + " (expected link counts, -1 for the device itself)");
        return fail();
      }
      dev.links.push_back(static_cast<int>(*v));
    }
    dev.links_loc = l->value_loc;
  }
  for (int n : targets) {
    // A line without NodeName is for every node; only those whose Gres= has its type take it.
    if (!explicit_nodes) {
      bool has = false;
      for (const auto& g : nodes_[n].gpus) has = has || g.type == dev.type;
      if (!has) continue;
    }
    for (int64_t i = 0; i < ndev; ++i) gpu_devs_[n].push_back(dev);
  }
}

void Importer::build_nodes(Cluster& c) {
  // Per node: the GPU list (gres.conf order, then Gres= counts that gres.conf does not
  // describe), checked against the Gres= counts of slurm.conf.
  struct Mismatch {
    SourceLoc loc;
    std::string first_node;
    size_t more = 0;
  };
  // One error per message, for the first node it concerns, in the order found.
  std::vector<std::pair<std::string, Mismatch>> mismatches;
  std::map<std::string, size_t> mismatch_index;
  auto mismatch = [&](const SourceLoc& loc, const std::string& msg, const std::string& node) {
    auto [it, fresh] = mismatch_index.try_emplace(msg, mismatches.size());
    if (fresh) mismatches.push_back({msg, Mismatch{loc, node, 0}});
    else ++mismatches[it->second].second.more;
  };
  std::map<std::string, int> template_of;  // layout key -> template index
  std::vector<std::vector<std::string>> template_nodes;
  for (size_t ni = 0; ni < nodes_.size(); ++ni) {
    const NodeDef& nd = nodes_[ni];
    const auto& devs = gpu_devs_[ni];
    const bool autodetect = (autodetect_all_ || autodetect_nodes_.count(static_cast<int>(ni))) &&
                            !autodetect_off_nodes_.count(static_cast<int>(ni));
    NodeTemplate t;
    t.boards = nd.boards;
    t.sockets = nd.sockets;
    // Slurm knows no NUMA domains besides sockets: one NUMA domain per socket. Cores= may
    // name ranges finer than a socket (numa_node_as_socket sites); a GPU's NUMA domain is
    // then still the socket that holds its first core.
    t.numa_per_socket = 1;
    t.cores_per_numa = nd.cores;
    t.threads_per_core = nd.threads;
    t.memory_mb = nd.memory_mb;
    std::map<std::string, int64_t> conf_count, gres_count;
    for (const auto& g : nd.gpus) conf_count[g.type] += g.count;
    std::map<std::string, SourceLoc> gres_first;
    for (const auto& d : devs) {
      if (gres_count[d.type]++ == 0) gres_first[d.type] = d.line_loc;
    }
    bool ok = !gres_failed_.count(static_cast<int>(ni));
    for (const auto& [type, n] : gres_count) {
      if (!ok) break;
      const int64_t want = conf_count.count(type) ? conf_count[type] : 0;
      if (n != want) {
        const std::string what = type.empty() ? "gpu" : "gpu:" + type;
        mismatch(gres_first[type],
                 "gres.conf describes " + std::to_string(n) + " " + what + " device" + (n == 1 ? "" : "s") +
                     " for node %s but slurm.conf gives it " + (want == 0 ? std::string("none") : std::to_string(want)) +
                     " (" + fs::path(nd.line_loc.file).filename().string() + " line " +
                     std::to_string(nd.gres_loc.line > 0 ? nd.gres_loc.line : nd.line_loc.line) + ")",
                 nd.name);
        ok = false;
      }
    }
    for (const auto& [type, n] : conf_count) {
      if (!ok || gres_count.count(type) || autodetect || !have_gres_conf_) continue;
      mismatch(nd.gres_loc,
               "Gres=gpu" + (type.empty() ? std::string() : ":" + type) + ":" + std::to_string(n) +
                   " of node %s has no Name=gpu" + (type.empty() ? std::string() : " Type=" + type) +
                   " line in gres.conf",
               nd.name);
      ok = false;
    }
    if (!ok) continue;
    const int ncores = nd.total_cores();
    for (const auto& d : devs) {
      GpuSpec g;
      g.gres_type = d.type;
      if (d.first_core >= 0) {
        if (d.last_core >= ncores) {
          mismatch(d.cores_loc,
                   "core " + std::to_string(d.last_core) + " in 'Cores' is out of range for node %s (" +
                       std::to_string(ncores) + " cores: 0-" + std::to_string(ncores - 1) + ")",
                   nd.name);
          ok = false;
          break;
        }
        g.numa = t.socket_of_core(d.first_core);
      }
      t.gpus.push_back(g);
    }
    if (!ok) continue;
    for (const auto& [type, n] : conf_count) {
      if (gres_count.count(type)) continue;
      GpuSpec g;
      g.gres_type = type;
      for (int64_t i = 0; i < n; ++i) t.gpus.push_back(g);
    }
    // NVLink pairs from Links= (device order = the node's gres.conf order).
    const int ngpu = static_cast<int>(devs.size());
    std::vector<std::vector<int>> m(ngpu, std::vector<int>(ngpu, 0));
    bool any_links = false;
    for (int i = 0; i < ngpu; ++i) {
      const auto& l = devs[i].links;
      if (l.empty()) continue;
      if (static_cast<int>(l.size()) != ngpu) {
        mismatch(devs[i].links_loc,
                 "'Links' lists " + std::to_string(l.size()) + " devices but node %s has " + std::to_string(ngpu) +
                     " GPUs in gres.conf",
                 nd.name);
        ok = false;
        break;
      }
      any_links = true;
      for (int j = 0; j < ngpu; ++j) m[i][j] = l[j];
    }
    if (!ok) continue;
    if (any_links) {
      t.nvlink.kind = NvlinkKind::kPairs;  // Slurm gives link counts only; bandwidth unknown (0)
      for (int i = 0; i < ngpu; ++i)
        for (int j = i + 1; j < ngpu; ++j) {
          const int links = std::max(m[i][j], m[j][i]);
          if (links > 0) t.nvlink.pairs.push_back({i, j, links});
        }
      if (t.nvlink.pairs.empty()) t.nvlink.kind = NvlinkKind::kNone;
    }
    // Layout key: everything that makes two nodes' hardware differ.
    std::string key = std::to_string(t.boards) + "/" + std::to_string(t.sockets) + "/" +
                      std::to_string(t.cores_per_numa) + "/" + std::to_string(t.threads_per_core) + "/" +
                      std::to_string(t.memory_mb) + "|";
    for (const auto& g : t.gpus) key += g.gres_type + "@" + std::to_string(g.numa) + ";";
    key += "|";
    for (const auto& p : t.nvlink.pairs)
      key += std::to_string(p.a) + "-" + std::to_string(p.b) + "x" + std::to_string(p.links) + ";";
    auto [it, fresh] = template_of.try_emplace(key, static_cast<int>(c.templates.size()));
    if (fresh) {
      c.templates.push_back(std::move(t));
      template_nodes.emplace_back();
    }
    template_nodes[it->second].push_back(nd.name);
    Node node;
    node.name = nd.name;
    node.template_index = it->second;
    node.weight = nd.weight;
    node.features = nd.features;
    c.nodes.push_back(std::move(node));
  }
  for (const auto& [msg, mm] : mismatches) {
    std::string text = msg;
    std::string who = quote(mm.first_node);
    if (mm.more > 0) who += " (and " + std::to_string(mm.more) + " more node" + (mm.more == 1 ? "" : "s") + ")";
    text.replace(text.find("%s"), 2, who);
    error(mm.loc, text);
  }
  for (size_t i = 0; i < c.templates.size(); ++i) c.templates[i].name = hostlist::compress(template_nodes[i]);
  c.index();
  // Partition node indexes were resolved against slurm.conf's node order; keep only
  // the nodes that were built (all of them unless there were errors).
  if (c.nodes.size() != nodes_.size()) {
    c.partitions.clear();
    return;
  }
  for (size_t pi = 0; pi < c.partitions.size(); ++pi)
    for (int n : c.partitions[pi].nodes) c.nodes[n].partitions.push_back(static_cast<int>(pi));
}

void Importer::read_topology(Cluster& c) {
  auto it = c.slurm_params.find("TopologyPlugin");
  if (it == c.slurm_params.end()) return;
  const std::string plugin = to_lower(it->second);
  if (plugin == "topology/none" || plugin == "topology/default" || plugin == "topology/flat") return;
  if (plugin != "topology/tree") {
    diags_.warning(*topology_plugin_loc_, "TopologyPlugin " + quote(it->second) +
                                              " is not modelled by gcsim; the network is left flat");
    return;
  }
  const fs::path topo = fs::path(dir_) / "topology.conf";
  std::error_code ec;
  if (!fs::is_regular_file(topo, ec)) {
    error(*topology_plugin_loc_, "TopologyPlugin=topology/tree but there is no " + quote(topo.string()));
    return;
  }
  static const auto index = index_of(kTopologyKeys);
  ConfLexer lexer(diags_, true);
  NetworkSpec& net = c.network;
  net.kind = NetworkSpec::Kind::kTree;
  std::map<std::string, int> switch_line;
  std::vector<std::pair<std::string, SourceLoc>> child_refs;
  std::map<int, std::string> leaf_of;
  for (const auto& line : lexer.read(topo.string())) {
    const Pair& head = line.pairs.front();
    if (head.lkey != "switchname") {
      not_modelled(head);
      continue;
    }
    NetworkSpec::Switch s;
    s.name = head.value;
    if (s.name.empty()) {
      error(head.value_loc, "empty SwitchName");
      continue;
    }
    if (auto prev = switch_line.find(s.name); prev != switch_line.end()) {
      error(head.value_loc, "duplicate switch " + quote(s.name) + " (first defined at line " +
                                std::to_string(prev->second) + ")");
      continue;
    }
    switch_line[s.name] = head.value_loc.line;
    const Pair* nodes = nullptr;
    const Pair* children = nullptr;
    for (size_t i = 1; i < line.pairs.size(); ++i) {
      const Pair& p = line.pairs[i];
      if (!index.count(p.lkey)) not_modelled(p);
      if (p.lkey == "nodes") nodes = &p;
      if (p.lkey == "switches") children = &p;
    }
    if (nodes && children) {
      error(children->key_loc, "switch " + quote(s.name) + " has both 'Nodes' and 'Switches'");
    } else if (!nodes && !children) {
      error(head.key_loc, "switch " + quote(s.name) + " has neither 'Nodes' nor 'Switches'");
    } else if (nodes) {
      if (auto names = get_hostlist(*nodes)) {
        std::string first_unknown;
        size_t unknown = 0;
        bool reported_dup = false;
        for (const auto& n : *names) {
          const int idx = c.find_node(n);
          if (idx < 0) {
            if (unknown++ == 0) first_unknown = n;
            continue;
          }
          auto [prev, fresh] = leaf_of.emplace(idx, s.name);
          if (!fresh) {
            // The first such node is enough to say; the others stay with their first switch.
            if (!reported_dup) error(nodes->value_loc, "node " + quote(n) + " is already under switch " + quote(prev->second));
            reported_dup = true;
            continue;
          }
          s.nodes.push_back(idx);
        }
        if (unknown > 0)
          diags_.warning(nodes->value_loc,
                         "switch " + quote(s.name) + " names node " + quote(first_unknown) +
                             (unknown > 1 ? " and " + std::to_string(unknown - 1) + " more" : std::string()) +
                             " that slurm.conf lacks; left out, as Slurm does");
        std::sort(s.nodes.begin(), s.nodes.end());
      }
    } else if (auto names = get_hostlist(*children)) {
      s.children = *names;
      for (const auto& ch : s.children) child_refs.emplace_back(ch, children->value_loc);
    }
    net.switches.push_back(std::move(s));
  }
  for (const auto& [name, loc] : child_refs)
    if (!switch_line.count(name)) error(loc, "unknown switch " + quote(name));
  std::vector<std::string> loose;
  for (size_t n = 0; n < c.nodes.size(); ++n)
    if (!leaf_of.count(static_cast<int>(n))) loose.push_back(c.nodes[n].name);
  if (!loose.empty())
    diags_.warning({topo.string(), 0, 0}, std::to_string(loose.size()) + " node" + (loose.size() == 1 ? " is" : "s are") +
                                             " under no switch: " + hostlist::compress(loose));
}

}  // namespace

Cluster load_slurm_conf(const std::string& slurm_conf_path, Diagnostics& warnings) {
  Diagnostics diags;
  Importer importer(slurm_conf_path, diags);
  Cluster c = importer.run();
  diags.throw_if_errors();
  warnings.append(diags);
  return c;
}

}  // namespace gcsim
