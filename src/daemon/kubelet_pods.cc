#include "daemon/kubelet_pods.h"

#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "daemon/pod_identity.h"

namespace oaprof::daemon {
namespace {

using Json = nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr std::size_t kMaxLabelChars = 63;       // DNS-1123 label (a namespace)
constexpr std::size_t kMaxSubdomainChars = 253;  // DNS-1123 subdomain (a pod's name)

bool is_lower_alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

// [a-z0-9]([-a-z0-9]*[a-z0-9])?, and with '.' between such parts when `dots`.
bool is_dns1123(std::string_view s, std::size_t max_chars, bool dots) {
  if (s.empty() || s.size() > max_chars) return false;
  char before = '.';
  for (char c : s) {
    const bool separator = c == '-' || (dots && c == '.');
    if (!is_lower_alnum(c) && !separator) return false;
    if (c == '.' && before == '-') return false;
    if (before == '.' && !is_lower_alnum(c)) return false;
    before = c;
  }
  return is_lower_alnum(s.back());
}

// Builds only what the format needs: the keys on the way to a pod's uid, namespace and name,
// and no container deeper than they are, however the input nests (memory stays that of the
// fields kept, and the parser's own stack is on the heap).
bool keep_pod_fields(int depth, Json::parse_event_t event, Json& parsed) {
  constexpr int kDeepestContainer = 4;  // root, items, an item, its metadata
  switch (event) {
    case Json::parse_event_t::object_start:
    case Json::parse_event_t::array_start:
      return depth < kDeepestContainer;
    case Json::parse_event_t::key: {
      const auto* key = parsed.get_ptr<const std::string*>();
      return key != nullptr && (*key == "items" || *key == "metadata" || *key == "uid" ||
                                *key == "namespace" || *key == "name");
    }
    default:
      return true;
  }
}

// One item's uid and name, when its metadata has them in Kubernetes' shapes.
std::optional<std::pair<std::string, PodName>> pod_entry(const Json& item) {
  if (!item.is_object() || !item.contains("metadata")) return std::nullopt;
  const Json& meta = item["metadata"];
  if (!meta.is_object()) return std::nullopt;
  const auto text = [&](const char* key) -> std::string {
    const auto it = meta.find(key);
    return it != meta.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  std::string uid = text("uid");
  PodName name{text("namespace"), text("name")};
  if (!is_pod_uid(uid) || !is_dns1123(name.pod_namespace, kMaxLabelChars, false) ||
      !is_dns1123(name.name, kMaxSubdomainChars, true)) {
    return std::nullopt;
  }
  return std::pair{std::move(uid), std::move(name)};
}

struct HttpUrl {
  std::string host, port, path;
};

// http://IP:PORT/PATH with a numeric IPv4 address or a bracketed IPv6 one; the path is printable
// ASCII without spaces, so nothing can be added to the request.
std::optional<HttpUrl> parse_http_url(std::string_view url) {
  constexpr std::string_view kScheme = "http://";
  if (!url.starts_with(kScheme)) return std::nullopt;
  url.remove_prefix(kScheme.size());
  const std::size_t slash = url.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  std::string_view authority = url.substr(0, slash);
  const std::string_view path = url.substr(slash);
  for (char c : path) {
    if (c <= 0x20 || c >= 0x7F) return std::nullopt;
  }
  const std::size_t colon = authority.rfind(':');
  if (colon == std::string_view::npos || colon + 1 == authority.size()) return std::nullopt;
  std::string_view host = authority.substr(0, colon);
  if (host.starts_with('[') && host.ends_with(']')) host = host.substr(1, host.size() - 2);
  HttpUrl parsed{std::string(host), std::string(authority.substr(colon + 1)), std::string(path)};
  addrinfo hints{};
  hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (::getaddrinfo(parsed.host.c_str(), parsed.port.c_str(), &hints, &found) != 0) {
    return std::nullopt;
  }
  ::freeaddrinfo(found);
  return parsed;
}

// A socket descriptor closed when it goes.
struct Socket {
  int fd = -1;
  ~Socket() {
    if (fd >= 0) ::close(fd);
  }
};

// Waits until `fd` is ready for `events` or the deadline passes (then throws).
void wait_for(int fd, short events, Clock::time_point deadline, const char* doing) {
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) throw std::runtime_error(fmt::format("timed out {}", doing));
    pollfd p{fd, events, 0};
    const int n = ::poll(&p, 1, static_cast<int>(left.count()));
    if (n > 0) return;
    if (n < 0 && errno != EINTR)
      throw std::runtime_error(fmt::format("poll: {}", std::strerror(errno)));
  }
}

void connect_to(const Socket& s, const addrinfo& a, Clock::time_point deadline) {
  if (::connect(s.fd, a.ai_addr, a.ai_addrlen) != 0 && errno != EINPROGRESS) {
    throw std::runtime_error(fmt::format("cannot connect: {}", std::strerror(errno)));
  }
  wait_for(s.fd, POLLOUT, deadline, "connecting");
  int error = 0;
  socklen_t len = sizeof error;
  ::getsockopt(s.fd, SOL_SOCKET, SO_ERROR, &error, &len);
  if (error != 0) throw std::runtime_error(fmt::format("cannot connect: {}", std::strerror(error)));
}

// The whole reply to one HTTP/1.0 GET (the server closes after it), at most kMaxPodListBytes
// of body.
std::string http_exchange(const HttpUrl& url, Clock::time_point deadline) {
  addrinfo hints{};
  hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (::getaddrinfo(url.host.c_str(), url.port.c_str(), &hints, &found) != 0) {
    throw std::runtime_error("not a numeric address");
  }
  Socket s{::socket(found->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)};
  try {
    if (s.fd < 0) throw std::runtime_error(fmt::format("socket: {}", std::strerror(errno)));
    connect_to(s, *found, deadline);
  } catch (...) {
    ::freeaddrinfo(found);
    throw;
  }
  ::freeaddrinfo(found);
  const std::string request =
      fmt::format("GET {} HTTP/1.0\r\nHost: {}\r\nAccept: application/json\r\n\r\n", url.path,
                  url.host.find(':') == std::string::npos ? url.host : "[" + url.host + "]");
  for (std::size_t sent = 0; sent < request.size();) {
    wait_for(s.fd, POLLOUT, deadline, "sending the request");
    const ssize_t n = ::send(s.fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno != EAGAIN && errno != EINTR) {
      throw std::runtime_error(fmt::format("cannot send: {}", std::strerror(errno)));
    }
    if (n > 0) sent += static_cast<std::size_t>(n);
  }
  std::string reply;
  char buf[16384];
  for (;;) {
    wait_for(s.fd, POLLIN, deadline, "reading the reply");
    const ssize_t n = ::recv(s.fd, buf, sizeof buf, 0);
    if (n == 0) return reply;
    if (n < 0 && errno != EAGAIN && errno != EINTR) {
      throw std::runtime_error(fmt::format("cannot read: {}", std::strerror(errno)));
    }
    if (n > 0) reply.append(buf, static_cast<std::size_t>(n));
    if (reply.size() > kMaxPodListBytes + 64 * 1024) {
      throw std::runtime_error(fmt::format("the reply is longer than {} bytes", kMaxPodListBytes));
    }
  }
}

// The body of a 200 reply that is neither chunked nor compressed (HTTP/1.0 asked for neither).
std::string http_body(const std::string& reply) {
  const std::size_t end = reply.find("\r\n\r\n");
  if (end == std::string::npos) throw std::runtime_error("the reply has no end of headers");
  std::string head = reply.substr(0, end);
  for (char& c : head) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const std::size_t space = head.find(' ');
  if (space == std::string::npos || head.compare(space + 1, 3, "200") != 0) {
    throw std::runtime_error("the reply's status is not 200: " +
                             reply.substr(0, std::min(reply.find('\r'), std::size_t{64})));
  }
  if (head.find("transfer-encoding:") != std::string::npos) {
    throw std::runtime_error("the reply has a transfer encoding (an HTTP/1.0 reply may not)");
  }
  return reply.substr(end + 4);
}

std::string read_file_bounded(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) throw std::runtime_error(fmt::format("cannot open: {}", std::strerror(errno)));
  std::string text;
  char buf[16384];
  ssize_t n = 0;
  while ((n = ::read(fd, buf, sizeof buf)) > 0 && text.size() <= kMaxPodListBytes) {
    text.append(buf, static_cast<std::size_t>(n));
  }
  const int error = errno;
  ::close(fd);
  if (n < 0) throw std::runtime_error(fmt::format("cannot read: {}", std::strerror(error)));
  if (text.size() > kMaxPodListBytes) {
    throw std::runtime_error(fmt::format("longer than {} bytes", kMaxPodListBytes));
  }
  return text;
}

}  // namespace

std::optional<PodNames> parse_pod_list(std::string_view json) {
  if (json.size() > kMaxPodListBytes) return std::nullopt;
  const Json doc = Json::parse(json.begin(), json.end(), keep_pod_fields, false);
  if (!doc.is_object() || !doc.contains("items") || !doc["items"].is_array()) return std::nullopt;
  PodNames pods;
  std::map<std::string, bool> conflicting;
  for (const Json& item : doc["items"]) {
    auto entry = pod_entry(item);
    if (!entry) continue;
    auto [it, added] = pods.try_emplace(entry->first, entry->second);
    if (!added && it->second != entry->second) conflicting[entry->first] = true;
    if (pods.size() >= kMaxPods) break;
  }
  for (const auto& [uid, _] : conflicting) pods.erase(uid);  // one uid, two pods: trust neither
  return pods;
}

}  // namespace oaprof::daemon

namespace oaprof::daemon {

std::optional<std::string> kubelet_pods_source_error(std::string_view source) {
  if (source.starts_with('/')) return std::nullopt;
  if (parse_http_url(source)) return std::nullopt;
  return fmt::format(
      "'{}' is neither http://IP:PORT/PATH (a numeric address, plain HTTP: the kubelet's "
      "read-only port, e.g. http://$(NODE_IP):10255/pods) nor an absolute file path",
      source);
}

std::string fetch_pod_list(const std::string& source, std::chrono::milliseconds timeout) {
  try {
    if (source.starts_with('/')) return read_file_bounded(source);
    const auto url = parse_http_url(source);
    if (!url) throw std::runtime_error(*kubelet_pods_source_error(source));
    return http_body(http_exchange(*url, Clock::now() + timeout));
  } catch (const std::exception& e) {
    throw std::runtime_error(fmt::format("the pod list {}: {}", source, e.what()));
  }
}

KubeletPods::KubeletPods(KubeletPodsOptions options)
    : options_(std::move(options)), thread_([this] { fetch_loop(); }) {}

KubeletPods::~KubeletPods() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

KubeletPods::Lookup KubeletPods::find(const std::string& pod_uid) {
  std::lock_guard lock(mu_);
  if (const auto it = pods_.find(pod_uid); it != pods_.end()) return {it->second, done_};
  wanted_ = true;
  wake_.notify_all();
  return {std::nullopt, done_};
}

std::uint64_t KubeletPods::next_list() {
  std::lock_guard lock(mu_);
  return started_ + 1;  // one in flight began before this call; the next one after it
}

void KubeletPods::fetch_loop() {
  std::unique_lock lock(mu_);
  Clock::time_point last_start{};
  bool fetched = false;
  for (;;) {
    wake_.wait(lock, [this] { return stopping_ || wanted_; });
    if (stopping_) return;
    // No sooner than min_interval after the last fetch began: a pod the kubelet does not list
    // cannot make oaprofd ask it again and again.
    if (fetched &&
        wake_.wait_until(lock, last_start + options_.min_interval, [this] { return stopping_; })) {
      return;
    }
    wanted_ = false;
    ++started_;
    last_start = Clock::now();
    fetched = true;
    lock.unlock();
    fetch_once();
    lock.lock();
  }
}

// Takes one list; on failure keeps the last one (pods that were listed keep their labels).
void KubeletPods::fetch_once() {
  std::optional<PodNames> pods;
  std::string failure;
  try {
    pods = parse_pod_list(fetch_pod_list(options_.source, options_.timeout));
    if (!pods) failure = fmt::format("the pod list {} is not a JSON PodList", options_.source);
  } catch (const std::exception& e) {
    failure = e.what();
  }
  bool log_failure = false;
  {
    std::lock_guard lock(mu_);
    if (pods) pods_ = std::move(*pods);
    log_failure = !failure.empty() && !failing_;
    failing_ = !failure.empty();
    done_ = started_;
  }
  if (log_failure && options_.log) {
    options_.log(4, failure +
                        "; series of pods it does not name go without namespace and pod "
                        "labels (logged once until a list is read again)");
  }
}

}  // namespace oaprof::daemon
