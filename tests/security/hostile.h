// The hostile user's playground for the security tests: a tree with a root-only directory holding
// a root-owned 0600 file (what an attacker wants truncated, chowned or read), and a directory the
// "user" (uid 65534, nobody) owns, where it plants links; a snapshot of a file (content, mode,
// owner, mtime, inode, links) to assert that nothing touched it; and the capabilities a hostile
// parent can leave root.
#pragma once

#include <linux/capability.h>
#include <linux/securebits.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "base/ignore_result.h"

namespace oaprof::security {

inline constexpr uid_t kUser = 65534;  // the invoking user under sudo
inline constexpr gid_t kUserGroup = 65534;

struct FileState {
  std::string content;
  mode_t mode = 0;
  uid_t uid = 0;
  gid_t gid = 0;
  timespec mtime{};
  ino_t ino = 0;
  nlink_t links = 0;
};

inline FileState file_state(const std::filesystem::path& p) {
  FileState s;
  struct stat st {};
  if (::lstat(p.c_str(), &st) != 0) return s;
  std::ifstream in(p, std::ios::binary);
  s.content.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  s.mode = st.st_mode;
  s.uid = st.st_uid;
  s.gid = st.st_gid;
  s.mtime = st.st_mtim;
  s.ino = st.st_ino;
  s.links = st.st_nlink;
  return s;
}

inline void expect_untouched(const std::filesystem::path& p, const FileState& before) {
  const FileState now = file_state(p);
  EXPECT_EQ(now.content, before.content) << p << ": content changed";
  EXPECT_EQ(now.mode, before.mode) << p << ": mode changed";
  EXPECT_EQ(now.uid, before.uid) << p << ": owner changed";
  EXPECT_EQ(now.gid, before.gid) << p << ": group changed";
  EXPECT_EQ(now.mtime.tv_sec, before.mtime.tv_sec) << p << ": mtime changed";
  EXPECT_EQ(now.mtime.tv_nsec, before.mtime.tv_nsec) << p << ": mtime changed";
  EXPECT_EQ(now.ino, before.ino) << p << ": replaced";
  EXPECT_EQ(now.links, before.links) << p << ": link count changed";
}

// What a hostile parent can leave a root process: every permitted capability inheritable too,
// and SECBIT_NO_SETUID_FIXUP, under which setuid keeps every capability. System calls only (for a
// child after fork). Returns 0, or 90/91 when capget/capset failed and 92 when securebits could
// not be set (a test then skips).
inline int keep_capabilities_across_setuid() {
  __user_cap_header_struct h{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct d[2] = {};
  if (::syscall(SYS_capget, &h, d) != 0) return 90;
  d[0].inheritable = d[0].permitted;
  d[1].inheritable = d[1].permitted;
  if (::syscall(SYS_capset, &h, d) != 0) return 91;
  if (::prctl(PR_SET_SECUREBITS, SECBIT_NO_SETUID_FIXUP, 0, 0, 0) != 0) return 92;
  return 0;
}

// root/                 0755 root, the scratch directory (under /tmp: short socket paths)
//   rootonly/           0755 root
//     target            0600 root, "root's secret\n"
//   work/               0755 the user's: where the user plants links and writes its outputs
class HostileTree {
 public:
  HostileTree() {
    std::string tmpl = "/tmp/oasec-XXXXXX";
    root_ = ::mkdtemp(tmpl.data());
    ::chmod(root_.c_str(), 0755);
    std::filesystem::create_directory(rootonly());
    ::chmod(rootonly().c_str(), 0755);
    std::ofstream(target()) << "root's secret\n";
    ::chmod(target().c_str(), 0600);
    std::filesystem::create_directory(work());
    ::chmod(work().c_str(), 0755);
    if (::geteuid() == 0) base::ignore_result(::chown(work().c_str(), kUser, kUserGroup));
  }
  ~HostileTree() {
    std::error_code ec;
    std::filesystem::remove_all(root_, ec);
  }
  HostileTree(const HostileTree&) = delete;
  HostileTree& operator=(const HostileTree&) = delete;

  const std::filesystem::path& root() const { return root_; }
  std::filesystem::path rootonly() const { return root_ / "rootonly"; }
  std::filesystem::path target() const { return rootonly() / "target"; }
  std::filesystem::path work() const { return root_ / "work"; }

  // A link the user plants at work/<name>, pointing at `to`, owned by the user as it would be.
  std::filesystem::path plant_link(const std::string& name, const std::filesystem::path& to) const {
    const auto link = work() / name;
    std::filesystem::create_symlink(to, link);
    if (::geteuid() == 0) base::ignore_result(::lchown(link.c_str(), kUser, kUserGroup));
    return link;
  }

 private:
  std::filesystem::path root_;
};

}  // namespace oaprof::security
