#include "session/privilege_drop.h"

#include <grp.h>
#include <linux/capability.h>
#include <pwd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

extern char** environ;

namespace oaprof::session {
namespace {

std::uint32_t required_id(const char* name, const std::string& text) {
  const std::optional<std::uint32_t> id = parse_plain_id(text);
  if (!id) {
    throw std::invalid_argument(fmt::format(
        "{}='{}' is not an id (digits only, below 4294967295); oaprof will not guess whom to run "
        "the program as. Run oaprof through sudo, which sets it, or unset it to run as root",
        name, text));
  }
  return *id;
}

// `user`'s groups with `gid` among them, as initgroups would set them.
std::vector<gid_t> user_groups(const std::string& user, gid_t gid) {
  int n = 32;
  std::vector<gid_t> groups(static_cast<std::size_t>(n));
  for (int tries = 0; tries < 8; ++tries) {
    int count = n;
    if (::getgrouplist(user.c_str(), gid, groups.data(), &count) >= 0) {
      groups.resize(static_cast<std::size_t>(count));
      return groups;
    }
    n = std::max(count, n * 2);
    groups.resize(static_cast<std::size_t>(n));
  }
  throw std::runtime_error(fmt::format(
      "cannot list the groups of user '{}': the group database keeps growing; try again", user));
}

// The capability sets of this thread; false when the kernel would not say.
bool read_capabilities(ObservedCredentials& seen) noexcept {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {};
  if (::syscall(SYS_capget, &header, data) != 0) return false;
  const auto both = [](std::uint32_t low, std::uint32_t high) {
    return static_cast<std::uint64_t>(high) << 32 | low;
  };
  seen.effective = both(data[0].effective, data[1].effective);
  seen.permitted = both(data[0].permitted, data[1].permitted);
  seen.inheritable = both(data[0].inheritable, data[1].inheritable);
  return true;
}

// No ambient capability is raised: asked one by one up to the kernel's last (EINVAL past it).
bool ambient_empty() noexcept {
  for (unsigned long cap = 0; cap < 64; ++cap) {
    const int set = ::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, cap, 0, 0);
    if (set < 0) return errno == EINVAL;  // past the last capability
    if (set != 0) return false;
  }
  return true;
}

ObservedCredentials observe(const DropPlan& plan) noexcept {
  ObservedCredentials seen;
  (void)::getresuid(&seen.uids[0], &seen.uids[1], &seen.uids[2]);
  (void)::getresgid(&seen.gids[0], &seen.gids[1], &seen.gids[2]);
  const int n = ::getgroups(static_cast<int>(plan.scratch.size()), plan.scratch.data());
  if (n >= 0) {
    seen.groups = std::span<const gid_t>(plan.scratch.data(), static_cast<std::size_t>(n));
    seen.groups_read = true;
  }
  seen.capabilities_read = read_capabilities(seen);
  seen.ambient_empty = ambient_empty();
  return seen;
}

}  // namespace

std::optional<Account> lookup_account(uid_t uid) {
  std::vector<char> buf(16384);
  passwd pw{};
  passwd* found = nullptr;
  while (::getpwuid_r(uid, &pw, buf.data(), buf.size(), &found) == ERANGE &&
         buf.size() < (1u << 20)) {
    buf.resize(buf.size() * 2);
  }
  if (found == nullptr) return std::nullopt;
  return Account{pw.pw_name, pw.pw_dir, pw.pw_gid};
}

std::optional<std::uint32_t> parse_plain_id(std::string_view text) {
  if (text.empty() || text.size() > 10 || (text.size() > 1 && text[0] == '0')) return std::nullopt;
  std::uint64_t v = 0;
  for (const char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + static_cast<std::uint64_t>(c - '0');
  }
  if (v >= 0xFFFFFFFFu) return std::nullopt;
  return static_cast<std::uint32_t>(v);
}

std::optional<Credentials> credentials_from_sudo(const std::map<std::string, std::string>& env,
                                                 uid_t euid) {
  const auto uid_it = env.find("SUDO_UID");
  if (euid != 0 || uid_it == env.end()) return std::nullopt;
  Credentials c;
  c.uid = required_id("SUDO_UID", uid_it->second);
  if (c.uid == 0) return std::nullopt;  // sudo from root: nothing to drop to
  const std::optional<Account> account = lookup_account(c.uid);
  if (const auto gid_it = env.find("SUDO_GID"); gid_it != env.end()) {
    c.gid = required_id("SUDO_GID", gid_it->second);
  } else if (account) {
    c.gid = account->gid;
  } else {
    throw std::invalid_argument(fmt::format(
        "SUDO_GID is not set and uid {} has no account to take its group from; set SUDO_GID "
        "(sudo does) or run oaprof as that user",
        c.uid));
  }
  if (c.gid == 0) {
    throw std::invalid_argument(fmt::format(
        "SUDO_GID=0 would run the program of uid {} with root's group; oaprof refuses. Run it "
        "through sudo from an account whose group is not root's",
        c.uid));
  }
  if (account) c.user = account->name;
  return c;
}

DropPlan make_drop_plan(const Credentials& c) {
  DropPlan plan;
  plan.uid = c.uid;
  plan.gid = c.gid;
  plan.groups = c.user.empty() ? std::vector<gid_t>{c.gid} : user_groups(c.user, c.gid);
  std::sort(plan.groups.begin(), plan.groups.end());
  plan.scratch.resize(plan.groups.size() + 1);  // one more: a group too many reads back whole
  return plan;
}

DropStage check_drop(const DropPlan& plan, const ObservedCredentials& seen) noexcept {
  for (const uid_t u : seen.uids) {
    if (u != plan.uid) return DropStage::kCheckUids;
  }
  for (const gid_t g : seen.gids) {
    if (g != plan.gid) return DropStage::kCheckGids;
  }
  if (!seen.groups_read ||
      !std::equal(seen.groups.begin(), seen.groups.end(), plan.groups.begin(), plan.groups.end())) {
    return DropStage::kCheckGroups;
  }
  if (!seen.capabilities_read || seen.effective != 0 || seen.permitted != 0 ||
      seen.inheritable != 0 || !seen.ambient_empty) {
    return DropStage::kCheckCapabilities;
  }
  return DropStage::kDone;
}

DropFailure apply_drop(const DropPlan& plan) noexcept {
  if (::setgroups(plan.groups.size(), plan.groups.data()) != 0) {
    return {DropStage::kSetGroups, errno};
  }
  if (::setresgid(plan.gid, plan.gid, plan.gid) != 0) return {DropStage::kSetGid, errno};
  if (::setresuid(plan.uid, plan.uid, plan.uid) != 0) return {DropStage::kSetUid, errno};
  // Lowering capabilities needs no privilege; raising them is what the check refuses.
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct none[2] = {};
  if (::syscall(SYS_capset, &header, none) != 0) return {DropStage::kClearCapabilities, errno};
  if (::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0) {
    return {DropStage::kClearCapabilities, errno};
  }
  return {check_drop(plan, observe(plan)), 0};
}

std::string describe(const DropFailure& f) {
  const std::string why = f.err != 0 ? std::string(": ") + std::strerror(f.err) : "";
  switch (f.stage) {
    case DropStage::kDone:
      return "the drop took";
    case DropStage::kSetGroups:
      return "cannot set the user's supplementary groups" + why;
    case DropStage::kSetGid:
      return "cannot set the user's gid" + why;
    case DropStage::kSetUid:
      return "cannot set the user's uid" + why;
    case DropStage::kClearCapabilities:
      return "cannot clear the capability sets" + why;
    case DropStage::kCheckUids:
      return "after the drop the real, effective and saved uids are not all the user's";
    case DropStage::kCheckGids:
      return "after the drop the real, effective and saved gids are not all the user's";
    case DropStage::kCheckGroups:
      return "after the drop the supplementary groups are not exactly the user's";
    case DropStage::kCheckCapabilities:
      return "after the drop a capability set (effective, permitted, inheritable or ambient) is "
             "not empty";
  }
  return "unknown drop failure";
}

void drop_privileges_for_good(const Credentials& c) {
  const DropPlan plan = make_drop_plan(c);
  const DropFailure f = apply_drop(plan);
  if (f.failed()) {
    throw std::runtime_error(
        fmt::format("cannot become uid {} (the user who ran sudo): {}; "
                    "refusing to go on as root",
                    c.uid, describe(f)));
  }
}

}  // namespace oaprof::session

namespace oaprof::session {

std::map<std::string, std::string> process_environment() {
  std::map<std::string, std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const char* eq = std::strchr(*e, '=');
    if (eq != nullptr) env.emplace(std::string(*e, static_cast<std::size_t>(eq - *e)), eq + 1);
  }
  return env;
}

void drop_to_sudo_user() {
  if (const auto c = credentials_from_sudo(process_environment(), ::geteuid())) {
    drop_privileges_for_good(*c);
  }
}

}  // namespace oaprof::session
