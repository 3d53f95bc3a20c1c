// The wire fuzzer starts from tests/fuzz/corpus/wire_receive. A seed whose envelope
// carries an old schema version is refused before its body is read, so once the version
// moves on, seeds that are not regenerated (tests/fuzz/README.md, "Corpus") leave the
// fuzzer testing the version check alone. These tests fail first.

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <msgpack.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "tests/fuzz/wire_dictionary.h"
#include "tests/support/test_files.h"
#include "transport/message_types.h"

namespace actex {
namespace {

const std::string kSeedDir = ACTEX_SOURCE_DIR "/tests/fuzz/corpus/wire_receive";

struct Envelope {
  uint64_t version = 0;
  uint64_t type = 0;
};

// The envelope of a generated seed: its first frame, a map {"v": …, "t": …}; nullopt
// for the seeds whose first frame is not one on purpose.
std::optional<Envelope> EnvelopeOf(const std::string& seed) {
  const std::string first = seed.substr(0, seed.find(kFuzzFrameDelimiter));
  try {
    msgpack::object_handle handle = msgpack::unpack(first.data(), first.size());
    const auto fields = handle.get().as<std::map<std::string, uint64_t>>();
    if (!fields.contains("v") || !fields.contains("t")) return std::nullopt;
    return Envelope{fields.at("v"), fields.at("t")};
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

TEST(WireFuzzerSeeds, AreOfTheCurrentSchemaVersionButTheOneThatNamesTheNext) {
  int generated = 0;
  for (const std::string& name : DirectoryEntries(kSeedDir)) {
    if (!name.starts_with("gen_")) continue;
    ++generated;
    const auto envelope = EnvelopeOf(ReadBytes(kSeedDir + "/" + name));
    if (!envelope) continue;  // gen_envelope_not_map and the like
    const uint64_t expected =
        name == "gen_schema_version_next" ? kSchemaVersion + 1 : kSchemaVersion;
    EXPECT_EQ(envelope->version, expected)
        << name << " is of another schema version: regenerate the seeds (make_seed_corpus)";
  }
  EXPECT_GT(generated, 0) << "no generated seeds in " << kSeedDir;
}

TEST(WireFuzzerSeeds, SendEveryMessageType) {
  std::set<uint64_t> seeded;
  for (const std::string& name : DirectoryEntries(kSeedDir)) {
    const auto envelope = EnvelopeOf(ReadBytes(kSeedDir + "/" + name));
    if (envelope && envelope->version == kSchemaVersion) seeded.insert(envelope->type);
  }
  for (const MessageType type : IdsOf(AllMessageTypes{})) {
    EXPECT_TRUE(seeded.contains(static_cast<uint64_t>(type)))
        << MessageTypeName(type)
        << " has no seed: add one to make_seed_corpus.cc and regenerate the seeds";
  }
}

TEST(WireFuzzerSeeds, TheDictionaryIsTheOneTheSchemaMakes) {
  EXPECT_EQ(ReadBytes(ACTEX_SOURCE_DIR "/tests/fuzz/dict/wire_receive.dict"), WireDictionary())
      << "regenerate the seeds and the dictionary (make_seed_corpus)";
}

}  // namespace
}  // namespace actex
