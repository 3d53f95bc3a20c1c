#include "base/whole_file.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace actex {

std::expected<std::string, std::string> ReadWholeFile(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return std::unexpected("cannot open " + path + ": " + std::strerror(errno));
  std::ostringstream text;
  text << file.rdbuf();
  if (file.bad()) return std::unexpected("cannot read " + path + ": " + std::strerror(errno));
  return text.str();
}

}  // namespace actex
