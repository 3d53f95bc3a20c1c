#include "model/model_config.h"

#include <string>

namespace actex {

std::string ModelConfig::PositionLimitSource() const {
  if (rotary) return "actex's rotary table bound of " + std::to_string(kRotaryPositionLimit);
  return "learned positions: n_positions " + std::to_string(max_positions) + " in config.json";
}

}  // namespace actex
