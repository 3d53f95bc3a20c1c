#ifndef ACTEX_STORAGE_PARQUET_PAGE_CODEC_H_
#define ACTEX_STORAGE_PARQUET_PAGE_CODEC_H_

#include <cstddef>
#include <cstdint>
#include <expected>
#include <string>

namespace actex::parquet {

// Whether a column chunk's codec (parquet.thrift CompressionCodec) can be read:
// UNCOMPRESSED, SNAPPY, GZIP, BROTLI, ZSTD, LZ4_RAW. LZO and the Hadoop-framed LZ4
// are refused as "unsupported codec <NAME>".
std::expected<void, std::string> CheckCodec(int32_t codec);

// Decompresses one page (or a v2 page's values section) of `codec` into exactly
// output[0, output_size): fewer or more bytes than that is an error, so a page
// whose header lies about its size never reads or writes out of bounds.
std::expected<void, std::string> Decompress(int32_t codec, const uint8_t* input, size_t input_size,
                                            uint8_t* output, size_t output_size);

}  // namespace actex::parquet

#endif  // ACTEX_STORAGE_PARQUET_PAGE_CODEC_H_
