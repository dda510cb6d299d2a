// Where oaprofd's Prometheus exporter listens (--metrics-listen ADDR:PORT), parsed once at the
// edge: numeric addresses only (no name is resolved as root), and whether it stays on this
// machine, which decides what the daemon and `oaprof doctor` warn about.
#pragma once

#include <string>
#include <string_view>

namespace oaprof::daemon {

inline constexpr std::string_view kDefaultMetricsListen = "127.0.0.1:9464";

struct ListenAddress {
  std::string host;  // as civetweb takes it: 127.0.0.1 or [::1]
  int port = 0;
  bool loopback = true;
  std::string civetweb() const { return host + ":" + std::to_string(port); }
};

// An IPv4 address or [IPv6] and a port 0-65535 (0: any free port, for tests). Throws
// std::invalid_argument saying what is wrong.
ListenAddress parse_listen_address(const std::string& text);

}  // namespace oaprof::daemon
