#include "common/process_limits.h"

#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <limits>
#include <thread>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "common/logging.h"

namespace stoker {
namespace {

// cgroup v1 reports "no memory limit" as PAGE_COUNTER_MAX pages, just under 2^63; anything this
// large is no limit.
constexpr uint64_t kV1UnlimitedMemory = uint64_t{1} << 62;
// Physical memory assumed when sysconf cannot tell.
constexpr uint64_t kUnknownPhysicalMemory = uint64_t{2} << 30;
// Files read here are a line; a longer one is garbage.
constexpr size_t kMaxFileBytes = 64 << 10;

// The file's text without surrounding whitespace; nullopt when it cannot be read.
std::optional<std::string> ReadSmallFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::string text(kMaxFileBytes, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  return std::string(absl::StripAsciiWhitespace(text));
}

bool IsDirectory(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

void WarnUnparsable(const std::string& path, absl::string_view text) {
  STOKER_LOG(WARNING) << path << ": cannot parse '" << text.substr(0, 80) << "'; taken as no limit";
}

// A limit file's reading: nullopt is no limit (missing, unlimited, or garbage).
using LimitReader = std::optional<uint64_t> (*)(const std::string& dir);

// ceil(quota / period) when both are > 0, at least 1 and at most uint32 max.
uint64_t CpusOfQuota(uint64_t quota, uint64_t period) {
  const uint64_t cpus = quota / period + (quota % period != 0 ? 1 : 0);
  return std::clamp<uint64_t>(cpus, 1, std::numeric_limits<uint32_t>::max());
}

// cgroup v2 cpu.max: "max PERIOD" (no limit) or "QUOTA PERIOD".
std::optional<uint64_t> ReadV2Cpus(const std::string& dir) {
  const std::string path = dir + "/cpu.max";
  const std::optional<std::string> text = ReadSmallFile(path);
  if (!text.has_value()) return std::nullopt;
  const std::vector<absl::string_view> fields = absl::StrSplit(*text, ' ', absl::SkipWhitespace());
  uint64_t quota = 0;
  uint64_t period = 0;
  if (fields.size() == 2 && fields[0] == "max" && absl::SimpleAtoi(fields[1], &period) &&
      period > 0) {
    return std::nullopt;
  }
  if (fields.size() != 2 || !absl::SimpleAtoi(fields[0], &quota) ||
      !absl::SimpleAtoi(fields[1], &period) || quota == 0 || period == 0) {
    WarnUnparsable(path, *text);
    return std::nullopt;
  }
  return CpusOfQuota(quota, period);
}

// cgroup v1 cpu.cfs_quota_us (-1: no limit) over cpu.cfs_period_us.
std::optional<uint64_t> ReadV1Cpus(const std::string& dir) {
  const std::string quota_path = dir + "/cpu.cfs_quota_us";
  const std::optional<std::string> quota_text = ReadSmallFile(quota_path);
  if (!quota_text.has_value() || *quota_text == "-1") return std::nullopt;
  const std::string period_path = dir + "/cpu.cfs_period_us";
  const std::optional<std::string> period_text = ReadSmallFile(period_path);
  uint64_t quota = 0;
  uint64_t period = 0;
  if (!absl::SimpleAtoi(*quota_text, &quota) || quota == 0) {
    WarnUnparsable(quota_path, *quota_text);
    return std::nullopt;
  }
  if (!period_text.has_value() || !absl::SimpleAtoi(*period_text, &period) || period == 0) {
    WarnUnparsable(period_path, period_text.value_or("(missing)"));
    return std::nullopt;
  }
  return CpusOfQuota(quota, period);
}

// A memory limit file: bytes, or `unlimited_word` / at least `unlimited_from` for no limit.
std::optional<uint64_t> ReadMemoryFile(const std::string& path, absl::string_view unlimited_word,
                                       uint64_t unlimited_from) {
  const std::optional<std::string> text = ReadSmallFile(path);
  if (!text.has_value() || *text == unlimited_word) return std::nullopt;
  uint64_t bytes = 0;
  if (!absl::SimpleAtoi(*text, &bytes) || bytes == 0) {
    WarnUnparsable(path, *text);
    return std::nullopt;
  }
  if (bytes >= unlimited_from) return std::nullopt;
  return bytes;
}

std::optional<uint64_t> ReadV2Memory(const std::string& dir) {
  return ReadMemoryFile(dir + "/memory.max", "max", std::numeric_limits<uint64_t>::max());
}

std::optional<uint64_t> ReadV1Memory(const std::string& dir) {
  return ReadMemoryFile(dir + "/memory.limit_in_bytes", "", kV1UnlimitedMemory);
}

// The tightest limit of cgroup `path` and its ancestors under the hierarchy mounted at `base`.
// When base/path is no folder (a container's own cgroup mounted at the root, as cgroup
// namespaces and v1 container runtimes do) only base itself is read.
std::optional<uint64_t> TightestLimit(const std::string& base, std::string path, LimitReader read) {
  while (!path.empty() && path.back() == '/') path.pop_back();
  if (!IsDirectory(base + path)) path.clear();
  std::optional<uint64_t> tightest;
  while (true) {
    const std::optional<uint64_t> limit = read(base + path);
    if (limit.has_value()) tightest = std::min(tightest.value_or(*limit), *limit);
    if (path.empty()) return tightest;
    path.resize(path.rfind('/'));
  }
}

// One line of /proc/self/cgroup.
struct CgroupLine {
  std::string controllers;  // "" for v2, e.g. "cpu,cpuacct" for v1
  std::string path;
};

std::vector<CgroupLine> ReadCgroupLines(const std::string& proc_self_cgroup) {
  std::vector<CgroupLine> lines;
  const std::optional<std::string> text = ReadSmallFile(proc_self_cgroup);
  if (!text.has_value()) return lines;
  for (absl::string_view line : absl::StrSplit(*text, '\n', absl::SkipEmpty())) {
    std::vector<std::string> fields = absl::StrSplit(line, absl::MaxSplits(':', 2));
    if (fields.size() == 3 && absl::StartsWith(fields[2], "/")) {
      lines.push_back({std::move(fields[1]), std::move(fields[2])});
    }
  }
  return lines;
}

// The v1 hierarchy of `controller`: its folder under the root (the mount is named after its
// controllers, "cpu,cpuacct", usually with a "cpu" link to it) and the cgroup's path in it.
std::optional<std::pair<std::string, std::string>> V1Hierarchy(const std::vector<CgroupLine>& lines,
                                                               const std::string& root,
                                                               absl::string_view controller) {
  for (const CgroupLine& line : lines) {
    const std::vector<absl::string_view> names = absl::StrSplit(line.controllers, ',');
    if (std::find(names.begin(), names.end(), controller) == names.end()) continue;
    for (const std::string& base :
         {root + "/" + line.controllers, absl::StrCat(root, "/", controller)}) {
      if (IsDirectory(base)) return std::make_pair(base, line.path);
    }
  }
  return std::nullopt;
}

CgroupLimits ReadV1Limits(const std::vector<CgroupLine>& lines, const std::string& root) {
  CgroupLimits limits;
  const auto cpu = V1Hierarchy(lines, root, "cpu");
  const auto memory = V1Hierarchy(lines, root, "memory");
  if (!cpu.has_value() && !memory.has_value()) return limits;
  limits.version = "cgroup v1";
  if (cpu.has_value()) limits.cpus = TightestLimit(cpu->first, cpu->second, ReadV1Cpus);
  if (memory.has_value()) {
    limits.memory_bytes = TightestLimit(memory->first, memory->second, ReadV1Memory);
  }
  return limits;
}

uint32_t AffinityCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0) {
    return static_cast<uint32_t>(CPU_COUNT(&set));
  }
  return std::max(1u, std::thread::hardware_concurrency());
}

uint64_t PhysicalMemory() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page_size <= 0) return kUnknownPhysicalMemory;
  return static_cast<uint64_t>(pages) * static_cast<uint64_t>(page_size);
}

}  // namespace

CgroupLimits ReadCgroupLimits(const LimitSources& sources) {
  const std::vector<CgroupLine> lines = ReadCgroupLines(sources.proc_self_cgroup);
  // A pure v2 system mounts the unified hierarchy at the root, which then has
  // cgroup.controllers; a v1 or hybrid one mounts a folder per controller there.
  if (!ReadSmallFile(sources.cgroup_root + "/cgroup.controllers").has_value()) {
    return ReadV1Limits(lines, sources.cgroup_root);
  }
  CgroupLimits limits;
  const auto v2 = std::find_if(lines.begin(), lines.end(),
                               [](const CgroupLine& line) { return line.controllers.empty(); });
  const std::string path = v2 != lines.end() ? v2->path : "/";
  limits.version = "cgroup v2";
  limits.cpus = TightestLimit(sources.cgroup_root, path, ReadV2Cpus);
  limits.memory_bytes = TightestLimit(sources.cgroup_root, path, ReadV2Memory);
  return limits;
}

ProcessLimits ReadProcessLimits(const LimitSources& sources) {
  const CgroupLimits cgroup = ReadCgroupLimits(sources);
  const uint32_t affinity = AffinityCpus();
  const uint64_t physical = PhysicalMemory();
  ProcessLimits limits;
  limits.cpus = std::min<uint64_t>(affinity, cgroup.cpus.value_or(affinity));
  limits.memory_bytes = std::min(physical, cgroup.memory_bytes.value_or(physical));
  const std::string version = cgroup.version.empty() ? "no cgroup" : cgroup.version;
  limits.description = absl::StrCat(
      limits.cpus, " CPUs (affinity ", affinity, ", ", version, " quota ",
      cgroup.cpus.has_value() ? absl::StrCat(*cgroup.cpus) : "none", "), ", limits.memory_bytes,
      " bytes of memory (machine ", physical, ", ", version, " limit ",
      cgroup.memory_bytes.has_value() ? absl::StrCat(*cgroup.memory_bytes) : "none", ")");
  return limits;
}

const ProcessLimits& OwnProcessLimits() {
  static const ProcessLimits* const limits = new ProcessLimits(ReadProcessLimits({}));
  return *limits;
}

}  // namespace stoker
