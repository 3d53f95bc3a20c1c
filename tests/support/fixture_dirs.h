#ifndef ACTEX_TESTS_SUPPORT_FIXTURE_DIRS_H_
#define ACTEX_TESTS_SUPPORT_FIXTURE_DIRS_H_

// Test support: the fixture folders many test files run on, named once. ACTEX_FIXTURES_DIR
// (tests/fixtures, where the shared fixtures are copied verbatim) is defined for every
// test target by tests/CMakeLists.txt.

#include <string>

namespace actex {

// Qwen2-tiny in HF layout with float32 weights: the model of the end-to-end runs.
inline const std::string kTinyModelDir = ACTEX_FIXTURES_DIR "/qwen2-tiny";

}  // namespace actex

#endif  // ACTEX_TESTS_SUPPORT_FIXTURE_DIRS_H_
