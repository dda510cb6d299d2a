#include "daemon/listen_address.h"

#include <arpa/inet.h>

#include <charconv>
#include <stdexcept>

#include <fmt/format.h>

namespace oaprof::daemon {

ListenAddress parse_listen_address(const std::string& text) {
  const auto bad = [&](const std::string& why) {
    return std::invalid_argument(fmt::format(
        "--metrics-listen {}: {}; give ADDR:PORT, e.g. 127.0.0.1:9464 or [::1]:9464", text, why));
  };
  const auto colon = text.rfind(':');
  if (colon == std::string::npos) throw bad("no port");
  std::string host = text.substr(0, colon);
  const std::string port_text = text.substr(colon + 1);
  int port = -1;
  const auto [end, ec] =
      std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (ec != std::errc() || end != port_text.data() + port_text.size() || port < 0 || port > 65535) {
    throw bad("the port is not a number from 0 to 65535");
  }
  ListenAddress a;
  a.port = port;
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    in6_addr v6{};
    if (::inet_pton(AF_INET6, host.substr(1, host.size() - 2).c_str(), &v6) != 1) {
      throw bad("not an IPv6 address");
    }
    a.loopback = IN6_IS_ADDR_LOOPBACK(&v6);
  } else {
    in_addr v4{};
    if (::inet_pton(AF_INET, host.c_str(), &v4) != 1) {
      throw bad("not an IPv4 address (host names are not resolved)");
    }
    a.loopback = (ntohl(v4.s_addr) >> 24) == 127;
  }
  a.host = host;
  return a;
}

}  // namespace oaprof::daemon
