// How oaprof writes and reads one CSV cell, in one place: every CSV it writes (a run's rows,
// merged runs, joined passes, kernel_runner --csv, oaprof decode) quotes through these, and the
// readers of its own CSVs undo them, so a kernel name reads back the same in every file.
//
// Text cells carry names a program or a user chose. RFC 4180 quotes a cell that holds a comma,
// a double quote, CR or LF (quotes inside doubled). A spreadsheet that opens the file would also
// evaluate a text cell starting with = + - @ (or tab, CR, which some strip first) as a formula:
// such a cell is neutralised by a single quote in front, and quoted.
//
// The rule that makes it reversible: the writer adds one ' to every text that, after any leading
// single quotes, starts with one of = + - @ tab CR ("=x" is written "'=x", "'=x" is written
// "''=x"), and always quotes that cell. The reader removes one ' from a cell that was quoted and
// has that form with at least one leading '. Every text of that form gets its ' from the writer,
// so read(write(t)) == t for any t; an unquoted cell (a hand-edited file) is read as it stands.
//
// Number cells are formatted by their writer and written as they are: -1.5 stays -1.5.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace oaprof::report {

// One text cell in its CSV form: neutralised and quoted as above.
std::string csv_text(std::string_view text);
// Whether csv_text(`text`) is `text` itself: nothing to quote or neutralise (most cells).
bool csv_text_as_is(std::string_view text);

// A line of text cells (a header, or cells of text alone), joined by commas, without newline.
std::string csv_text_line(const std::vector<std::string>& cells);

// The text of a cell as read from the file: `cell` with its enclosing quotes and doubled quotes
// already undone, `quoted` whether it was enclosed in quotes. Undoes csv_text's single quote.
std::string csv_text_read(std::string_view cell, bool quoted);

// Whether `text` is a finite number as oaprof writes them (decimal, an optional leading '-', an
// optional fraction and exponent): a cell that came back from a file as text and is written as a
// number, untouched, rather than as text.
bool csv_number_text(std::string_view text);

}  // namespace oaprof::report
