// JSON text that is always valid: strings oaprof writes come from programs and files it does not
// control (argv, kernel names, host names, CSV cells), and those are bytes, not always UTF-8.
// nlohmann's default dump throws on such bytes, which would lose a run's output; this writes each
// byte that is not UTF-8 as U+FFFD instead.
#pragma once

#include <string>

namespace oaprof::report {

// `indent` as nlohmann's dump: -1 for one line, n >= 0 for pretty-printing with n spaces.
template <class Json>
std::string json_text(const Json& doc, int indent = -1) {
  return doc.dump(indent, ' ', false, Json::error_handler_t::replace);
}

}  // namespace oaprof::report
