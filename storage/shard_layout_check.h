#ifndef ACTEX_STORAGE_SHARD_LAYOUT_CHECK_H_
#define ACTEX_STORAGE_SHARD_LAYOUT_CHECK_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "storage/shard_check.h"

namespace actex {

// The tensors a shard must hold (its sites and the id tensors, each with the dtype
// and shape its listing implies, and no other; byte ranges that neither overlap nor
// leave data to no tensor), checked against its safetensors header `header_json`
// over `data_bytes` of data. Adds a
// fault per problem to `faults`; returns the token count when doc_ids and positions
// are usable for the document checks (CheckShard).
std::optional<int64_t> CheckShardLayout(const std::string& header_json, int64_t data_bytes,
                                        const ShardEntry& shard, std::vector<std::string>* faults);

}  // namespace actex

#endif  // ACTEX_STORAGE_SHARD_LAYOUT_CHECK_H_
