#include "model/kernels/bf16_gemm.h"

#include <cstdio>
#include <cstdlib>

#include "model/kernels/gemm.h"

namespace actex {
namespace {

// Aborts naming the call: creating engines, streams and primitives fails only when
// memory runs out or the CPU lacks what Bf16ProductsSupported() checked.
void Require(dnnl_status_t status, const char* what) {
  if (status == dnnl_success) return;
  std::fprintf(stderr, "oneDNN %s failed with status %d\n", what, static_cast<int>(status));
  std::abort();
}

// A 2-D memory descriptor of `rows` x `cols` with the given strides.
dnnl_memory_desc_t Matrix(int64_t rows, int64_t cols, dnnl_data_type_t type, int64_t row_stride,
                          int64_t col_stride) {
  dnnl_memory_desc_t desc;
  const dnnl_dims_t dims = {rows, cols};
  const dnnl_dims_t strides = {row_stride, col_stride};
  Require(dnnl_memory_desc_init_by_strides(&desc, 2, dims, type, strides), "memory desc");
  return desc;
}

}  // namespace

Bf16Gemm::Bf16Gemm() {
  Require(dnnl_engine_create(&engine_, dnnl_cpu, 0), "engine");
  Require(dnnl_stream_create(&stream_, engine_, dnnl_stream_default_flags), "stream");
}

Bf16Gemm::~Bf16Gemm() {
  for (auto& [shape, made] : primitives_) Destroy(made);
  dnnl_stream_destroy(stream_);
  dnnl_engine_destroy(engine_);
}

void Bf16Gemm::Destroy(Primitive& made) {
  dnnl_memory_destroy(made.x);
  dnnl_memory_destroy(made.w);
  dnnl_memory_destroy(made.y);
  dnnl_primitive_destroy(made.primitive);
}

Bf16Gemm::Primitive& Bf16Gemm::PrimitiveFor(const Shape& shape) {
  if (auto found = primitives_.find(shape); found != primitives_.end()) return found->second;
  if (primitives_.size() >= kMaxPrimitives) {
    for (auto& [old_shape, made] : primitives_) Destroy(made);
    primitives_.clear();
  }
  const auto [m, n, k, ldx, ldw, ldy, beta] = shape;
  // X [m, k] rows of ldx; W read as [k, n] through W[n, k]'s strides; Y [m, n] rows of ldy.
  const dnnl_memory_desc_t x = Matrix(m, k, dnnl_bf16, ldx, 1);
  const dnnl_memory_desc_t w = Matrix(k, n, dnnl_bf16, 1, ldw);
  const dnnl_memory_desc_t y = Matrix(m, n, dnnl_f32, ldy, 1);
  dnnl_matmul_desc_t desc;
  Require(dnnl_matmul_desc_init(&desc, &x, &w, nullptr, &y), "matmul desc");
  dnnl_primitive_attr_t attr;
  Require(dnnl_primitive_attr_create(&attr), "attr");
  dnnl_post_ops_t post_ops = nullptr;
  if (beta != 0) {  // Y += X · Wᵀ: a sum post-op adds the product to what Y holds
    Require(dnnl_post_ops_create(&post_ops), "post ops");
    Require(dnnl_post_ops_append_sum(post_ops, 1.0f), "sum post op");
    Require(dnnl_primitive_attr_set_post_ops(attr, post_ops), "set post ops");
  }
  dnnl_primitive_desc_t primitive_desc;
  Require(dnnl_primitive_desc_create(&primitive_desc, &desc, attr, engine_, nullptr),
          "bf16 matmul primitive desc");
  Primitive made;
  Require(dnnl_primitive_create(&made.primitive, primitive_desc), "bf16 matmul primitive");
  dnnl_primitive_desc_destroy(primitive_desc);
  if (post_ops != nullptr) dnnl_post_ops_destroy(post_ops);
  dnnl_primitive_attr_destroy(attr);
  Require(dnnl_memory_create(&made.x, &x, engine_, DNNL_MEMORY_NONE), "memory");
  Require(dnnl_memory_create(&made.w, &w, engine_, DNNL_MEMORY_NONE), "memory");
  Require(dnnl_memory_create(&made.y, &y, engine_, DNNL_MEMORY_NONE), "memory");
  return primitives_.emplace(shape, made).first->second;
}

void Bf16Gemm::Multiply(int64_t m, int64_t n, int64_t k, const uint16_t* x, int64_t ldx,
                        const uint16_t* w, int64_t ldw, float beta, float* y, int64_t ldy) {
  CallOneDnnOnThisThread(
      [&] {
        // Made here, at one OpenMP thread: oneDNN blocks a primitive for the threads it
        // will have.
        const Primitive& made = PrimitiveFor({m, n, k, ldx, ldw, ldy, beta != 0.0f ? 1 : 0});
        // oneDNN takes non-const handles; it only reads X and W.
        dnnl_memory_set_data_handle(made.x, const_cast<uint16_t*>(x));
        dnnl_memory_set_data_handle(made.w, const_cast<uint16_t*>(w));
        dnnl_memory_set_data_handle(made.y, y);
        const dnnl_exec_arg_t args[] = {
            {DNNL_ARG_SRC, made.x}, {DNNL_ARG_WEIGHTS, made.w}, {DNNL_ARG_DST, made.y}};
        dnnl_status_t status = dnnl_primitive_execute(made.primitive, stream_, 3, args);
        if (status == dnnl_success) status = dnnl_stream_wait(stream_);
        return static_cast<int>(status);
      },
      "bf16 matmul", m, n, k);
}

}  // namespace actex
