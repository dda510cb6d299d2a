// The rpc read-out: the GPU itself writes each snapshot with MI_REPORT_PERF_COUNT, so the report
// is one atomic sample in the hardware's own layout, at the cost of a batch submission.
#include <stdexcept>

#include <fmt/format.h>

#include "gpu/counter_source.h"
#include "gpu/i915/report_batch.h"
#include "gpu/programmed_source.h"

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
    return take_report(*runner_, device_.platform.gen, format_, report_id,
                       device_.facts.oa_cs_shift, device_.label());
  }

 private:
  std::unique_ptr<BatchRunner> runner_;
};

}  // namespace

std::unique_ptr<CounterSource> make_rpc_source(Device& device) {
  auto runner = device.simulated()
                    ? make_sim_batch_runner(*device.sim)
                    : make_drm_batch_runner(resolve_render_node(device), device.platform);
  return std::make_unique<RpcCounterSource>(device, std::move(runner));
}

}  // namespace oaprof::gpu
