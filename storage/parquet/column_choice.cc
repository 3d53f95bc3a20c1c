#include "storage/parquet/column_choice.h"

namespace actex::parquet {
namespace {

constexpr char kTokenColumn[] = "input_ids";
// Nesting deeper than this is no corpus column, and a corrupt footer must not
// recurse without bound.
constexpr int kMaxDepth = 32;

struct Field {
  std::string name;
  size_t element = 0;  // index in the flattened schema
  int first_leaf = 0;  // leaves under it: [first_leaf, first_leaf + leaves)
  int leaves = 0;
};

struct Walk {
  const std::vector<SchemaElement>& schema;
  size_t next = 1;  // element 0 is the root
  std::vector<LeafColumn> leaves;
  std::vector<size_t> leaf_elements;
};

// Visits the subtree at walk.next, appending its leaves.
std::expected<void, std::string> VisitNode(Walk& walk, std::string path, int definition,
                                           int repetition, int depth) {
  if (walk.next >= walk.schema.size()) {
    return std::unexpected(std::string("schema lists fewer elements than its groups' children"));
  }
  if (depth > kMaxDepth) return std::unexpected(std::string("schema nests too deep"));
  const size_t index = walk.next++;
  const SchemaElement& element = walk.schema[index];
  path += path.empty() ? element.name : "." + element.name;
  if (element.repetition == Repetition::kOptional) ++definition;
  if (element.repetition == Repetition::kRepeated) ++definition, ++repetition;
  if (element.num_children < 0)
    return std::unexpected(std::string("schema element has negative children"));
  if (element.num_children == 0) {
    if (!element.type) return std::unexpected("schema leaf \"" + path + "\" has no type");
    walk.leaves.push_back(LeafColumn{static_cast<int>(walk.leaves.size()), path, *element.type,
                                     definition, repetition});
    walk.leaf_elements.push_back(index);
    return {};
  }
  for (int32_t child = 0; child < element.num_children; ++child) {
    if (auto visited = VisitNode(walk, path, definition, repetition, depth + 1); !visited) {
      return visited;
    }
  }
  return {};
}

std::expected<ColumnChoice, std::string> ChooseTokenList(const Walk& walk, const Field& field) {
  std::string refusal = "column \"" + std::string(kTokenColumn) +
                        "\" is not a list of INT32 or INT64 (pre-tokenized ids)";
  if (field.leaves != 1) return std::unexpected(refusal);
  const LeafColumn& leaf = walk.leaves[field.first_leaf];
  const bool integer = leaf.type == static_cast<int32_t>(PhysicalType::kInt32) ||
                       leaf.type == static_cast<int32_t>(PhysicalType::kInt64);
  if (!integer || leaf.max_repetition != 1) return std::unexpected(refusal);
  ColumnChoice choice{leaf, true};
  // Definition levels along the path: the top field's own, then the repeated node's.
  int definition = 0;
  bool repeated_seen = false;
  for (size_t i = field.element; i <= walk.leaf_elements[field.first_leaf]; ++i) {
    const SchemaElement& element = walk.schema[i];
    if (element.repetition == Repetition::kRequired) continue;
    ++definition;
    if (i == field.element && element.repetition == Repetition::kOptional) choice.null_below = 1;
    if (element.repetition == Repetition::kRepeated && !repeated_seen) {
      choice.empty_below = definition;
      repeated_seen = true;
    }
  }
  return choice;
}

}  // namespace

std::expected<ColumnChoice, std::string> ChooseColumn(const std::vector<SchemaElement>& schema,
                                                      const std::string& text_field) {
  if (schema.empty()) return std::unexpected(std::string("schema is empty"));
  Walk walk{schema, 1, {}, {}};
  std::vector<Field> fields;
  for (int32_t child = 0; child < schema[0].num_children; ++child) {
    Field field{schema[walk.next < schema.size() ? walk.next : 0].name, walk.next,
                static_cast<int>(walk.leaves.size())};
    if (auto visited = VisitNode(walk, "", 0, 0, 1); !visited)
      return std::unexpected(visited.error());
    field.leaves = static_cast<int>(walk.leaves.size()) - field.first_leaf;
    fields.push_back(field);
  }
  if (walk.next != schema.size()) {
    return std::unexpected(std::string("schema lists more elements than its groups' children"));
  }
  for (const Field& field : fields) {
    if (field.name == kTokenColumn) return ChooseTokenList(walk, field);
  }
  std::string names;
  for (const Field& field : fields) {
    if (field.name != text_field) {
      names += (names.empty() ? "" : ", ") + field.name;
      continue;
    }
    const LeafColumn& leaf = walk.leaves[field.first_leaf];
    if (field.leaves != 1 || leaf.path != field.name) {
      return std::unexpected("column \"" + text_field +
                             "\" is a nested group, expected a string column");
    }
    if (leaf.type != static_cast<int32_t>(PhysicalType::kByteArray)) {
      return std::unexpected("column \"" + text_field + "\" has physical type " +
                             PhysicalTypeName(leaf.type) + ", expected BYTE_ARRAY (string)");
    }
    if (leaf.max_repetition != 0) {
      return std::unexpected("column \"" + text_field +
                             "\" is repeated, expected one string per row");
    }
    return ColumnChoice{leaf};
  }
  return std::unexpected("no column \"" + text_field + "\" (nor \"" + kTokenColumn +
                         "\"); columns: " + (names.empty() ? "none" : names));
}

}  // namespace actex::parquet
