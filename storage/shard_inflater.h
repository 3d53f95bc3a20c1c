#ifndef ACTEX_STORAGE_SHARD_INFLATER_H_
#define ACTEX_STORAGE_SHARD_INFLATER_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "storage/gzip_decoder.h"
#include "storage/safetensors.h"

namespace actex {

// Inflates a gzip'd safetensors shard as its compressed bytes are fed in and keeps
// only what the verifier reads: the header, and the bytes of the doc_ids and
// positions tensors (12 bytes a token however wide the sites are) and of any tensors
// named to CaptureAlso (an SAE's latents). The activations stream past in a fixed
// buffer, so a shard of any size costs the same memory.
// Concatenated gzip members read as one stream, as gunzip does.
class ShardInflater {
 public:
  ShardInflater();
  ~ShardInflater();
  ShardInflater(const ShardInflater&) = delete;
  ShardInflater& operator=(const ShardInflater&) = delete;

  // Keeps the bytes of these tensors too (before the first Feed); a name the shard
  // lacks captures nothing.
  void CaptureAlso(const std::vector<std::string>& names);
  // Compressed bytes in file order. After an error the rest is ignored.
  void Feed(const uint8_t* data, size_t size);
  // The compressed input has ended: a stream cut short becomes the error.
  void Finish();

  // Empty, or what is wrong with the gzip stream ("not gzip data: ...",
  // "gzip stream ends early (truncated)").
  const std::string& error() const { return error_; }
  int64_t inflated_bytes() const { return inflated_bytes_; }
  // The 8-byte length and the whole JSON header have been inflated.
  bool header_complete() const { return header_complete_; }
  const std::string& header_json() const { return header_; }
  // Bytes after the header.
  int64_t data_bytes() const;
  // The captured tensor bytes; shorter than the header says if the stream was.
  std::span<const uint8_t> doc_ids() const { return Captured("doc_ids"); }
  std::span<const uint8_t> positions() const { return Captured("positions"); }
  // A CaptureAlso tensor's bytes; empty for a name not captured.
  std::span<const uint8_t> Captured(const std::string& name) const;
  // Every tensor captured with bytes, as the header describes it (dtype, shape), by name:
  // what a SafetensorsFile of the inflated shard would map of them.
  std::map<std::string, SafetensorsTensor> CapturedTensors() const;

 private:
  struct Capture {
    int64_t begin = 0, end = 0;  // data_offsets of the tensor
    std::vector<uint8_t> bytes;
  };
  // Takes inflated bytes: the length prefix, the header, then the data section.
  void Consume(const uint8_t* data, size_t size);
  // Once the header is complete: where the captured tensors lie in the data.
  void PlanCaptures();

  GzipDecoder decoder_;
  std::vector<uint8_t> output_;
  std::string error_;
  int64_t inflated_bytes_ = 0;
  uint8_t length_prefix_[8] = {};
  uint64_t header_length_ = 0;
  bool header_complete_ = false;
  std::string header_;
  std::map<std::string, Capture> captures_;  // by tensor name
};

}  // namespace actex

#endif  // ACTEX_STORAGE_SHARD_INFLATER_H_
