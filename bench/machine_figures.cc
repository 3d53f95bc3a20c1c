#include "bench/machine_figures.h"

#include <algorithm>
#include <cstdio>
#include <string>

#include "bench/fma_peak.h"

namespace actex {

namespace {

// Noise only ever slows a run down: the largest figure is nearest the truth.
std::string Spread(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  char text[96];
  std::snprintf(text, sizeof(text), "min %.1f, median %.1f, max %.1f GFLOPS", values.front(),
                values[values.size() / 2], values.back());
  return text;
}

}  // namespace

MachineFigures::MachineFigures(VectorIsa isa, int64_t tokens, int64_t hidden, int64_t intermediate,
                               int repeats)
    : isa_(isa),
      backend_(PreferredGemmBackend(isa)),
      other_(backend_ == GemmBackend::kOneDnn ? GemmBackend::kOpenBlas : GemmBackend::kOneDnn),
      tokens_(tokens),
      hidden_(hidden),
      intermediate_(intermediate),
      repeats_(repeats),
      has_avx512_(DetectedIsa() == VectorIsa::kAvx512) {}

void MachineFigures::Measure() {
  std::fprintf(stderr, "measuring the FMA peaks and sgemm (2 threads, %s and %s) ...\n",
               GemmBackendName(backend_), GemmBackendName(other_));
  avx2_peaks_.push_back(MeasureFmaPeakGflops(VectorIsa::kAvx2, 2));
  avx512_peaks_.push_back(has_avx512_ ? MeasureFmaPeakGflops(VectorIsa::kAvx512, 2) : 0);
  peaks_.push_back(isa_ == VectorIsa::kAvx512 ? avx512_peaks_.back() : avx2_peaks_.back());
  sgemm_runs_.push_back(MeasureSgemm(backend_, tokens_, hidden_, intermediate_, 2, repeats_));
  other_runs_.push_back(MeasureSgemm(other_, tokens_, hidden_, intermediate_, 2, repeats_));
}

double MachineFigures::NeighbourSgemm() const {
  const size_t n = sgemm_runs_.size();
  return (sgemm_runs_[n - 2].combined_gflops + sgemm_runs_[n - 1].combined_gflops) / 2;
}

double MachineFigures::NeighbourPeak() const {
  return (peaks_[peaks_.size() - 2] + peaks_.back()) / 2;
}

void MachineFigures::Print() const {
  std::printf("float32 FMA peak, 2 threads, %zu measurements: AVX2 %s; AVX-512 %s\n", peaks_.size(),
              Spread(avx2_peaks_).c_str(),
              has_avx512_ ? Spread(avx512_peaks_).c_str() : "not on this CPU");
  PrintSgemm(backend_, sgemm_runs_);
  PrintSgemm(other_, other_runs_);
}

void MachineFigures::PrintSgemm(GemmBackend which, const std::vector<SgemmReference>& runs) const {
  std::vector<double> combined;
  for (const SgemmReference& run : runs) combined.push_back(run.combined_gflops);
  std::sort(combined.begin(), combined.end());
  const SgemmReference& first = runs.front();
  std::printf(
      "sgemm by %s, 2 threads, float32, first measurement: [%lld x %lld]·[%lld x %lld] %.1f "
      "GFLOPS, [%lld x %lld]·[%lld x %lld] %.1f GFLOPS, both %.1f GFLOPS (%.3f x peak); all %zu "
      "measurements of both: min %.1f, median %.1f, max %.1f\n",
      GemmBackendName(which), static_cast<long long>(tokens_), static_cast<long long>(hidden_),
      static_cast<long long>(hidden_), static_cast<long long>(intermediate_), first.up_gflops,
      static_cast<long long>(tokens_), static_cast<long long>(intermediate_),
      static_cast<long long>(intermediate_), static_cast<long long>(hidden_), first.down_gflops,
      first.combined_gflops, first.combined_gflops / peaks_.front(), combined.size(),
      combined.front(), combined[combined.size() / 2], combined.back());
}

}  // namespace actex
