#ifndef ACTEX_TESTS_CUDA_EMULATOR_STATUS_TEXT_H_
#define ACTEX_TESTS_CUDA_EMULATOR_STATUS_TEXT_H_

// The names and descriptions of the emulated CUDA's errors and cuBLAS's statuses.

#include <cstddef>

namespace actex::cuda_emulator {

// A status code (cudaError_t, cublasStatus_t) named and described as its library does.
template <typename Code>
struct StatusText {
  Code code;
  const char* name;
  const char* description;
};

// The entry of `texts` for `code`, or `unknown` (with `code`) where none is.
template <typename Code, size_t kCount>
StatusText<Code> TextOf(Code code, const StatusText<Code> (&texts)[kCount],
                        StatusText<Code> unknown) {
  for (const StatusText<Code>& text : texts) {
    if (text.code == code) return text;
  }
  unknown.code = code;
  return unknown;
}

}  // namespace actex::cuda_emulator

#endif  // ACTEX_TESTS_CUDA_EMULATOR_STATUS_TEXT_H_
