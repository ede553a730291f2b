#ifndef STOKER_COMMON_PROCESS_LIMITS_H_
#define STOKER_COMMON_PROCESS_LIMITS_H_

// The CPUs and memory this process may use: what its container (cgroup) and CPU affinity allow,
// not what the node has. A worker in a pod limited to 2 CPUs and 4 GiB on a 64-core, 256 GB
// node sizes its thread pool and batch budget from 2 and 4 GiB.
//
// The cgroup is the one /proc/self/cgroup names, read under the cgroup file system:
//   cgroup v2: cpu.max ("QUOTA PERIOD" or "max PERIOD"), memory.max (bytes or "max");
//   cgroup v1: cpu/cpu.cfs_quota_us and cpu.cfs_period_us (quota -1: none),
//              memory/memory.limit_in_bytes (near 2^63: none).
// The tightest limit of the cgroup and its ancestors counts (Kubernetes sets the pod's and the
// container's). A missing file is no limit; a file that cannot be parsed is no limit too, with
// a warning naming it, never an error.

#include <cstdint>
#include <optional>
#include <string>

namespace stoker {

// Where the limits are read from; tests point both at a fake tree in a temporary directory.
struct LimitSources {
  // Lines "ID:CONTROLLERS:PATH": "0::PATH" is the v2 cgroup, "N:cpu,cpuacct:PATH" a v1 one.
  std::string proc_self_cgroup = "/proc/self/cgroup";
  // Where cgroup file systems are mounted: v2 at the root, v1 one folder per controller.
  std::string cgroup_root = "/sys/fs/cgroup";
};

// The cgroup's limits; unset where none is set (or none could be read).
struct CgroupLimits {
  // CPU quota over period, rounded up (a 1.5-CPU quota is 2 CPUs); >= 1.
  std::optional<uint32_t> cpus;
  // The memory limit, bytes; > 0.
  std::optional<uint64_t> memory_bytes;
  // Which hierarchy the limits came from: "cgroup v2", "cgroup v1", or "" when neither is
  // readable.
  std::string version;
};

CgroupLimits ReadCgroupLimits(const LimitSources& sources);

// What the process may use, every figure resolved.
struct ProcessLimits {
  // The CPUs of the affinity mask (sched_getaffinity), or the cgroup's CPUs when fewer; >= 1.
  uint32_t cpus = 1;
  // The machine's physical memory, or the cgroup's memory limit when lower; > 0.
  uint64_t memory_bytes = 0;
  // One line for logs: each figure and where it came from.
  std::string description;
};

ProcessLimits ReadProcessLimits(const LimitSources& sources);

// This process's limits from the real sources, read once on first use.
const ProcessLimits& OwnProcessLimits();

}  // namespace stoker

#endif  // STOKER_COMMON_PROCESS_LIMITS_H_
