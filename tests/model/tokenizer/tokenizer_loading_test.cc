#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "model/tokenizer/file_digest.h"
#include "model/tokenizer/tokenizer_folder.h"
#include "tests/support/test_files.h"

namespace actex {
namespace {

std::string FixtureDir(const std::string& folder) {
  return std::string(ACTEX_FIXTURES_DIR) + "/tokenizers/" + folder;
}

std::string ReadFixtureFile(const std::string& folder, const std::string& name) {
  std::ifstream in(FixtureDir(folder) + "/" + name, std::ios::binary);
  std::stringstream contents;
  contents << in.rdbuf();
  return contents.str();
}

bool IsLowerHex(const std::string& text) {
  return text.find_first_not_of("0123456789abcdef") == std::string::npos;
}

TEST(LoadTokenizer, MissingDirectoryIsAnErrorNamingIt) {
  const std::string dir = "/nonexistent/actex/tokenizer_dir";
  EXPECT_FALSE(HasTokenizer(dir));
  auto tokenizer = LoadTokenizer(dir);
  ASSERT_FALSE(tokenizer.has_value());
  EXPECT_NE(tokenizer.error().find(dir), std::string::npos) << tokenizer.error();
  EXPECT_NE(tokenizer.error().find("no tokenizer.json or tokenizer.model"), std::string::npos)
      << tokenizer.error();
}

TEST(LoadTokenizer, DirectoryWithoutTokenizerFilesSaysSo) {
  TempDir dir;
  dir.Write("config.json", "{}");
  EXPECT_FALSE(HasTokenizer(dir.path()));
  auto tokenizer = LoadTokenizer(dir.path());
  ASSERT_FALSE(tokenizer.has_value());
  EXPECT_NE(tokenizer.error().find(dir.path()), std::string::npos) << tokenizer.error();
  EXPECT_NE(tokenizer.error().find("no tokenizer.json or tokenizer.model"), std::string::npos)
      << tokenizer.error();
}

TEST(LoadTokenizer, CorruptTokenizerJsonIsAnErrorNamingTheFile) {
  TempDir dir;
  const std::string path = dir.Write("tokenizer.json", "{\"model\": [1, 2");
  EXPECT_TRUE(HasTokenizer(dir.path()));
  auto tokenizer = LoadTokenizer(dir.path());
  ASSERT_FALSE(tokenizer.has_value());
  EXPECT_NE(tokenizer.error().find(path), std::string::npos) << tokenizer.error();
}

TEST(LoadTokenizer, UnknownModelTypeIsAnErrorNamingFileAndField) {
  TempDir dir;
  const std::string path = dir.Write(
      "tokenizer.json",
      R"({"normalizer": null, "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false},
          "added_tokens": [], "model": {"type": "Unigram", "vocab": [["a", 0.0]]}})");
  auto tokenizer = LoadTokenizer(dir.path());
  ASSERT_FALSE(tokenizer.has_value());
  EXPECT_NE(tokenizer.error().find(path), std::string::npos) << tokenizer.error();
  EXPECT_NE(tokenizer.error().find("model.type \"Unigram\""), std::string::npos)
      << tokenizer.error();
}

TEST(LoadTokenizer, CorruptTokenizerModelIsAnErrorNamingTheFile) {
  TempDir dir;
  const std::string path = dir.Write("tokenizer.model", "this is not a protobuf");
  auto tokenizer = LoadTokenizer(dir.path());
  ASSERT_FALSE(tokenizer.has_value());
  EXPECT_NE(tokenizer.error().find(path), std::string::npos) << tokenizer.error();
}

TEST(LoadTokenizer, PrefersTokenizerJsonOverTokenizerModel) {
  TempDir dir;
  dir.Write("tokenizer.json", ReadFixtureFile("bpe-qwen2-style", "tokenizer.json"));
  dir.Write("tokenizer.model", ReadFixtureFile("spm-bpe", "tokenizer.model"));
  auto tokenizer = LoadTokenizer(dir.path());
  ASSERT_TRUE(tokenizer.has_value()) << tokenizer.error();
  EXPECT_EQ((*tokenizer)->file_path(), dir.path() + "/tokenizer.json");
}

TEST(LoadTokenizer, UnusableTokenizerJsonIsAnErrorEvenBesideTokenizerModel) {
  TempDir dir;
  const std::string path = dir.Write("tokenizer.json", "not json");
  dir.Write("tokenizer.model", ReadFixtureFile("spm-bpe", "tokenizer.model"));
  auto tokenizer = LoadTokenizer(dir.path());
  ASSERT_FALSE(tokenizer.has_value());
  EXPECT_NE(tokenizer.error().find(path), std::string::npos) << tokenizer.error();
  EXPECT_NE(tokenizer.error().find("tokenizer.model in the same directory is not used"),
            std::string::npos)
      << tokenizer.error();
}

TEST(LoadTokenizer, FallsBackToTokenizerModel) {
  TempDir dir;
  dir.Write("tokenizer.model", ReadFixtureFile("spm-bpe", "tokenizer.model"));
  EXPECT_TRUE(HasTokenizer(dir.path()));
  auto tokenizer = LoadTokenizer(dir.path());
  ASSERT_TRUE(tokenizer.has_value()) << tokenizer.error();
  EXPECT_EQ((*tokenizer)->file_path(), dir.path() + "/tokenizer.model");
}

TEST(LoadTokenizer, FileHashIsTheSha256OfTheFileBytes) {
  for (const auto& [folder, file] :
       {std::pair<std::string, std::string>{"bpe-qwen2-style", "tokenizer.json"},
        {"spm-unigram", "tokenizer.model"},
        {"spm-bpe", "tokenizer.model"}}) {
    auto first = LoadTokenizer(FixtureDir(folder));
    auto second = LoadTokenizer(FixtureDir(folder));
    ASSERT_TRUE(first.has_value()) << first.error();
    ASSERT_TRUE(second.has_value()) << second.error();
    const std::string& hash = (*first)->file_hash();
    EXPECT_EQ(hash.size(), 64u) << folder;
    EXPECT_TRUE(IsLowerHex(hash)) << hash;
    EXPECT_EQ(hash, (*second)->file_hash()) << folder;
    EXPECT_EQ(hash, Sha256HexOfBytes(ReadFixtureFile(folder, file))) << folder;
  }
  EXPECT_NE((*LoadTokenizer(FixtureDir("spm-unigram")))->file_hash(),
            (*LoadTokenizer(FixtureDir("spm-bpe")))->file_hash());
}

TEST(Sha256HexOfBytes, MatchesTheFips180TestVector) {
  EXPECT_EQ(Sha256HexOfBytes("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(Sha256HexOfBytes(""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

// A tokenizer.json that is not a file is named as what it is, not passed over as absent
// nor parsed as empty JSON.
TEST(LoadTokenizer, ATokenizerJsonThatIsADirectoryOrADanglingLinkIsNamedAsSuch) {
  TempDir dir;
  std::filesystem::create_directory(dir.path() + "/tokenizer.json");
  EXPECT_TRUE(HasTokenizer(dir.path()));
  auto loaded = LoadTokenizer(dir.path());
  ASSERT_FALSE(loaded.has_value());
  EXPECT_EQ(loaded.error(), dir.path() + "/tokenizer.json is a directory, not a regular file");
  std::filesystem::remove(dir.path() + "/tokenizer.json");
  std::filesystem::create_symlink(dir.path() + "/gone.json", dir.path() + "/tokenizer.json");
  loaded = LoadTokenizer(dir.path());
  ASSERT_FALSE(loaded.has_value());
  EXPECT_NE(loaded.error().find("tokenizer.json is a symbolic link to " + dir.path() +
                                "/gone.json, which does not exist"),
            std::string::npos)
      << loaded.error();
}

TEST(ReadTokenizerFile, MissingFileErrorNamesPathAndOsError) {
  auto bytes = ReadTokenizerFile("/nonexistent/actex/file");
  ASSERT_FALSE(bytes.has_value());
  EXPECT_NE(bytes.error().find("/nonexistent/actex/file"), std::string::npos);
  EXPECT_NE(bytes.error().find("No such file"), std::string::npos) << bytes.error();
}

TEST(SentencePieceTokenizer, RefusesInvalidUtf8) {
  auto tokenizer = LoadTokenizer(FixtureDir("spm-unigram"));
  ASSERT_TRUE(tokenizer.has_value()) << tokenizer.error();
  auto ids = (*tokenizer)->Encode("ok \xC3\x28");
  ASSERT_FALSE(ids.has_value());
  EXPECT_NE(ids.error().find("UTF-8"), std::string::npos) << ids.error();
}

}  // namespace
}  // namespace actex
