#include "storage/parquet/page_codec.h"

#include <brotli/decode.h>
#include <lz4.h>
#include <snappy.h>
#include <zlib.h>
#include <zstd.h>

#include <climits>
#include <cstring>

#include "storage/parquet/parquet_metadata.h"

namespace actex::parquet {
namespace {

std::string SizeMismatch(const char* codec, size_t got, size_t want) {
  return std::string(codec) + " page inflates to " + std::to_string(got) +
         " bytes, its header says " + std::to_string(want);
}

std::expected<void, std::string> Snappy(const uint8_t* input, size_t input_size, uint8_t* output,
                                        size_t output_size) {
  const char* compressed = reinterpret_cast<const char*>(input);
  size_t length = 0;
  if (!snappy::GetUncompressedLength(compressed, input_size, &length)) {
    return std::unexpected(std::string("SNAPPY page is corrupt"));
  }
  if (length != output_size) return std::unexpected(SizeMismatch("SNAPPY", length, output_size));
  if (!snappy::RawUncompress(compressed, input_size, reinterpret_cast<char*>(output))) {
    return std::unexpected(std::string("SNAPPY page is corrupt"));
  }
  return {};
}

// GZIP pages are gzip members (zlib-wrapped data is accepted too, as other readers do).
std::expected<void, std::string> Gzip(const uint8_t* input, size_t input_size, uint8_t* output,
                                      size_t output_size) {
  if (input_size > UINT_MAX || output_size > UINT_MAX) {
    return std::unexpected(std::string("GZIP page is larger than 4 GiB"));
  }
  z_stream stream{};
  if (inflateInit2(&stream, 15 + 32) != Z_OK) {
    return std::unexpected(std::string("GZIP: cannot start zlib"));
  }
  stream.next_in = const_cast<Bytef*>(input);
  stream.avail_in = static_cast<uInt>(input_size);
  stream.next_out = output;
  stream.avail_out = static_cast<uInt>(output_size);
  int status = inflate(&stream, Z_FINISH);
  const size_t produced = output_size - stream.avail_out;
  inflateEnd(&stream);
  if (status == Z_BUF_ERROR && stream.avail_out == 0) {
    return std::unexpected("GZIP page inflates to more than the " + std::to_string(output_size) +
                           " bytes its header says");
  }
  if (status != Z_STREAM_END) {
    return std::unexpected(std::string("GZIP page is corrupt: ") +
                           (stream.msg != nullptr ? stream.msg : "truncated data"));
  }
  if (produced != output_size) return std::unexpected(SizeMismatch("GZIP", produced, output_size));
  return {};
}

std::expected<void, std::string> Zstd(const uint8_t* input, size_t input_size, uint8_t* output,
                                      size_t output_size) {
  size_t produced = ZSTD_decompress(output, output_size, input, input_size);
  if (ZSTD_isError(produced)) {
    return std::unexpected(std::string("ZSTD page is corrupt: ") + ZSTD_getErrorName(produced));
  }
  if (produced != output_size) return std::unexpected(SizeMismatch("ZSTD", produced, output_size));
  return {};
}

std::expected<void, std::string> Lz4Raw(const uint8_t* input, size_t input_size, uint8_t* output,
                                        size_t output_size) {
  if (input_size > INT_MAX || output_size > INT_MAX) {
    return std::unexpected(std::string("LZ4_RAW page is larger than 2 GiB"));
  }
  int produced =
      LZ4_decompress_safe(reinterpret_cast<const char*>(input), reinterpret_cast<char*>(output),
                          static_cast<int>(input_size), static_cast<int>(output_size));
  if (produced < 0) return std::unexpected(std::string("LZ4_RAW page is corrupt"));
  if (static_cast<size_t>(produced) != output_size) {
    return std::unexpected(SizeMismatch("LZ4_RAW", produced, output_size));
  }
  return {};
}

std::expected<void, std::string> Brotli(const uint8_t* input, size_t input_size, uint8_t* output,
                                        size_t output_size) {
  size_t produced = output_size;
  if (BrotliDecoderDecompress(input_size, input, &produced, output) !=
      BROTLI_DECODER_RESULT_SUCCESS) {
    return std::unexpected("BROTLI page is corrupt or inflates to more than the " +
                           std::to_string(output_size) + " bytes its header says");
  }
  if (produced != output_size)
    return std::unexpected(SizeMismatch("BROTLI", produced, output_size));
  return {};
}

}  // namespace

std::expected<void, std::string> CheckCodec(int32_t codec) {
  switch (static_cast<Codec>(codec)) {
    case Codec::kUncompressed:
    case Codec::kSnappy:
    case Codec::kGzip:
    case Codec::kBrotli:
    case Codec::kZstd:
    case Codec::kLz4Raw:
      return {};
    default:
      return std::unexpected("unsupported codec " + CodecName(codec));
  }
}

std::expected<void, std::string> Decompress(int32_t codec, const uint8_t* input, size_t input_size,
                                            uint8_t* output, size_t output_size) {
  switch (static_cast<Codec>(codec)) {
    case Codec::kUncompressed:
      if (input_size != output_size) {
        return std::unexpected(SizeMismatch("UNCOMPRESSED", input_size, output_size));
      }
      if (output_size > 0) std::memcpy(output, input, output_size);
      return {};
    case Codec::kSnappy:
      return Snappy(input, input_size, output, output_size);
    case Codec::kGzip:
      return Gzip(input, input_size, output, output_size);
    case Codec::kZstd:
      return Zstd(input, input_size, output, output_size);
    case Codec::kLz4Raw:
      return Lz4Raw(input, input_size, output, output_size);
    case Codec::kBrotli:
      return Brotli(input, input_size, output, output_size);
    default:
      return std::unexpected("unsupported codec " + CodecName(codec));
  }
}

}  // namespace actex::parquet
