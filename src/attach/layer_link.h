// What the in-process front-ends (OpenCL: interceptor.cc; Level Zero: ze_interceptor.cc) share
// and nothing API-specific: the layer's configuration read once, the process and thread ids, and
// the link to the privileged side (connect on first use and again in a forked child, the
// snapshots, the launch records alone or in bursts, the launch selection and the program's launch
// count). A failure of the link turns it off with one line on stderr; the front-end then passes
// every call through.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "attach/launch_filter.h"
#include "attach/layer_config.h"
#include "ipc/client.h"
#include "ipc/wire.h"

namespace oaprof::attach {

// What oaprof told the layer, read once per process (each bad value logged once, here).
const LayerConfig& layer_config();
// Sampled attribution (OAPROF_ATTRIBUTION=sampled).
bool sampled_mode();

// A launch's work hint for the simulator, for both front-ends alike: the kernel's name and its
// work-items (the product of `global_sizes`), when oaprof asked for hints (OAPROF_WORK_HINTS: a
// simulated device only); none when it did not, or when the hint cannot carry them (a size of 0,
// a product past ipc::wire::kMaxWorkItems, a name past its bound).
std::optional<ipc::wire::WorkHint> work_hint(std::string_view kernel_name,
                                             std::span<const std::uint64_t> global_sizes);

// Asked of the kernel once, and again after a fork.
pid_t current_pid();
pid_t current_tid();

class LayerLink {
 public:
  // `api` names the launches in the start-up line ("OpenCL", "Level Zero").
  explicit LayerLink(const char* api);
  LayerLink(const LayerLink&) = delete;
  LayerLink& operator=(const LayerLink&) = delete;

  // Connects on first use, and again in a forked child (then `forked` is set: the caller drops
  // the parent's books). False when the link is off. `way_in` names how the layer came in.
  // The caller serialises calls to the link.
  bool ensure_connected(const char* way_in, bool& forked);
  bool disabled() const { return disabled_; }
  // The pid of the process that made the connection, readable without the caller's lock.
  pid_t connected_pid() const { return client_pid_seen_.load(std::memory_order_relaxed); }

  // A pass's snapshot; false (and the link off) when it failed.
  // `work`: the launch's hint for a simulated device, on a 'before' only.
  bool snapshot(std::uint64_t launch_id, ipc::wire::Phase phase, bool energy_first = false,
                std::optional<ipc::wire::WorkHint> work = std::nullopt);
  // A launch record, not waited for; false (and the link off) when it could not be sent.
  bool post(const ipc::wire::Launch& record);
  // Records posted one after another, their replies read as they come.
  void post_burst(std::span<const ipc::wire::Launch> records);
  // The same from the front of `records` while the channel's ring has room, without waiting for
  // the privileged side to take any; returns how many are done with: those sent, or all of them
  // when the link went off (they cannot be sent any more).
  std::size_t post_what_fits(std::span<const ipc::wire::Launch> records);

  // Sampled attribution's ready records, kept in launch order until posted (issue 33).
  void keep(std::vector<ipc::wire::Launch>&& ready);
  std::size_t unposted() const { return kept_.size() - kept_sent_; }
  // The call time (api_ns) of the oldest record kept; 0 when none is.
  std::uint64_t oldest_unposted_ns() const;
  // Posts the kept records. `wait`: all of them, waiting for room in the channel's ring (at a
  // sync point, at exit: they go before the program may pause for longer than the counter
  // timeline keeps its reads). Otherwise what the ring has room for, and the rest stays kept,
  // a backlog for the next launches: asked past AskPolicy::kAskPast, hundreds of launches are
  // ready at once, and the program waited for oaprof to take all but the ring's 64 (bursts of
  // 256 on the never-synchronising bench). Past kMaxUnposted it waits all the same: a
  // privileged side that takes nothing must not grow the program without end.
  void post_kept(bool wait);
  bool backlog() const { return backlog_; }
  // Forgets the kept records (a forked child's are its parent's: ensure_connected drops them).
  void drop_kept();
  static constexpr std::size_t kMaxUnposted = 16384;

  void disable(const std::string& why) noexcept;
  void warn_once(std::atomic<bool>& warned, const std::string& what);

  // The program's launches so far: each one's index is its id and its row's `launch`.
  std::uint64_t next_launch_id() { return launches_.fetch_add(1, std::memory_order_relaxed); }
  LaunchFilter& filter() { return filter_; }

 private:
  const char* api_;
  std::string socket_path_;
  std::unique_ptr<ipc::Client> client_;
  pid_t client_pid_ = 0;
  std::atomic<pid_t> client_pid_seen_{0};
  bool disabled_ = false;
  std::atomic<bool> warned_{false};
  std::atomic<bool> record_warned_{false};
  std::atomic<std::uint64_t> launches_{0};
  LaunchFilter filter_;
  // The records from kept_sent_ on are not posted yet (those before it are dropped once all are,
  // or once they are half of it: the vector is not shifted at every post).
  std::vector<ipc::wire::Launch> kept_;
  std::size_t kept_sent_ = 0;
  bool backlog_ = false;
};

}  // namespace oaprof::attach
