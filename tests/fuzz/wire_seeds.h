#ifndef ACTEX_TESTS_FUZZ_WIRE_SEEDS_H_
#define ACTEX_TESTS_FUZZ_WIRE_SEEDS_H_

#include <filesystem>

namespace actex {

// The wire fuzzer's seeds, ROOT/wire_receive/gen_*: every message type encoded by the
// real Send and its frames joined as the fuzzer splits them (kFuzzFrameDelimiter), and
// the edge cases (wrong types, wrong version, truncation, stray frames).
void WriteWireSeeds(const std::filesystem::path& root);

// The wire fuzzer's dictionary, beside the corpora: ROOT/../dict/wire_receive.dict.
void WriteWireDictionary(const std::filesystem::path& root);

}  // namespace actex

#endif  // ACTEX_TESTS_FUZZ_WIRE_SEEDS_H_
