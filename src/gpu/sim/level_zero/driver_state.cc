#include "gpu/sim/level_zero/driver_state.h"

#include <time.h>

#include <algorithm>
#include <cstring>

#include "oa/platform.h"

namespace oaprof::gpu::level_zero_sim {

std::uint64_t monotonic_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u +
         static_cast<std::uint64_t>(ts.tv_nsec);
}

std::uint64_t kernel_duration_ns(std::uint64_t work_items, int eus) {
  // A wave: every EU's hardware threads (7) each running SIMD8.
  const std::uint64_t wave = static_cast<std::uint64_t>(std::max(eus, 1)) * 7 * 8;
  return kLaunchCostNs + (work_items + wave - 1) / wave * kWaveCostNs;
}

std::uint64_t transfer_duration_ns(std::uint64_t bytes) {
  return kLaunchCostNs + bytes / 20;  // 20 bytes a nanosecond
}

State& State::get() {
  static State* state = new State();  // never destroyed: programs call in from atexit handlers
  return *state;
}

State::State() {
  driver = adopt(std::make_unique<Driver>());
  device = adopt(std::make_unique<Device>());
}

int State::eus() const { return oa::simulated_platform().eus; }

void State::remove_executor(Executor* e) {
  executors_.erase(std::remove(executors_.begin(), executors_.end(), e), executors_.end());
}

void State::submit(Executor& executor, std::vector<Command> commands) {
  for (Command& c : commands) executor.pending.push_back(std::move(c));
  pump_all();
}

void State::pump_all() {
  bool progress = true;
  while (progress) {
    progress = false;
    for (Executor* e : executors_) progress = pump(*e) || progress;
  }
  changed.notify_all();
}

bool State::pump(Executor& executor) {
  bool progress = false;
  while (!lost && !executor.pending.empty() && ready(executor.pending.front())) {
    run(executor, executor.pending.front());
    if (lost) return true;  // the hung command stays: its queue never goes idle
    executor.pending.pop_front();
    progress = true;
  }
  return progress;
}

bool State::ready(const Command& command) const {
  // A destroyed event is taken as signalled rather than holding the queue for ever.
  return std::all_of(command.waits.begin(), command.waits.end(),
                     [this](const Event* e) { return !alive(e) || e->signal_ns.has_value(); });
}

std::uint64_t State::run_launches(Command& command, std::uint64_t start_ns) {
  std::size_t count = command.launches.size();
  if (command.launch_count != nullptr) count = std::min<std::size_t>(count, *command.launch_count);
  std::uint64_t end = start_ns;
  for (std::size_t i = 0; i < count; ++i) {
    const Launch& l = command.launches[i];
    if (l.name == kHangKernel) {
      lost = true;  // never ends: the command signals nothing, nothing runs after it
      return end;
    }
    const ze_group_count_t g = l.indirect != nullptr ? *l.indirect : l.groups;
    const std::uint64_t items = std::uint64_t{g.groupCountX} * g.groupCountY * g.groupCountZ *
                                l.group_size[0] * l.group_size[1] * l.group_size[2];
    end += kernel_duration_ns(items, eus());
  }
  return end;
}

std::uint64_t State::run_transfer(Command& command, std::uint64_t start_ns) {
  if (command.op == Command::Op::kCopy) {
    std::memmove(command.dst, command.src, command.bytes);
  } else {
    auto* dst = static_cast<std::uint8_t*>(command.dst);
    const std::size_t n = command.pattern.size();
    for (std::size_t i = 0; i < command.bytes; i += n) {
      std::memcpy(dst + i, command.pattern.data(), std::min(n, command.bytes - i));
    }
  }
  return start_ns + transfer_duration_ns(command.bytes);
}

void State::run(Executor& executor, Command& command) {
  std::uint64_t start = std::max(monotonic_ns(), executor.last_end_ns);
  for (const Event* e : command.waits) {
    if (alive(e) && e->signal_ns) start = std::max(start, *e->signal_ns);
  }
  std::uint64_t end = start;
  switch (command.op) {
    case Command::Op::kLaunch:
    case Command::Op::kCopy:
    case Command::Op::kFill:
      start = std::max(start, engine_free_ns);  // one engine: work runs one piece at a time
      end = command.op == Command::Op::kLaunch ? run_launches(command, start)
                                               : run_transfer(command, start);
      engine_free_ns = end;
      if (lost) return;
      break;
    case Command::Op::kGlobalTimestamp: {
      const std::uint64_t t = ticks(start) & ((std::uint64_t{1} << kGlobalTimestampBits) - 1);
      std::memcpy(command.dst, &t, sizeof t);
      break;
    }
    case Command::Op::kQueryTimestamps:
      for (std::size_t i = 0; i < command.events.size(); ++i) {
        const Event* e = command.events[i];
        if (!alive(e)) continue;
        const std::uint64_t mask = (std::uint64_t{1} << kKernelTimestampBits) - 1;
        ze_kernel_timestamp_result_t r{};
        r.global = {ticks(e->start_ns) & mask, ticks(e->end_ns) & mask};
        r.context = r.global;
        std::memcpy(static_cast<std::uint8_t*>(command.dst) + i * sizeof r, &r, sizeof r);
      }
      break;
    case Command::Op::kReset:
      for (Event* e : command.events) {
        if (alive(e)) e->signal_ns.reset();
      }
      break;
    case Command::Op::kFence:
      if (alive(command.fence)) command.fence->signal_ns = end;
      break;
    default:
      break;
  }
  executor.last_end_ns = end;
  if (command.signal != nullptr && alive(command.signal)) {
    command.signal->signal_ns = end;
    command.signal->start_ns = start;
    command.signal->end_ns = end;
  }
}

}  // namespace oaprof::gpu::level_zero_sim
