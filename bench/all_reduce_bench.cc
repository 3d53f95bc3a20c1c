// Ring all-reduce between two members (threads) of one process, over inproc and
// over tcp on the loopback interface. Bytes processed = the buffer each member
// reduces, per iteration; the rate is what one member sees as its all-reduce
// bandwidth (each member sends and receives 2(size-1)/size of it).

#include <benchmark/benchmark.h>

#include <barrier>
#include <memory>
#include <string>
#include <thread>
#include <vector>
#include <zmq.hpp>

#include "transport/ring_all_reduce.h"
#include "transport/ring_links.h"

namespace actex {
namespace {

enum Transport : int64_t { kInproc = 0, kTcp = 1 };

void BM_RingAllReduce(benchmark::State& state) {
  constexpr int kMembers = 2;
  const auto transport = static_cast<Transport>(state.range(0));
  const size_t floats = static_cast<size_t>(state.range(1)) / sizeof(float);
  zmq::context_t context;
  RingOptions options;
  options.ring = "bench";
  for (int rank = 0; rank < kMembers; ++rank) {
    options.endpoints.push_back(transport == kTcp ? std::string("tcp://127.0.0.1:*")
                                                  : "inproc://bench-ring/" + std::to_string(rank));
  }
  std::vector<std::unique_ptr<RingLinks>> ring;
  for (int rank = 0; rank < kMembers; ++rank) {
    options.rank = rank;
    auto links = RingLinks::Bind(context, options);
    if (!links) {
      state.SkipWithError(links.error().c_str());
      return;
    }
    ring.push_back(std::move(*links));
  }
  for (int rank = 0; rank < kMembers; ++rank) {
    auto connected = ring[rank]->ConnectToNext(ring[(rank + 1) % kMembers]->bound_endpoint());
    if (!connected) {
      state.SkipWithError(connected.error().c_str());
      return;
    }
  }
  std::vector<std::vector<float>> data(kMembers, std::vector<float>(floats, 1.f));

  // The helper member runs as many all-reduces as the timed loop; the barrier
  // tells it how many (0 = stop) so both sides always agree.
  std::barrier sync(kMembers);
  int64_t next_batch = 0;
  std::string helper_error;
  std::thread helper([&] {
    while (true) {
      sync.arrive_and_wait();
      if (next_batch == 0) return;
      for (int64_t i = 0; i < next_batch && helper_error.empty(); ++i) {
        if (auto reduced = RingAllReduce(*ring[1], data[1]); !reduced)
          helper_error = reduced.error();
      }
      sync.arrive_and_wait();
    }
  });
  // Google Benchmark may call the loop body a variable number of times, so the
  // work is split in single-iteration batches announced through the barrier.
  for (auto _ : state) {
    next_batch = 1;
    sync.arrive_and_wait();
    auto reduced = RingAllReduce(*ring[0], data[0]);
    sync.arrive_and_wait();
    if (!reduced || !helper_error.empty()) {
      state.SkipWithError(reduced ? helper_error.c_str() : reduced.error().c_str());
      break;
    }
  }
  next_batch = 0;
  sync.arrive_and_wait();
  helper.join();
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(floats * sizeof(float)));
  state.SetLabel(transport == kTcp ? "tcp loopback" : "inproc");
}

BENCHMARK(BM_RingAllReduce)
    ->ArgNames({"tcp", "bytes"})
    ->ArgsProduct({{kInproc, kTcp}, benchmark::CreateRange(64 << 10, 32 << 20, 8)})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace actex

BENCHMARK_MAIN();
