#ifndef ACTEX_STORAGE_ROW_SUMS_H_
#define ACTEX_STORAGE_ROW_SUMS_H_

#include <cstdint>

#include "base/vector_isa.h"

namespace actex {

// What SiteStatistics keeps of one row beyond the per-dimension sums.
struct RowFigures {
  // Sum of the squared values as doubles, in the order SiteStatistics has always
  // added them (metadata.json's sums must not change by one bit): eight partial sums,
  // lane k over the dimensions d ≡ k (mod 8) below width rounded down to a multiple
  // of 8, in increasing d; lane 0 then goes on over the remaining dimensions; the
  // total is 0 + lane 0 + lane 1 + ... + lane 7. A square of a float is exact as a
  // double, so fused multiply-adds and separate ones give the same bits.
  double squared_norm = 0;
  float max_abs = 0;      // largest |value| among the finite ones
  int32_t not_below = 0;  // values with |value| >= the limit, or NaN
};

// Adds `count` rows of `width` floats ([count, width], back to back) to `sum` and
// `sum_squares` ([width] each: every dimension's sum goes on in row order) and writes
// each row's figures to `figures` ([count]). A value that is NaN or infinite counts as
// 0 in the sums, the squares and the maximum; `limit` is where values stop being finite
// as stored (+infinity for float32 output). `isa` picks the kernel: every ISA gives the
// same bits, kAvx512 only where the CPU has it (ActiveIsa()).
void SumRows(VectorIsa isa, const float* rows, int64_t count, int width, float limit, double* sum,
             double* sum_squares, RowFigures* figures);

}  // namespace actex

#endif  // ACTEX_STORAGE_ROW_SUMS_H_
