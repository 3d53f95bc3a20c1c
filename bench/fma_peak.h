#ifndef ACTEX_BENCH_FMA_PEAK_H_
#define ACTEX_BENCH_FMA_PEAK_H_

#include "model/kernels/cpu_isa.h"

namespace actex {

// The float32 FMA peak of `threads` cores with `isa`'s vectors, in GFLOPS (2 FLOPs per
// lane per FMA): each thread runs independent chains of fused multiply-adds, enough of
// them to hide the FMA latency on every current x86 core, for about `seconds`. This is
// the ceiling a matrix product can approach; extraction figures are quoted against it.
// `isa` must be one the CPU has (DetectedIsa()).
double MeasureFmaPeakGflops(VectorIsa isa, int threads, double seconds = 0.3);

}  // namespace actex

#endif  // ACTEX_BENCH_FMA_PEAK_H_
