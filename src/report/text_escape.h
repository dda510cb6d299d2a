// Text that came from a program, a client or a file (kernel names, counter symbols), made safe to
// show: on a terminal, where a control byte would move the cursor, recolour or rewrite the line
// (an ESC sequence, a CR), and in XML (SVG, HTML), where most control bytes, and bytes that are
// not UTF-8, make the whole document ill-formed. Every viewer of such text goes through here.
#pragma once

#include <string>
#include <string_view>

namespace oaprof::report {

// `text` with every byte below 0x20 and 0x7f written as a visible \xNN (lower-case hex); every
// other byte as it is. For tables on a terminal.
std::string visible_text(std::string_view text);

// `text` for XML 1.0 character data or an attribute value: visible_text's escapes, & < > " '
// as entities, and every byte that does not start a character XML allows (bytes that are not
// UTF-8, surrogates, U+FFFE, U+FFFF) as \xNN, so that any input gives a well-formed document.
std::string xml_escape(std::string_view text);

}  // namespace oaprof::report
