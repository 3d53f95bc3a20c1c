#ifndef ACTEX_BENCH_CPU_MODEL_H_
#define ACTEX_BENCH_CPU_MODEL_H_

#include <string>

namespace actex {

// The CPU's model name as /proc/cpuinfo gives it ("unknown CPU" where it has none), for
// the line every benchmark prints beside its figures.
std::string CpuModelName();

}  // namespace actex

#endif  // ACTEX_BENCH_CPU_MODEL_H_
