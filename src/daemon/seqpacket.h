// The socket chores both of oaprof's servers share (the run's private socket, server.h, and
// oaprofd's, oaprofd.h): who is on the other end, one datagram in without blocking, one out
// without ever blocking or dying on a client that stopped reading.
#pragma once

#include <sys/socket.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "oa/wire.h"

namespace oaprof::daemon {

// SO_PEERCRED of a connected socket; nullopt when the kernel cannot tell.
std::optional<ucred> peer_credentials(int fd);

enum class Receive { kDatagram, kNothing, kGone };

// One datagram into `buf`; `*size` is its real length (MSG_TRUNC), larger than buf when it did
// not fit, which the caller refuses with oversized_reply().
Receive receive_datagram(int fd, std::span<std::uint8_t> buf, std::size_t* size);

oa::wire::Message oversized_reply(std::size_t size);

void send_datagram(int fd, std::span<const std::uint8_t> bytes);

}  // namespace oaprof::daemon
