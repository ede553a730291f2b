#include "common/process_limits.h"

#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stoker {
namespace {

using ::testing::HasSubstr;
using ::testing::Optional;

constexpr uint64_t kGiB = uint64_t{1} << 30;

// A fake /proc/self/cgroup and cgroup file system in a temporary directory.
class ProcessLimitsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/process_limits_test.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    sources_.proc_self_cgroup = dir_ + "/proc_self_cgroup";
    sources_.cgroup_root = dir_ + "/cgroup";
    MakeDirs("cgroup");
  }
  void TearDown() override { ASSERT_EQ(std::system(("rm -rf " + dir_).c_str()), 0); }

  // Creates dir_/relative and its parents.
  void MakeDirs(const std::string& relative) {
    std::string path = dir_;
    for (size_t start = 0; start < relative.size();) {
      size_t end = relative.find('/', start);
      if (end == std::string::npos) end = relative.size();
      path += "/" + relative.substr(start, end - start);
      mkdir(path.c_str(), 0755);
      start = end + 1;
    }
  }
  // Writes dir_/relative, making its folder.
  void Write(const std::string& relative, const std::string& text) {
    const size_t slash = relative.rfind('/');
    if (slash != std::string::npos) MakeDirs(relative.substr(0, slash));
    std::ofstream(dir_ + "/" + relative) << text;
  }
  // A pure cgroup v2 system with the process in /kubepods/pod1/ctr.
  void V2() {
    Write("proc_self_cgroup", "0::/kubepods/pod1/ctr\n");
    Write("cgroup/cgroup.controllers", "cpuset cpu io memory pids\n");
    MakeDirs("cgroup/kubepods/pod1/ctr");
  }
  // A v1 (hybrid) system: cpu and memory hierarchies, the process in /docker/abc.
  void V1() {
    Write("proc_self_cgroup",
          "12:memory:/docker/abc\n4:cpu,cpuacct:/docker/abc\n1:name=systemd:/docker/abc\n0::/\n");
    MakeDirs("cgroup/cpu,cpuacct/docker/abc");
    MakeDirs("cgroup/memory/docker/abc");
  }

  std::string dir_;
  LimitSources sources_;
};

TEST_F(ProcessLimitsTest, V2QuotaIsRoundedUp) {
  V2();
  Write("cgroup/kubepods/pod1/ctr/cpu.max", "150000 100000\n");
  EXPECT_THAT(ReadCgroupLimits(sources_).cpus, Optional(2u));
  Write("cgroup/kubepods/pod1/ctr/cpu.max", "200000 100000\n");
  EXPECT_THAT(ReadCgroupLimits(sources_).cpus, Optional(2u));
  Write("cgroup/kubepods/pod1/ctr/cpu.max", "10000 100000\n");  // A tenth of a CPU is one.
  EXPECT_THAT(ReadCgroupLimits(sources_).cpus, Optional(1u));
  EXPECT_EQ(ReadCgroupLimits(sources_).version, "cgroup v2");
}

TEST_F(ProcessLimitsTest, V2MaxIsNoLimit) {
  V2();
  Write("cgroup/kubepods/pod1/ctr/cpu.max", "max 100000\n");
  Write("cgroup/kubepods/pod1/ctr/memory.max", "max\n");
  const CgroupLimits limits = ReadCgroupLimits(sources_);
  EXPECT_EQ(limits.cpus, std::nullopt);
  EXPECT_EQ(limits.memory_bytes, std::nullopt);
}

TEST_F(ProcessLimitsTest, V2MemoryLimitIsRead) {
  V2();
  Write("cgroup/kubepods/pod1/ctr/memory.max", "1073741824\n");
  EXPECT_THAT(ReadCgroupLimits(sources_).memory_bytes, Optional(kGiB));
}

TEST_F(ProcessLimitsTest, TightestOfTheCgroupAndItsAncestors) {
  V2();
  Write("cgroup/kubepods/pod1/cpu.max", "300000 100000\n");  // The pod's limit.
  Write("cgroup/kubepods/pod1/ctr/cpu.max", "max 100000\n");
  Write("cgroup/kubepods/memory.max", "1073741824\n");
  Write("cgroup/kubepods/pod1/ctr/memory.max", "4294967296\n");
  const CgroupLimits limits = ReadCgroupLimits(sources_);
  EXPECT_THAT(limits.cpus, Optional(3u));
  EXPECT_THAT(limits.memory_bytes, Optional(kGiB));
}

TEST_F(ProcessLimitsTest, OwnCgroupMountedAtTheRoot) {
  // A cgroup namespace: /proc/self/cgroup names a path the mount does not have; the root's
  // files are the container's own.
  V2();
  Write("proc_self_cgroup", "0::/not/visible/here\n");
  Write("cgroup/cpu.max", "100000 100000\n");
  EXPECT_THAT(ReadCgroupLimits(sources_).cpus, Optional(1u));
}

TEST_F(ProcessLimitsTest, MissingFilesAreNoLimit) {
  V2();
  CgroupLimits limits = ReadCgroupLimits(sources_);
  EXPECT_EQ(limits.cpus, std::nullopt);
  EXPECT_EQ(limits.memory_bytes, std::nullopt);
  // Nothing at all: no /proc/self/cgroup, no cgroup file system.
  sources_.proc_self_cgroup = dir_ + "/absent";
  sources_.cgroup_root = dir_ + "/absent-root";
  limits = ReadCgroupLimits(sources_);
  EXPECT_EQ(limits.cpus, std::nullopt);
  EXPECT_EQ(limits.memory_bytes, std::nullopt);
  EXPECT_EQ(limits.version, "");
}

TEST_F(ProcessLimitsTest, GarbageIsNoLimit) {
  V2();
  for (const char* garbage : {"", "lots", "0 100000", "100000 0", "-5 100000", "1 2 3", "100000 x",
                              "max", "99999999999999999999999 1"}) {
    Write("cgroup/kubepods/pod1/ctr/cpu.max", garbage);
    EXPECT_EQ(ReadCgroupLimits(sources_).cpus, std::nullopt) << "cpu.max '" << garbage << "'";
  }
  for (const char* garbage : {"", "lots", "0", "-1", "1e9", "12 34"}) {
    Write("cgroup/kubepods/pod1/ctr/memory.max", garbage);
    EXPECT_EQ(ReadCgroupLimits(sources_).memory_bytes, std::nullopt)
        << "memory.max '" << garbage << "'";
  }
  Write("proc_self_cgroup", "garbage without colons\n::\n");
  EXPECT_EQ(ReadCgroupLimits(sources_).cpus, std::nullopt);
}

TEST_F(ProcessLimitsTest, V1QuotaAndMemory) {
  V1();
  Write("cgroup/cpu,cpuacct/docker/abc/cpu.cfs_quota_us", "150000\n");
  Write("cgroup/cpu,cpuacct/docker/abc/cpu.cfs_period_us", "100000\n");
  Write("cgroup/memory/docker/abc/memory.limit_in_bytes", "1073741824\n");
  const CgroupLimits limits = ReadCgroupLimits(sources_);
  EXPECT_EQ(limits.version, "cgroup v1");
  EXPECT_THAT(limits.cpus, Optional(2u));
  EXPECT_THAT(limits.memory_bytes, Optional(kGiB));
}

TEST_F(ProcessLimitsTest, V1UnlimitedAndGarbage) {
  V1();
  Write("cgroup/cpu,cpuacct/docker/abc/cpu.cfs_quota_us", "-1\n");
  Write("cgroup/cpu,cpuacct/docker/abc/cpu.cfs_period_us", "100000\n");
  Write("cgroup/memory/docker/abc/memory.limit_in_bytes", "9223372036854771712\n");
  CgroupLimits limits = ReadCgroupLimits(sources_);
  EXPECT_EQ(limits.cpus, std::nullopt);
  EXPECT_EQ(limits.memory_bytes, std::nullopt);
  Write("cgroup/cpu,cpuacct/docker/abc/cpu.cfs_quota_us", "200000\n");
  Write("cgroup/cpu,cpuacct/docker/abc/cpu.cfs_period_us", "zero\n");
  Write("cgroup/memory/docker/abc/memory.limit_in_bytes", "a lot\n");
  limits = ReadCgroupLimits(sources_);
  EXPECT_EQ(limits.cpus, std::nullopt);
  EXPECT_EQ(limits.memory_bytes, std::nullopt);
}

TEST_F(ProcessLimitsTest, V1ControllerFolderNamedAlone) {
  // Hosts that mount each v1 controller on its own ("cpu", "memory").
  Write("proc_self_cgroup", "2:cpu:/\n4:memory:/\n");
  Write("cgroup/cpu/cpu.cfs_quota_us", "100000\n");
  Write("cgroup/cpu/cpu.cfs_period_us", "100000\n");
  EXPECT_THAT(ReadCgroupLimits(sources_).cpus, Optional(1u));
}

TEST_F(ProcessLimitsTest, ProcessLimitsTakeTheSmallerFigure) {
  V2();
  Write("cgroup/kubepods/pod1/ctr/cpu.max", "100000 100000\n");
  Write("cgroup/kubepods/pod1/ctr/memory.max", "1073741824\n");
  ProcessLimits limits = ReadProcessLimits(sources_);
  EXPECT_EQ(limits.cpus, 1u);  // The affinity mask has at least one CPU.
  EXPECT_EQ(limits.memory_bytes, kGiB);
  EXPECT_THAT(limits.description, HasSubstr("cgroup v2 quota 1"));
  // A quota above the affinity mask's CPUs, a limit above the machine's memory: theirs.
  Write("cgroup/kubepods/pod1/ctr/cpu.max", "100000000 1000\n");
  Write("cgroup/kubepods/pod1/ctr/memory.max", "1152921504606846976\n");  // 2^60
  limits = ReadProcessLimits(sources_);
  EXPECT_LT(limits.cpus, 100000u);
  EXPECT_GE(limits.cpus, 1u);
  EXPECT_LT(limits.memory_bytes, uint64_t{1} << 60);
  EXPECT_GT(limits.memory_bytes, 0u);
}

TEST_F(ProcessLimitsTest, OwnLimitsAreResolved) {
  EXPECT_GE(OwnProcessLimits().cpus, 1u);
  EXPECT_GT(OwnProcessLimits().memory_bytes, 0u);
}

}  // namespace
}  // namespace stoker
