#ifndef ACTEX_TESTS_FUZZ_WIRE_DICTIONARY_H_
#define ACTEX_TESTS_FUZZ_WIRE_DICTIONARY_H_

// The wire fuzzer's frame delimiter and libFuzzer dictionary (tests/fuzz/dict/wire_receive.dict),
// made from the schema so that it cannot fall behind it: every type's envelope of the current
// schema version, every field name, and the msgpack headers that claim huge lengths.
// make_seed_corpus writes it; transport_test's WireFuzzerSeeds compares the committed
// file with it.

#include <cctype>
#include <cstdint>
#include <cstdio>
#include <set>
#include <string>
#include <string_view>

#include "tests/transport/raw_frames.h"
#include "transport/message_types.h"
#include "transport/wire.h"

namespace actex {

// What joins the frames of one message in a wire fuzzer input (wire_receive_fuzzer.cc
// says why these bytes); the seeds join their frames with it.
inline constexpr std::string_view kFuzzFrameDelimiter = "\xc1\xc1";

// One line `name="bytes"`, bytes other than printable ASCII, '"' and '\' as \xNN.
inline std::string WireDictionaryEntry(const std::string& name, std::string_view bytes) {
  std::string line = name + "=\"";
  for (const unsigned char byte : bytes) {
    if (std::isprint(byte) && byte != '"' && byte != '\\') {
      line += static_cast<char>(byte);
    } else {
      char escaped[5];
      std::snprintf(escaped, sizeof(escaped), "\\x%02x", byte);
      line += escaped;
    }
  }
  return line + "\"\n";
}

inline std::string WireDictionary() {
  std::string dictionary =
      "# libFuzzer dictionary for wire_receive_fuzzer, written by make_seed_corpus from\n"
      "# the schema (tests/fuzz/wire_dictionary.h): the frame delimiter, each type's\n"
      "# envelope, field names as msgpack strings, headers of hostile lengths.\n";
  dictionary += WireDictionaryEntry("frame_delimiter", kFuzzFrameDelimiter);
  std::set<std::string> fields;
  for (const MessageType type : IdsOf(AllMessageTypes{})) {
    const auto info = DescribeMessageType(static_cast<uint64_t>(type));
    dictionary += WireDictionaryEntry(std::string("envelope_") + info->name,
                                      PackEnvelope(kSchemaVersion, static_cast<uint16_t>(type)));
    fields.insert(info->fields->begin(), info->fields->end());
  }
  dictionary += WireDictionaryEntry("key_v", test_support::PackedBody(std::string("v")));
  dictionary += WireDictionaryEntry("key_t", test_support::PackedBody(std::string("t")));
  for (const std::string& field : fields) {
    dictionary += WireDictionaryEntry("field_" + field, test_support::PackedBody(field));
  }
  dictionary += WireDictionaryEntry("array32_huge", "\xdd\xff\xff\xff\xff");
  dictionary += WireDictionaryEntry("map32_huge", "\xdf\xff\xff\xff\xff");
  dictionary += WireDictionaryEntry("str32_huge", "\xdb\xff\xff\xff\xff");
  dictionary += WireDictionaryEntry("bin32_huge", "\xc6\xff\xff\xff\xff");
  dictionary += WireDictionaryEntry("float64", "\xcb");
  dictionary += WireDictionaryEntry("int64_min", std::string("\xd3\x80\0\0\0\0\0\0\0", 9));
  dictionary += WireDictionaryEntry("uint64_max", "\xcf\xff\xff\xff\xff\xff\xff\xff\xff");
  return dictionary;
}

}  // namespace actex

#endif  // ACTEX_TESTS_FUZZ_WIRE_DICTIONARY_H_
