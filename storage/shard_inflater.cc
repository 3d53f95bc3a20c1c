#include "storage/shard_inflater.h"

#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>

namespace actex {

namespace {

constexpr size_t kOutputChunkBytes = size_t{1} << 20;
constexpr size_t kLengthPrefixBytes = 8;
// The safetensors format caps its header at 100 MB; a larger length means damage,
// and believing it would make the verifier buffer whatever follows.
constexpr uint64_t kMaxHeaderBytes = uint64_t{100} << 20;
// zlib's windowBits: 15 plus 16 accepts the gzip wrapper only, as the writer uses.
constexpr int kGzipWindowBits = 15 + 16;

}  // namespace

struct ShardInflater::Stream {
  z_stream z{};
  bool initialized = false;
  int members_ended = 0;
};

ShardInflater::ShardInflater() : stream_(std::make_unique<Stream>()), output_(kOutputChunkBytes) {
  if (inflateInit2(&stream_->z, kGzipWindowBits) != Z_OK) {
    error_ = "cannot start a gzip decoder: out of memory";
    return;
  }
  stream_->initialized = true;
}

ShardInflater::~ShardInflater() {
  if (stream_->initialized) inflateEnd(&stream_->z);
}

void ShardInflater::Feed(const uint8_t* data, size_t size) {
  if (!error_.empty() || size == 0) return;
  z_stream& z = stream_->z;
  z.next_in = const_cast<Bytef*>(data);
  z.avail_in = static_cast<uInt>(size);
  while (error_.empty()) {
    if (stream_ended_) {
      if (z.avail_in == 0) break;
      inflateReset(&z);  // another gzip member follows
      stream_ended_ = false;
    }
    z.next_out = output_.data();
    z.avail_out = static_cast<uInt>(output_.size());
    const int status = inflate(&z, Z_NO_FLUSH);
    Consume(output_.data(), output_.size() - z.avail_out);
    if (status == Z_STREAM_END) {
      stream_ended_ = true;
      ++stream_->members_ended;
      continue;
    }
    if (status == Z_BUF_ERROR || (status == Z_OK && z.avail_in == 0 && z.avail_out != 0)) break;
    if (status != Z_OK) {
      const std::string message = z.msg != nullptr ? z.msg : "error " + std::to_string(status);
      error_ = stream_->members_ended > 0
                   ? "bytes after the end of the gzip stream are not gzip data (" + message + ")"
                   : "not valid gzip data: " + message;
    }
  }
  z.next_in = nullptr;
  z.avail_in = 0;
}

void ShardInflater::Finish() {
  if (!error_.empty()) return;
  if (stream_->members_ended == 0 && inflated_bytes_ == 0 && stream_->z.total_in == 0) {
    error_ = "empty file, not gzip data";
  } else if (!stream_ended_) {
    error_ = "gzip stream ends early (truncated file)";
  }
}

int64_t ShardInflater::data_bytes() const {
  return header_complete_ ? inflated_bytes_ - static_cast<int64_t>(kLengthPrefixBytes) -
                                static_cast<int64_t>(header_length_)
                          : 0;
}

void ShardInflater::Consume(const uint8_t* data, size_t size) {
  while (size > 0 && error_.empty()) {
    size_t taken = 0;
    if (inflated_bytes_ < static_cast<int64_t>(kLengthPrefixBytes)) {
      const size_t at = static_cast<size_t>(inflated_bytes_);
      taken = std::min(size, kLengthPrefixBytes - at);
      std::memcpy(length_prefix_ + at, data, taken);
      if (at + taken == kLengthPrefixBytes) {
        std::memcpy(&header_length_, length_prefix_, sizeof(header_length_));  // little-endian
        if (header_length_ > kMaxHeaderBytes) {
          error_ = "header length " + std::to_string(header_length_) +
                   " bytes is beyond the format's 100 MB limit (damaged or not a safetensors file)";
        } else if (header_length_ == 0) {
          header_complete_ = true;
          PlanCaptures();
        }
      }
    } else if (!header_complete_) {
      taken = std::min<size_t>(size, header_length_ - header_.size());
      header_.append(reinterpret_cast<const char*>(data), taken);
      if (header_.size() == header_length_) {
        header_complete_ = true;
        PlanCaptures();
      }
    } else {
      taken = size;
      const int64_t begin = data_bytes(), end = begin + static_cast<int64_t>(size);
      for (Capture* capture : {&doc_ids_, &positions_}) {
        const int64_t from = std::max(begin, capture->begin), to = std::min(end, capture->end);
        if (from < to) {
          capture->bytes.insert(capture->bytes.end(), data + (from - begin), data + (to - begin));
        }
      }
    }
    inflated_bytes_ += static_cast<int64_t>(taken);
    data += taken;
    size -= taken;
  }
}

void ShardInflater::PlanCaptures() {
  const nlohmann::json header = nlohmann::json::parse(header_, nullptr, false);
  if (header.is_discarded() || !header.is_object()) return;  // reported by the layout check
  for (auto [name, capture] : {std::pair{"doc_ids", &doc_ids_}, {"positions", &positions_}}) {
    auto entry = header.find(name);
    if (entry == header.end() || !entry->is_object() || !entry->contains("data_offsets")) continue;
    const auto& offsets = (*entry)["data_offsets"];
    if (!offsets.is_array() || offsets.size() != 2 || !offsets[0].is_number_unsigned() ||
        !offsets[1].is_number_unsigned()) {
      continue;
    }
    const auto begin = offsets[0].get<uint64_t>(), end = offsets[1].get<uint64_t>();
    if (begin > end || end > static_cast<uint64_t>(INT64_MAX)) continue;
    capture->begin = static_cast<int64_t>(begin);
    capture->end = static_cast<int64_t>(end);
  }
}

}  // namespace actex
