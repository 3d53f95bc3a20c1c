#ifndef ACTEX_STORAGE_PARQUET_COLUMN_CHOICE_H_
#define ACTEX_STORAGE_PARQUET_COLUMN_CHOICE_H_

#include <expected>
#include <string>
#include <vector>

#include "storage/parquet/column_chunk_reader.h"
#include "storage/parquet/parquet_metadata.h"

namespace actex::parquet {

// The one column a corpus file is read from, and how its levels map to rows.
struct ColumnChoice {
  LeafColumn leaf;
  bool token_list = false;  // `input_ids`: a list of integers per row
  // For a token list: definition levels below `null_below` mean the row's list is
  // null, below `empty_below` that it is empty, below the leaf's maximum that an
  // element is null. A string column's row is null below the leaf's maximum.
  int null_below = 0;
  int empty_below = 0;
};

// Picks the column from the footer's schema: a top-level `input_ids` list of INT32
// or INT64 if there is one (pre-tokenized, as a JSONL line with "input_ids"),
// else the top-level `text_field`, which must be a BYTE_ARRAY column. Errors name
// the column: "column \"text\" has physical type INT64, expected BYTE_ARRAY
// (string)", "no column \"text\" (columns: ...)".
std::expected<ColumnChoice, std::string> ChooseColumn(const std::vector<SchemaElement>& schema,
                                                      const std::string& text_field);

}  // namespace actex::parquet

#endif  // ACTEX_STORAGE_PARQUET_COLUMN_CHOICE_H_
