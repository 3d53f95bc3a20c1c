#ifndef ACTEX_MODEL_CPU_SHARD_DEVICE_H_
#define ACTEX_MODEL_CPU_SHARD_DEVICE_H_

#include "model/precision.h"
#include "model/shard_device.h"

namespace actex {

// Shards that run on `threads` (>= 1) of the CPU's cores: every projection is cut into
// one share of output features per thread, multiplied by single-threaded sgemms side by
// side (no barrier inside a product, no OpenBLAS threads spinning between products), and
// so are attention (one task per sequence and head) and the element-wise kernels.
// Each batch therefore sets OpenBLAS to one thread, process-wide. Results depend on
// `threads` in the last bits (how products are cut), never on timing.
// `precision` kBf16 makes every product (attention's, the MLP's and the experts') a
// bfloat16 one with float32 accumulation by oneDNN (kernels/bf16_linear.h); norms,
// attention, activations, biases and the residual stream stay float32. The maker
// refuses fewer than one thread, an ACTEX_ISA the CPU lacks, and bf16 where
// Bf16ProductsSupported() (kernels/cpu_isa.h) says why not.
ShardDeviceMaker CpuShardDevices(int threads, Precision precision = Precision::kFp32);

}  // namespace actex

#endif  // ACTEX_MODEL_CPU_SHARD_DEVICE_H_
