#ifndef ACTEX_TESTS_STORAGE_JSON_MUTATIONS_H_
#define ACTEX_TESTS_STORAGE_JSON_MUTATIONS_H_

// Test support: every careless edit of a JSON file actex wrote, mechanically. Each
// field (recursively through objects, and through the first element of arrays) is
// removed, or set to null, a string, a negative and a fractional number, true, an
// empty array and an empty object; the whole document is replaced too.

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace actex {

struct JsonMutation {
  std::string what;  // "/shards/0/bytes = null"
  nlohmann::json document;
};

inline void CollectPointers(const nlohmann::json& value, const nlohmann::json::json_pointer& at,
                            std::vector<nlohmann::json::json_pointer>* pointers) {
  if (value.is_object()) {
    for (const auto& [key, member] : value.items()) {
      pointers->push_back(at / key);
      CollectPointers(member, at / key, pointers);
    }
  } else if (value.is_array() && !value.empty()) {
    pointers->push_back(at / 0);
    CollectPointers(value[0], at / 0, pointers);
  }
}

inline std::vector<JsonMutation> JsonMutations(const nlohmann::json& document) {
  const std::vector<nlohmann::json> replacements = {
      nullptr, "x", -1, 0.5, true, nlohmann::json::array(), nlohmann::json::object()};
  std::vector<JsonMutation> mutations;
  for (const auto& replacement : replacements) {
    mutations.push_back({"document = " + replacement.dump(), replacement});
  }
  std::vector<nlohmann::json::json_pointer> pointers;
  CollectPointers(document, nlohmann::json::json_pointer(), &pointers);
  for (const auto& pointer : pointers) {
    nlohmann::json removed = document;
    nlohmann::json& parent = removed[pointer.parent_pointer()];
    if (parent.is_object()) {
      parent.erase(pointer.back());
    } else {
      parent.erase(0);
    }
    mutations.push_back({pointer.to_string() + " removed", std::move(removed)});
    for (const auto& replacement : replacements) {
      nlohmann::json changed = document;
      changed[pointer] = replacement;
      mutations.push_back({pointer.to_string() + " = " + replacement.dump(), std::move(changed)});
    }
  }
  return mutations;
}

}  // namespace actex

#endif  // ACTEX_TESTS_STORAGE_JSON_MUTATIONS_H_
