// How both ends of oaprof's Unix sockets spell an address as text: a path, or "@name" for a name
// in the abstract namespace, which has no file at all (nothing on disk for a user to swap or a
// root process to chown). The run's private socket (session/server.h) is abstract; its name
// reaches the layer through OAPROF_SOCKET.
#pragma once

#include <sys/socket.h>
#include <sys/un.h>

#include <cstddef>
#include <cstring>
#include <string_view>

namespace oaprof::ipc {

// Fills `addr` from `text` and returns the length to pass to bind/connect, or 0 when `text` is
// empty or does not fit.
inline socklen_t unix_address(std::string_view text, sockaddr_un& addr) {
  addr = sockaddr_un{};
  addr.sun_family = AF_UNIX;
  if (text.empty() || text.size() >= sizeof addr.sun_path) return 0;
  if (text[0] == '@') {
    if (text.size() == 1) return 0;
    // An abstract name is sun_path[0] == 0 and then exactly its bytes: the length says where it
    // ends, so no terminator is counted.
    std::memcpy(addr.sun_path + 1, text.data() + 1, text.size() - 1);
    return static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + text.size());
  }
  std::memcpy(addr.sun_path, text.data(), text.size());
  return static_cast<socklen_t>(sizeof addr);
}

}  // namespace oaprof::ipc
