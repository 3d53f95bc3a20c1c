#ifndef ACTEX_STORAGE_SHUFFLE_ROWS_H_
#define ACTEX_STORAGE_SHUFFLE_ROWS_H_

#include <cstdint>
#include <expected>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "storage/sae_record.h"
#include "storage/stored_site.h"

namespace actex {

// Internals of the shuffle (storage/activation_shuffle.h) and of its verifier
// (storage/shuffled_verifier.h): the rows of an extraction's output, read shard by
// shard as fixed-size records.

// One listed shard of the source output.
struct SourceShard {
  std::string file;  // relative to the output folder: "host_00/shard_000001.safetensors"
  std::string path;  // on disk
  bool gzip = false;
  int64_t bytes = 0, tokens = 0;
  uint32_t crc32 = 0;
  int64_t first_doc_id = 0, last_doc_id = 0;  // the documents it holds, as listed
};

// Every listed shard of every host folder below an output folder (or of the one
// host folder given), host folders in name order, shards in listed order: the
// order that numbers the source rows.
struct SourceOutput {
  std::string dir;
  std::vector<StoredSite> sites;  // tensor order
  std::string dtype;              // of its float sites: "F32", "F16" or "BF16"
  std::vector<SourceShard> shards;
  int64_t tokens = 0;
  std::vector<SaeRecord> saes;  // config.saes: the SAEs whose latents the shards hold
};

// Reads the host folders' metadata.json. Errors name the folder and the fault: no
// host folder, a listing the verifier would fault, an unfinished run, host folders
// with other sites or dtype.
std::expected<SourceOutput, std::string> ReadSourceOutput(const std::string& dir);

// One row as the shuffle stores it: every chosen site in the output dtype (an integer
// site as I32, its values unchanged), then token_id (I32), doc_id (I64), position
// (I32), all little-endian, unpadded.
struct RecordLayout {
  std::vector<StoredSite> sites;  // chosen sites, output order
  std::vector<int> source_site;   // index of each in SourceOutput::sites
  std::string dtype;              // output "F32", "F16" or "BF16" of the float sites
  int64_t site_bytes = 0;         // all chosen sites of one row
  int64_t record_bytes = 0;       // site_bytes + 16

  int32_t token_id(const uint8_t* record) const;
  int64_t doc_id(const uint8_t* record) const;
  int32_t position(const uint8_t* record) const;
};

// Chosen `sites` (empty: all) of `source` in output `dtype` ("F32", "F16", "BF16";
// empty: the source's). Errors name an unknown site or dtype.
std::expected<RecordLayout, std::string> MakeRecordLayout(const SourceOutput& source,
                                                          const std::vector<std::string>& sites,
                                                          const std::string& dtype);

// The rows of one source shard. Open reads the whole file once to check its size
// and crc32 against the listing (a .gz shard is inflated into `scratch_path` on
// the way, which Close removes), then checks the safetensors header: the listed
// sites [tokens, width] in the listed dtype and the three id tensors. Reads then
// go through pread, so memory stays what the caller's buffers hold.
class SourceShardRows {
 public:
  static std::expected<std::unique_ptr<SourceShardRows>, std::string> Open(
      const SourceShard& shard, const SourceOutput& source, const std::string& scratch_path);
  ~SourceShardRows();

  int64_t rows() const { return rows_; }
  // Rows [begin, begin + count) as records of `layout`, into `records`
  // (count * layout.record_bytes bytes).
  std::expected<void, std::string> Read(int64_t begin, int64_t count, const RecordLayout& layout,
                                        uint8_t* records);

 private:
  SourceShardRows() = default;
  std::string path_, scratch_path_;
  int fd_ = -1;
  int64_t rows_ = 0;
  std::string source_dtype_;
  std::vector<int64_t> site_offsets_;  // file offset of each source site tensor
  int64_t token_ids_offset_ = 0, doc_ids_offset_ = 0, positions_offset_ = 0;
  std::vector<uint8_t> buffer_;
};

// Converts `count` values from one float dtype to another ("F32", "F16", "BF16"); a
// dtype to itself (I32 included) is a copy.
void ConvertFloats(const std::string& from, const uint8_t* in, const std::string& to, uint8_t* out,
                   int64_t count);

}  // namespace actex

#endif  // ACTEX_STORAGE_SHUFFLE_ROWS_H_
