#ifndef ACTEX_STORAGE_UPLOAD_LEDGER_H_
#define ACTEX_STORAGE_UPLOAD_LEDGER_H_

#include <cstdint>
#include <expected>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace actex {

// What the ledger knows of one file of a host folder: the bytes and crc32 (8 lowercase
// hex digits, as in metadata.json) of the copy the upload command was given, and
// whether the local copy was then deleted (--delete-after-upload).
struct UploadRecord {
  std::string file;
  int64_t bytes = 0;
  std::string crc32;
  bool deleted = false;
  double unix_seconds = 0;
};

// OUT/host_NN/uploads.jsonl: one JSON object per line, appended and fsynced after an
// upload command succeeded and before the local copy is deleted, so a crash at any
// moment leaves either no line (the file is uploaded again) or a line for a file that
// is safely uploaded. A file uploaded twice (metadata.json after every shard) has a
// line per upload; the last one counts.
//
//   {"file":"shard_000001.safetensors","bytes":1048576,"crc32":"1a2b3c4d",
//    "deleted":true,"unix_seconds":1795000000.5}
class UploadLedger {
 public:
  // Reads `dir`/uploads.jsonl; a missing file is an empty ledger. A torn last line
  // (the process died while appending) is ignored; any other malformed line is an
  // error naming the file and line.
  static std::expected<std::map<std::string, UploadRecord>, std::string> Read(
      const std::string& dir);

  // Opens `dir`/uploads.jsonl for appending (the folder and file created if missing).
  // A torn last line left by a crash is cut off first, so the next record starts a line.
  static std::expected<std::unique_ptr<UploadLedger>, std::string> Open(const std::string& dir);
  ~UploadLedger();

  // Appends the record as one line and fsyncs it.
  std::expected<void, std::string> Append(const UploadRecord& record);

 private:
  UploadLedger();
  struct State;
  std::unique_ptr<State> state_;
};

// True when the ledger records an upload of `file` with exactly these bytes and crc32.
bool UploadVouched(const std::map<std::string, UploadRecord>& ledger, const std::string& file,
                   int64_t bytes, const std::string& crc32);

// True when the ledger vouches for a listed shard whose local copy is gone: the shard
// was uploaded with exactly the listed bytes and crc32 and then deleted.
bool UploadedAndDeleted(const std::map<std::string, UploadRecord>& ledger, const std::string& file,
                        int64_t bytes, const std::string& crc32);

// The shards a parsed metadata.json lists whose listed bytes and crc32 the ledger
// does not vouch for, in listing order; an error when the listing is malformed.
std::expected<std::vector<std::string>, std::string> ListedShardsNotUploaded(
    const nlohmann::json& metadata, const std::map<std::string, UploadRecord>& ledger);

// The files of host folder `dir` that are not uploaded as they are now: each shard
// metadata.json lists whose listed bytes and crc32 the ledger does not vouch for,
// then rejects.jsonl (when there is one) and metadata.json unless the ledger vouches
// for their current bytes. Empty when the folder's remote copy is whole.
std::expected<std::vector<std::string>, std::string> FilesNotUploaded(const std::string& dir);

}  // namespace actex

#endif  // ACTEX_STORAGE_UPLOAD_LEDGER_H_
