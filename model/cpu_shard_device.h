#ifndef ACTEX_MODEL_CPU_SHARD_DEVICE_H_
#define ACTEX_MODEL_CPU_SHARD_DEVICE_H_

#include "model/shard_device.h"

namespace actex {

// Shards that run on `threads` (>= 1) of the CPU's cores: every projection is cut into
// one share of output features per thread, multiplied by single-threaded sgemms side by
// side (no barrier inside a product, no OpenBLAS threads spinning between products), and
// so are attention (one task per sequence and head) and the element-wise kernels.
// Each batch therefore sets OpenBLAS to one thread, process-wide. Results depend on
// `threads` in the last bits (how products are cut), never on timing. The maker refuses
// fewer than one thread and an ACTEX_ISA the CPU lacks.
ShardDeviceMaker CpuShardDevices(int threads);

}  // namespace actex

#endif  // ACTEX_MODEL_CPU_SHARD_DEVICE_H_
