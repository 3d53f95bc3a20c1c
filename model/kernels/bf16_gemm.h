#ifndef ACTEX_MODEL_KERNELS_BF16_GEMM_H_
#define ACTEX_MODEL_KERNELS_BF16_GEMM_H_

#include <dnnl.h>

#include <array>
#include <cstdint>
#include <map>

namespace actex {

// Y[m, n] = X[m, k] · W[n, k]ᵀ + beta · Y with bfloat16 X and W (raw bits, row-major; W
// in a Linear layer's [out, in] layout) and float32 Y, accumulated in float32: oneDNN's
// matmul primitive, which runs AVX512_BF16 dot products (two bf16 products per fp32
// lane per instruction) where the CPU has them. Callers check Bf16ProductsSupported()
// (cpu_isa.h) first.
//
// One object per thread that multiplies: each product runs on the calling thread alone
// (CallOneDnnOnThisThread, gemm.h). A primitive is made once per shape (m, n, k, the
// leading dimensions, beta) and kept: a forward repeats a handful of shapes per token
// count, and making one costs ~150 µs of CPU, still ~7 µs when oneDNN's own primitive
// cache holds it (bench_kernels BM_Bf16GemmCreation; model/README.md).
class Bf16Gemm {
 public:
  // Makes its own CPU engine and stream.
  Bf16Gemm();
  Bf16Gemm(const Bf16Gemm&) = delete;
  Bf16Gemm& operator=(const Bf16Gemm&) = delete;

  // beta is 0 (Y is overwritten, whatever it held) or 1 (accumulate). Deterministic for
  // a given CPU and shape.
  void Multiply(int64_t m, int64_t n, int64_t k, const uint16_t* x, int64_t ldx, const uint16_t* w,
                int64_t ldw, float beta, float* y, int64_t ldy);

  // Frees the primitives, the stream and the engine.
  ~Bf16Gemm();

  // Primitives made so far (kept until kMaxPrimitives, then all dropped).
  int primitives() const { return static_cast<int>(primitives_.size()); }

 private:
  // m, n, k, ldx, ldw, ldy, beta (0 or 1).
  using Shape = std::array<int64_t, 7>;
  struct Primitive {
    dnnl_primitive_t primitive = nullptr;
    dnnl_memory_t x = nullptr, w = nullptr, y = nullptr;  // data handles set per call
  };
  // Token counts vary from batch to batch; a long run's set of shapes stays bounded.
  static constexpr size_t kMaxPrimitives = 256;

  Primitive& PrimitiveFor(const Shape& shape);
  static void Destroy(Primitive& made);

  dnnl_engine_t engine_ = nullptr;
  dnnl_stream_t stream_ = nullptr;
  std::map<Shape, Primitive> primitives_;
};

}  // namespace actex

#endif  // ACTEX_MODEL_KERNELS_BF16_GEMM_H_
