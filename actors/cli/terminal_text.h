#ifndef ACTEX_ACTORS_CLI_TERMINAL_TEXT_H_
#define ACTEX_ACTORS_CLI_TERMINAL_TEXT_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace actex {

// Text for people at a terminal: numbers and durations as they read them, text
// from the wire made harmless, and columns lined up.

// 1234567 -> "1,234,567".
std::string GroupThousands(int64_t value);

// A rate rounded to a whole number, grouped; "?" when not finite or negative.
std::string FormatRate(double per_second);

// 42 -> "42s", 185 -> "3m05s", 7440 -> "2h04m", 266400 -> "3d02h"; "?" when not
// finite or negative.
std::string FormatDuration(double seconds);

// Text from the wire made safe for a terminal: at most `max_chars` characters, control
// characters (C0, DEL, C1: they could move the cursor or recolour the screen) become
// spaces and bytes that are not UTF-8 become '?'; a cut text ends in '~'.
std::string TerminalSafe(const std::string& text, size_t max_chars);

// Characters a terminal shows for UTF-8 `text` (one per code point; wide glyphs are rare
// in these fields and only misalign their own row).
size_t DisplayWidth(const std::string& text);

enum class Align { kLeft, kRight };

// Rows of cells as lines, each column padded to its widest cell, two spaces apart.
std::string RenderRows(const std::vector<std::vector<std::string>>& rows,
                       const std::vector<Align>& aligns);

}  // namespace actex

#endif  // ACTEX_ACTORS_CLI_TERMINAL_TEXT_H_
