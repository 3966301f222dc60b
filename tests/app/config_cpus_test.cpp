// The CPU budget the thread defaults follow: cgroup v2 and v1 quotas read
// from a planted tree, the smallest along the path, and cpu.max parsing.
#include "app/config_cpus.hpp"

#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include <gtest/gtest.h>

namespace fs = std::filesystem;
using sk::config::cpu_budget;
using sk::config::parse_cpu_max;
using sk::config::read_cpu_budget;

namespace {

class CpuTree : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("sk-cpus-" + std::to_string(::getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_ / "proc/self");
  }
  void TearDown() override { fs::remove_all(root_); }
  void write(const std::string& rel, const std::string& text) {
    fs::create_directories((root_ / rel).parent_path());
    std::ofstream(root_ / rel) << text << "\n";
  }
  std::string root() const { return root_.string(); }
  fs::path root_;
};

}  // namespace

TEST(CpuMax, ParsesQuotaAndPeriod) {
  EXPECT_EQ(parse_cpu_max("100000 100000"), 1u);
  EXPECT_EQ(parse_cpu_max("150000 100000"), 2u);  // 1.5 CPUs -> 2 threads
  EXPECT_EQ(parse_cpu_max("50000 100000"), 1u);
  EXPECT_EQ(parse_cpu_max("400000 100000"), 4u);
  EXPECT_FALSE(parse_cpu_max("max 100000"));
  EXPECT_FALSE(parse_cpu_max(""));
  EXPECT_FALSE(parse_cpu_max("garbage"));
  EXPECT_FALSE(parse_cpu_max("-5 100000"));
  EXPECT_FALSE(parse_cpu_max("100000 0"));
  EXPECT_FALSE(parse_cpu_max("12x 100000"));
}

TEST(CpuBudget, UsableIsTheSmallerOfAffinityAndQuotaAndAtLeastOne) {
  EXPECT_EQ((cpu_budget{8, std::nullopt}).usable(), 8u);
  EXPECT_EQ((cpu_budget{8, 3}).usable(), 3u);
  EXPECT_EQ((cpu_budget{2, 16}).usable(), 2u);
  EXPECT_EQ((cpu_budget{1, 0}).usable(), 1u);
}

TEST_F(CpuTree, CgroupV2QuotaOfTheProcessGroup) {
  write("proc/self/cgroup", "0::/system.slice/swarmkeeper.service");
  write("sys/fs/cgroup/system.slice/swarmkeeper.service/cpu.max", "200000 100000");
  write("sys/fs/cgroup/system.slice/cpu.max", "max 100000");
  auto b = read_cpu_budget(root());
  ASSERT_TRUE(b.quota);
  EXPECT_EQ(*b.quota, 2u);
}

TEST_F(CpuTree, CgroupV2SmallestAncestorWins) {
  write("proc/self/cgroup", "0::/a/b");
  write("sys/fs/cgroup/a/b/cpu.max", "max 100000");
  write("sys/fs/cgroup/a/cpu.max", "100000 100000");
  auto b = read_cpu_budget(root());
  ASSERT_TRUE(b.quota);
  EXPECT_EQ(*b.quota, 1u);
  EXPECT_EQ(b.usable(), 1u);
}

TEST_F(CpuTree, CgroupV2WithoutQuotaLeavesAffinity) {
  write("proc/self/cgroup", "0::/user.slice");
  write("sys/fs/cgroup/user.slice/cpu.max", "max 100000");
  auto b = read_cpu_budget(root());
  EXPECT_FALSE(b.quota);
  EXPECT_EQ(b.usable(), b.affinity);
}

TEST_F(CpuTree, CgroupV1CfsQuota) {
  write("proc/self/cgroup", "12:memory:/docker/x\n4:cpu,cpuacct:/docker/x");
  write("sys/fs/cgroup/cpu,cpuacct/docker/x/cpu.cfs_quota_us", "300000");
  write("sys/fs/cgroup/cpu,cpuacct/docker/x/cpu.cfs_period_us", "100000");
  write("sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us", "-1");
  write("sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us", "100000");
  auto b = read_cpu_budget(root());
  ASSERT_TRUE(b.quota);
  EXPECT_EQ(*b.quota, 3u);
}

TEST_F(CpuTree, MissingOrUnreadableFilesMeanNoQuota) {
  auto none = read_cpu_budget(root());  // no /proc/self/cgroup at all
  EXPECT_FALSE(none.quota);
  write("proc/self/cgroup", "0::/gone");
  EXPECT_FALSE(read_cpu_budget(root()).quota);
  write("proc/self/cgroup", "not a cgroup line");
  EXPECT_FALSE(read_cpu_budget(root()).quota);
}

TEST(CpuBudget, ThisProcessHasAtLeastOneUsableCpu) {
  auto b = read_cpu_budget();
  EXPECT_GE(b.affinity, 1u);
  EXPECT_GE(b.usable(), 1u);
  EXPECT_LE(b.usable(), b.affinity);
}
