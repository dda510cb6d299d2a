// Fuzzes the reading of SUDO_UID/SUDO_GID (session/privilege_drop.h), which come from an
// environment root did not write. The input is "<SUDO_UID>\n<SUDO_GID>" (no newline: SUDO_GID is
// absent). Whatever the bytes, the result is a refusal (std::invalid_argument) or ids that are
// exactly the decimal text given, never 0 beside a user, never (uid_t)-1.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <stdexcept>
#include <string>

#include "session/privilege_drop.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace oaprof::session;
  const std::string text(reinterpret_cast<const char*>(data), size);
  const std::size_t nl = text.find('\n');
  std::map<std::string, std::string> env{{"SUDO_UID", text.substr(0, nl)}};
  if (nl != std::string::npos) env["SUDO_GID"] = text.substr(nl + 1);

  if (const auto id = parse_plain_id(env["SUDO_UID"])) {
    if (std::to_string(*id) != env["SUDO_UID"] || *id == 0xFFFFFFFFu) std::abort();
  }
  try {
    const auto c = credentials_from_sudo(env, 0);
    if (!c) {
      if (env["SUDO_UID"] != "0") std::abort();  // only sudo from root means "nothing to drop"
      return 0;
    }
    if (c->uid == 0 || c->gid == 0 || c->uid == 0xFFFFFFFFu || c->gid == 0xFFFFFFFFu) std::abort();
    if (std::to_string(c->uid) != env["SUDO_UID"]) std::abort();
    if (nl != std::string::npos && std::to_string(c->gid) != env["SUDO_GID"]) std::abort();
  } catch (const std::invalid_argument&) {
    // A refusal with its reason: what a malformed id must get.
  }
  return 0;
}
