#include "attach/layer_link.h"

#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>
#include <exception>

namespace oaprof::attach {
namespace {

namespace wire = ipc::wire;

// How long connecting to oaprof's socket may take (ipc::Client's own default).
constexpr int kConnectTimeoutMs = 10000;

std::atomic<pid_t> g_pid{0};
thread_local pid_t t_tid = 0;

void forget_ids_in_child() {
  g_pid.store(0);
  t_tid = 0;  // the forking thread is the child's only thread
}

}  // namespace

// Read once per process before the first call (the ways in install their hooks by it) and never
// again: a program that changes its environment later does not change the measurement.
const LayerConfig& layer_config() {
  static const LayerConfig config = [] {
    LayerConfig c = LayerConfig::from_env(&process_env);
    for (const std::string& error : c.errors) {
      std::fprintf(stderr, "oaprof layer: %s\n", error.c_str());
    }
    return c;
  }();
  return config;
}

std::optional<wire::WorkHint> work_hint(std::string_view kernel_name,
                                        std::span<const std::uint64_t> global_sizes) {
  if (!layer_config().work_hints) return std::nullopt;
  wire::WorkHint hint{std::string(kernel_name), 1};
  for (const std::uint64_t size : global_sizes) {
    if (size == 0 || hint.global_size > wire::kMaxWorkItems / size) return std::nullopt;
    hint.global_size *= size;
  }
  if (!wire::sendable(hint)) return std::nullopt;
  return hint;
}

bool sampled_mode() { return layer_config().attribution == Attribution::kSampled; }

// The process and thread ids are system calls: asked once, and again after a fork (the child has
// new ones), not at every launch.
pid_t current_pid() {
  static const bool registered = [] {
    return ::pthread_atfork(nullptr, nullptr, forget_ids_in_child) == 0;
  }();
  pid_t pid = g_pid.load(std::memory_order_relaxed);
  if (pid == 0 || !registered) {
    pid = ::getpid();
    if (registered) g_pid.store(pid, std::memory_order_relaxed);
  }
  return pid;
}

pid_t current_tid() {
  if (t_tid == 0) t_tid = static_cast<pid_t>(::syscall(SYS_gettid));
  return t_tid;
}

LayerLink::LayerLink(const char* api) : api_(api) {
  const LayerConfig& config = layer_config();
  if (!config.socket) {
    disable("OAPROF_SOCKET is not set (start the program under oaprof); running unprofiled");
    return;
  }
  if (!config.measure) {
    disabled_ = true;  // layer_config() has said why
    return;
  }
  socket_path_ = *config.socket;
  try {
    filter_ = LaunchFilter(config.kernel_name, config.launch_skip, config.launch_count);
  } catch (const std::exception& e) {
    disable(std::string(e.what()) + "; running unprofiled");
  }
}

bool LayerLink::ensure_connected(const char* way_in, bool& forked) {
  forked = false;
  if (disabled_) return false;
  const pid_t pid = current_pid();
  if (client_ && pid == client_pid_) return true;
  // First use, or a forked child: the parent's connection is not ours to use.
  forked = client_ != nullptr;
  drop_kept();  // a forked child's are its parent's
  std::string error;
  const LayerConfig& config = layer_config();
  ipc::channel::WaitPolicy policy;
  if (config.spin) policy.spin = *config.spin;
  client_ = ipc::Client::connect(socket_path_, error, kConnectTimeoutMs, policy);
  if (!client_) {
    disable(error + "; running unprofiled");
    return false;
  }
  client_pid_ = pid;
  client_pid_seen_.store(pid, std::memory_order_relaxed);
  // The shared-memory channel unless OAPROF_CHANNEL=off asks for the socket alone.
  // Launch records only go through post(): their kOk is not needed, only an error reply.
  if (!client_->hello(static_cast<std::uint32_t>(pid), config.channel, error, nullptr, true)) {
    disable("the privileged side refused us: " + error + "; running unprofiled");
    return false;
  }
  if (!config.quiet) {
    std::fprintf(stderr, "oaprof: measuring %s launches of pid %d through the %s (%s)\n", api_, pid,
                 way_in, client_->has_channel() ? "shared-memory channel" : "socket");
  }
  return true;
}

bool LayerLink::snapshot(std::uint64_t launch_id, wire::Phase phase, bool energy_first,
                         std::optional<wire::WorkHint> work) {
  if (!client_) return false;
  std::string error;
  if (!client_->call(wire::Snapshot{launch_id, phase, energy_first, std::move(work)}, error)) {
    disable("snapshot failed: " + error + "; running unprofiled from here on");
    return false;
  }
  if (phase == wire::Phase::kBefore) {
    if (const std::string refused = client_->take_post_error(); !refused.empty()) {
      // This launch is measured; the previous one's record was refused (dropped there).
      warn_once(record_warned_, "a launch record was refused: " + refused);
    }
  }
  return true;
}

// The record carries no timing, so it does not wait for its reply: the next call reads it (one
// round trip fewer per launch), and an error reply still turns profiling off there.
bool LayerLink::post(const wire::Launch& record) {
  if (!client_) return false;
  std::string error;
  if (!client_->post(record, error)) {
    disable("launch record not sent: " + error + "; running unprofiled from here on");
    return false;
  }
  return true;
}

// The replies are read as they come: a privileged side whose replies nobody reads stops taking
// requests once its queue of them is full.
void LayerLink::post_burst(std::span<const wire::Launch> records) {
  std::string error;
  for (const wire::Launch& rec : records) {
    if (!post(rec)) return;
    if (!client_->read_arrived_replies(error)) {
      disable("the privileged side went away: " + error + "; running unprofiled from here on");
      return;
    }
  }
  if (const std::string refused = client_->take_post_error(); !refused.empty()) {
    warn_once(record_warned_, "a launch record was refused: " + refused);
  }
}

std::size_t LayerLink::post_what_fits(std::span<const wire::Launch> records) {
  if (!client_) return records.size();
  std::size_t sent = 0;
  std::string error;
  for (const wire::Launch& rec : records) {
    if (!client_->read_arrived_replies(error)) {
      disable("the privileged side went away: " + error + "; running unprofiled from here on");
      return records.size();
    }
    const ipc::Client::Posted posted = client_->post_if_room(rec, error);
    if (posted == ipc::Client::Posted::kFull) break;
    if (posted == ipc::Client::Posted::kFailed) {
      disable("launch record not sent: " + error + "; running unprofiled from here on");
      return records.size();
    }
    ++sent;
  }
  if (const std::string refused = client_->take_post_error(); !refused.empty()) {
    warn_once(record_warned_, "a launch record was refused: " + refused);
  }
  return sent;
}

void LayerLink::keep(std::vector<wire::Launch>&& ready) {
  if (kept_.empty()) {
    kept_ = std::move(ready);
    return;
  }
  for (wire::Launch& rec : ready) kept_.push_back(std::move(rec));
}

std::uint64_t LayerLink::oldest_unposted_ns() const {
  return unposted() == 0 ? 0 : kept_[kept_sent_].api_ns;
}

void LayerLink::post_kept(bool wait) {
  const auto rest = std::span<const wire::Launch>(kept_).subspan(kept_sent_);
  if (wait || rest.size() > kMaxUnposted) {
    post_burst(rest);
    kept_sent_ = kept_.size();
  } else {
    kept_sent_ += post_what_fits(rest);
  }
  if (kept_sent_ == kept_.size()) {
    drop_kept();
  } else if (2 * kept_sent_ >= kept_.size()) {
    kept_.erase(kept_.begin(), kept_.begin() + static_cast<std::ptrdiff_t>(kept_sent_));
    kept_sent_ = 0;
  }
  backlog_ = unposted() > 0;
}

void LayerLink::drop_kept() {
  kept_.clear();
  kept_sent_ = 0;
  backlog_ = false;
}

void LayerLink::disable(const std::string& why) noexcept {
  disabled_ = true;
  client_.reset();
  if (!warned_.exchange(true)) std::fprintf(stderr, "oaprof layer: %s\n", why.c_str());
}

void LayerLink::warn_once(std::atomic<bool>& warned, const std::string& what) {
  if (!warned.exchange(true)) std::fprintf(stderr, "oaprof layer: %s\n", what.c_str());
}

}  // namespace oaprof::attach
