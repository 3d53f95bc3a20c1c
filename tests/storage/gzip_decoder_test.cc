// GzipDecoder: pieces in, a small buffer out, members end to end, and every way a
// gzip stream can be wrong.
#include "storage/gzip_decoder.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <zlib.h>

#include <string>

namespace actex {
namespace {

using ::testing::HasSubstr;

std::string Gzip(const std::string& text) {
  z_stream z{};
  EXPECT_EQ(deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&z, text.size()) + 64, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  z.avail_in = static_cast<uInt>(text.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

// Feeds `compressed` in pieces of `piece` bytes and inflates into `buffer`-byte
// outputs; returns the text, or the first error.
std::expected<std::string, std::string> Decode(const std::string& compressed, size_t piece,
                                               size_t buffer) {
  GzipDecoder decoder;
  std::string text, output(buffer, '\0');
  for (size_t at = 0; at < compressed.size(); at += piece) {
    const size_t size = std::min(piece, compressed.size() - at);
    decoder.SetInput(reinterpret_cast<const uint8_t*>(compressed.data() + at), size);
    while (true) {
      auto inflated = decoder.Inflate(reinterpret_cast<uint8_t*>(output.data()), buffer);
      if (!inflated) return std::unexpected(inflated.error());
      EXPECT_LE(*inflated, buffer);
      text.append(output.data(), *inflated);
      if (*inflated == 0) break;
    }
    EXPECT_TRUE(decoder.NeedsInput());
  }
  if (auto finished = decoder.Finish(); !finished) return std::unexpected(finished.error());
  return text;
}

std::string SomeText() {
  std::string text;
  for (int i = 0; i < 3000; ++i) text += "line " + std::to_string(i * 7919 % 10007) + "\n";
  return text;
}

TEST(GzipDecoder, ReadsMembersEndToEndWhateverThePiecesAndBufferSizes) {
  const std::string first = SomeText(), second = "and a second member\n";
  const std::string compressed = Gzip(first) + Gzip(second) + Gzip("");
  for (size_t piece : {size_t{1}, size_t{3}, size_t{4096}, compressed.size()}) {
    for (size_t buffer : {size_t{1}, size_t{7}, size_t{1} << 16}) {
      auto text = Decode(compressed, piece, buffer);
      ASSERT_TRUE(text.has_value()) << text.error() << " piece " << piece << " buffer " << buffer;
      EXPECT_EQ(*text, first + second) << "piece " << piece << " buffer " << buffer;
    }
  }
}

TEST(GzipDecoder, BytesAfterTheLastMemberAreAnErrorNotDropped) {
  auto text = Decode(Gzip(SomeText()) + "plain text appended\n", 512, 4096);
  ASSERT_FALSE(text.has_value());
  EXPECT_THAT(text.error(), HasSubstr("bytes after the end of the gzip stream are not gzip data"));
}

TEST(GzipDecoder, TruncatedEmptyAndCorruptStreamsAreNamed) {
  const std::string compressed = Gzip(SomeText());
  auto cut = Decode(compressed.substr(0, compressed.size() - 5), 100, 4096);
  ASSERT_FALSE(cut.has_value());
  EXPECT_THAT(cut.error(), HasSubstr("gzip stream ends early (truncated file)"));

  auto empty = Decode("", 100, 4096);
  ASSERT_FALSE(empty.has_value());
  EXPECT_THAT(empty.error(), HasSubstr("empty file, not gzip data"));

  std::string corrupt = compressed;
  for (size_t i = 20; i < 60; ++i) corrupt[i] ^= 0x5A;
  auto bad = Decode(corrupt, 100, 4096);
  ASSERT_FALSE(bad.has_value());
  EXPECT_THAT(bad.error(), HasSubstr("not valid gzip data"));

  auto plain = Decode("{\"text\": \"not gzip\"}\n", 100, 4096);
  ASSERT_FALSE(plain.has_value());
  EXPECT_THAT(plain.error(), HasSubstr("not valid gzip data"));
}

}  // namespace
}  // namespace actex
