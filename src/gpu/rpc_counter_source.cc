// The rpc read-out: the GPU itself writes each snapshot with MI_REPORT_PERF_COUNT, so the report
// is one atomic sample in the hardware's own layout, at the cost of a batch submission.
#include <stdexcept>

#include <fmt/format.h>

#include "gpu/counter_source.h"
#include "gpu/programmed_source.h"
#include "gpu/report_batch.h"

namespace oaprof::gpu {
namespace {

class RpcCounterSource final : public ProgrammedSource {
 public:
  RpcCounterSource(Device& device, std::unique_ptr<BatchRunner> runner)
      : ProgrammedSource(device), runner_(std::move(runner)) {}
  ~RpcCounterSource() override { stop(); }

  std::string_view name() const override { return "rpc"; }

  oa::RawReport snapshot(std::uint32_t report_id) override {
    require_started();
    check_context_registers();
    const ReportBatch batch =
        build_report_batch(device_.platform.gen, runner_->report_address(), report_id);
    oa::RawReport raw;
    raw.size = oa::layout_of(format_).size_bytes;
    runner_->run(batch, std::span(raw.bytes.data(), static_cast<std::size_t>(raw.size)));
    if (raw.dword(0) != report_id) {
      throw std::runtime_error(fmt::format(
          "{}: MI_REPORT_PERF_COUNT wrote report id 0x{:X}, expected 0x{:X}: the GPU did not "
          "write the report; is the OA unit enabled? `oaprof doctor` checks it",
          device_.label(), raw.dword(0), report_id));
    }
    return raw;
  }

 private:
  std::unique_ptr<BatchRunner> runner_;
};

}  // namespace

std::unique_ptr<CounterSource> make_rpc_source(Device& device) {
  auto runner = device.simulated() ? make_sim_batch_runner(*device.sim)
                                   : make_drm_batch_runner(device.render_node);
  return std::make_unique<RpcCounterSource>(device, std::move(runner));
}

}  // namespace oaprof::gpu
