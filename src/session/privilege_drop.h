// Becoming the invoking user for good. Under `sudo oaprof` three things must run as that user
// and never as root: the profiled program (child.h), the helper that opens the user's files
// (user_file.h), and subcommands that need no privilege at all. They share one drop: who the user
// is comes from SUDO_UID/SUDO_GID, parsed strictly; the plan (the user's groups, through NSS) is
// made before any fork; applying it and then checking that it took (real, effective and saved
// ids, the supplementary groups, every capability set empty) are system calls only, so it is safe
// between fork and exec in a process with threads.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace oaprof::session {

struct Credentials {
  uid_t uid = 0;
  gid_t gid = 0;
  std::string user;  // for the supplementary groups; empty: only gid
};

// A uid's account in the password database (through NSS), or nullopt when it has none.
struct Account {
  std::string name;
  std::string home;
  gid_t gid = 0;
};
std::optional<Account> lookup_account(uid_t uid);

// A user or group id as sudo writes it: a plain decimal (digits only, no sign, no spaces, no
// leading zero) below 4294967295, which is (uid_t)-1, "no change" to the kernel. nullopt else.
std::optional<std::uint32_t> parse_plain_id(std::string_view text);

// The credentials to run the user's side with: from SUDO_UID/SUDO_GID when running as root under
// sudo, nullopt otherwise (root without sudo, sudo from root, or not root: nothing to drop).
// Throws std::invalid_argument, saying what is wrong, for a SUDO_UID or SUDO_GID that is not a
// plain id, for a missing SUDO_GID whose uid has no account to take the group from, and for gid
// 0 beside a non-root uid: oaprof never guesses and never falls back to root's group.
std::optional<Credentials> credentials_from_sudo(const std::map<std::string, std::string>& env,
                                                 uid_t euid);

// What the drop sets, resolved before a fork: ids and the sorted supplementary groups (the
// kernel keeps them sorted, so the check compares them as they will read back).
struct DropPlan {
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;
  // Room for getgroups() when checking, allocated here because the check may not allocate.
  mutable std::vector<gid_t> scratch;
};

// The user's groups (getgrouplist through NSS) with the user's gid among them; only the gid
// when the uid has no account. Throws std::runtime_error when the group list cannot be read.
DropPlan make_drop_plan(const Credentials& c);

enum class DropStage : int {
  kDone = 0,
  kSetGroups,
  kSetGid,
  kSetUid,
  kClearCapabilities,
  kCheckUids,
  kCheckGids,
  kCheckGroups,
  kCheckCapabilities,
};

struct DropFailure {
  DropStage stage = DropStage::kDone;
  int err = 0;  // errno of the failed call; 0 when a check found the wrong state
  bool failed() const { return stage != DropStage::kDone; }
};

// The credentials a process has, as the kernel reports them.
struct ObservedCredentials {
  uid_t uids[3] = {};  // real, effective, saved
  gid_t gids[3] = {};
  std::span<const gid_t> groups;  // sorted as the kernel keeps them
  bool groups_read = false;       // false: more groups than the plan has, or getgroups failed
  std::uint64_t effective = 0, permitted = 0, inheritable = 0;  // capability sets
  bool capabilities_read = false;
  bool ambient_empty = false;
};

// Whether `seen` is exactly `plan` with no capability left: kDone, or the first check that
// fails. Pure, so that every refusal can be tested without a process in that state.
DropStage check_drop(const DropPlan& plan, const ObservedCredentials& seen) noexcept;

// Sets the groups, gid and uid (all three of each), clears every capability set (a securebit
// such as SECBIT_NO_SETUID_FIXUP would keep them across setuid, and the inheritable set survives
// it), then reads the credentials back and checks them. System calls only (async-signal-safe):
// call it in a child after fork. A failure leaves the process in an unknown state: it must exit.
DropFailure apply_drop(const DropPlan& plan) noexcept;

// "cannot set the uid: Operation not permitted", "the saved uid is still another's after the
// drop", for messages.
std::string describe(const DropFailure& failure);

// Drops this whole process to `c` for good (before it has threads). Throws std::runtime_error
// when the drop failed or did not take.
void drop_privileges_for_good(const Credentials& c);

// This process's environment as a map, as credentials_from_sudo reads it.
std::map<std::string, std::string> process_environment();

// For commands that need no privilege (they read and write only the user's files): under sudo,
// become the invoking user for good, now. Throws std::invalid_argument for a bad SUDO_UID or
// SUDO_GID and std::runtime_error when the drop did not take.
void drop_to_sudo_user();

}  // namespace oaprof::session
