// The socket chores both of oaprof's servers share (the run's private socket, server.h, and
// oaprofd's, oaprofd.h): who is on the other end, one datagram in without blocking, one out
// without blocking or dying on a client that stopped reading, and never dropped unsaid.
#pragma once

#include <sys/socket.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "ipc/wire.h"

namespace oaprof::ipc {

// SO_PEERCRED of a connected socket; nullopt when the kernel cannot tell.
std::optional<ucred> peer_credentials(int fd);

// Whether a client may talk to the server on `fd`: the server runs as root (oaprofd, the run
// server of `sudo oaprof`) or as the client's own user (an unprivileged run, tests). Any other
// server is a user's socket that a privileged client was steered to (an environment variable kept
// by sudo); empty when it may, else why not.
std::string untrusted_server(int fd);

enum class Receive { kDatagram, kNothing, kGone };

// One datagram into `buf`; `*size` is its real length (MSG_TRUNC), larger than buf when it did
// not fit, which the caller refuses with oversized_reply().
Receive receive_datagram(int fd, std::span<std::uint8_t> buf, std::size_t* size);

ipc::wire::Message oversized_reply(std::size_t size);

// A refused connection: its one reply (it fits: the queue of a fresh connection is empty), then
// what the client already sent is read and dropped before the hang-up, since a close with unread
// data makes the kernel report ECONNRESET to the client instead of the reply.
void refuse_and_close(int fd, std::span<const std::uint8_t> reply);

enum class Sent { kSent, kWouldBlock, kGone };

// One datagram out without blocking: kWouldBlock when the peer's queue is full (it is not
// reading), for the caller to keep the bytes and try again later.
Sent send_datagram(int fd, std::span<const std::uint8_t> bytes);

// One datagram out, waiting up to `timeout` for a peer that is slow to read; false when the peer
// is gone or made no room in time, and the caller then hangs up on it.
bool send_datagram_within(int fd, std::span<const std::uint8_t> bytes,
                          std::chrono::milliseconds timeout);

}  // namespace oaprof::ipc
