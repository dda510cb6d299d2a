// Fuzzes the decoder of the socket protocol, which parses bytes from untrusted clients: any input
// must decode or be refused, never crash, and whatever decodes must re-encode to the same bytes.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <variant>

#include "ipc/wire.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace oaprof::ipc::wire;
  const auto decoded = decode({data, size});
  if (const auto* m = std::get_if<Message>(&decoded)) {
    const auto again = encode(*m);
    if (std::get_if<Launch>(&m->body) == nullptr && std::get_if<Error>(&m->body) == nullptr) {
      // Fixed-size payloads re-encode byte for byte.
      if (again.size() != size) std::abort();
    }
    if (!std::holds_alternative<Message>(decode(again))) std::abort();
  }
  return 0;
}
