#ifndef ACTEX_BASE_TEXT_H_
#define ACTEX_BASE_TEXT_H_

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace actex {

// A JSON value from a file for an error message. dump() recurses once per nesting
// level, so a value of 100000 nested arrays would overflow the stack, and a huge value
// would be copied whole into the message. Flat values (and arrays of at most 16 flat
// values) are shown as written, cut at 200 bytes; anything else by its size ("an array
// of 3 elements").
std::string DescribeJson(const nlohmann::json& value);

// A tensor shape as people write it: "[896, 4864]".
std::string ShapeText(const std::vector<int64_t>& shape);

// A byte count as people read it, to three significant figures: "512 bytes",
// "3.25 KiB", "23.4 GiB".
std::string BytesText(double bytes);

}  // namespace actex

#endif  // ACTEX_BASE_TEXT_H_
