#ifndef ACTEX_STORAGE_UPLOADED_SHARDS_H_
#define ACTEX_STORAGE_UPLOADED_SHARDS_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "storage/output_folder.h"
#include "storage/shard_check.h"
#include "storage/upload_ledger.h"

namespace actex {

// Internals of the output verifier (storage/output_verifier.h): listed shards whose
// local copy is gone because --delete-after-upload deleted it once uploads.jsonl
// (storage/upload_ledger.h) recorded the upload.

// A host folder's uploads.jsonl as the verifier sees it.
struct FolderUploads {
  bool present = false;                         // the folder has an uploads.jsonl
  bool readable = true;                         // false: it is damaged, and a fault says where
  std::map<std::string, UploadRecord> records;  // by file: the last line for each
};

// Reads `folder`'s uploads.jsonl (absent: no records). A malformed line other than
// the last adds a fault naming the ledger and the line; the ledger is then treated
// as holding no record, so that no missing shard is excused by a damaged ledger.
FolderUploads ReadFolderUploads(const OutputFolder& folder, std::vector<VerifyFinding>* faults);

// What the ledger says of a listed shard that is missing locally.
struct MissingShardVerdict {
  // The ledger's last record of the file has exactly the listed bytes and crc32
  // and says the local copy was deleted (UploadedAndDeleted).
  bool uploaded_deleted = false;
  // The warning to give when uploaded_deleted, else the fault, saying whether the
  // ledger has no record, a record of other bytes or crc32, or one not deleted.
  std::string problem;
};
MissingShardVerdict JudgeMissingShard(const FolderUploads& uploads, const std::string& file,
                                      const ShardEntry& shard);

// Closed doc id ranges [first, last], possibly overlapping, for telling which
// rejects.jsonl entries fall inside the ranges of a folder's deleted shards.
class DocIdRanges {
 public:
  explicit DocIdRanges(std::vector<std::pair<int64_t, int64_t>> ranges);
  bool Contains(int64_t doc_id) const;

 private:
  // Sorted by first; second is the largest last of this and every earlier range,
  // so that overlapping ranges need no merging.
  std::vector<std::pair<int64_t, int64_t>> ranges_;
};

// The documents a deleted shard held, inferred from its listing since its doc ids
// cannot be read: every doc id of [first_doc_id, last_doc_id] that `owns` (the
// folder's share) and that `rejected` (sorted: the folder's rejects.jsonl) does
// not hold. The writer writes every document of its share that it does not reject,
// in doc id order, so for an intact folder there are exactly the listed "docs".
// The caller keeps last_doc_id below the corpus size (the range is walked).
std::vector<int64_t> InferDeletedShardDocuments(const ShardEntry& shard,
                                                const std::function<bool(int64_t)>& owns,
                                                const std::vector<int64_t>& rejected);

}  // namespace actex

#endif  // ACTEX_STORAGE_UPLOADED_SHARDS_H_
