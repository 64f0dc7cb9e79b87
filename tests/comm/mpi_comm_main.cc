// The MPI test program, run by ctest under mpirun (label mpi): `check` verifies every collective against a serial
// reference with and without chunking; `throw` and `exit` make rank 1 fail so the job must end with its message.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "comm/mpi_comm.h"
#include "core/error.h"
#include "tests/comm/comm_test_util.h"

namespace tessel::comm {
namespace {

using testing::Doubles;
using testing::Ints;
using testing::SharedSize;

// Every collective against the serial reference over all ranks' inputs (each rank can regenerate them).
void CheckCollectives(Communicator& c, uint64_t trials) {
  const int p = c.Size();
  const int me = c.Rank();
  for (uint64_t t = 0; t < trials; ++t) {
    const int64_t n = SharedSize(t, 1, 3000);
    std::vector<double> v = Doubles(t, me, 1, n);
    c.Allreduce<double>(v, ReduceOp::kSum, "gradients").ThrowIfError();
    std::vector<int64_t> mx = Ints(t, me, 2, n, -5, 5);
    c.Allreduce<int64_t>(mx, ReduceOp::kMax).ThrowIfError();
    std::vector<double> want_sum(static_cast<size_t>(n), 0.0);
    std::vector<int64_t> want_max(static_cast<size_t>(n), INT64_MIN);
    for (int r = 0; r < p; ++r) {
      const std::vector<double> x = Doubles(t, r, 1, n);
      const std::vector<int64_t> y = Ints(t, r, 2, n, -5, 5);
      for (size_t i = 0; i < want_sum.size(); ++i) {
        want_sum[i] += x[i];
        want_max[i] = std::max(want_max[i], y[i]);
      }
    }
    for (size_t i = 0; i < want_sum.size(); ++i) {
      TESSEL_CHECK(std::abs(v[i] - want_sum[i]) <= 1e-12, "allreduce sum trial {} i {}", t, i);
      TESSEL_CHECK(mx[i] == want_max[i], "allreduce max trial {} i {}", t, i);
    }
    // (value, index) with ties: best value, then smallest index.
    ValueIndex<double> loc{static_cast<double>(Ints(t, me, 3, 1, 0, 2)[0]), 10 - me};
    c.AllreduceMaxLoc(&loc, "svm").ThrowIfError();
    ValueIndex<double> want_loc{-1, 0};
    for (int r = 0; r < p; ++r) {
      const double value = static_cast<double>(Ints(t, r, 3, 1, 0, 2)[0]);
      if (value > want_loc.value || (value == want_loc.value && 10 - r < want_loc.index)) want_loc = {value, 10 - r};
    }
    TESSEL_CHECK(loc == want_loc, "maxloc trial {}: got ({}, {})", t, loc.value, loc.index);
    ValueIndex<float> floc{static_cast<float>(me % 2), me};
    c.AllreduceMinLoc(&floc).ThrowIfError();
    TESSEL_CHECK(floc.value == 0.0f && floc.index == 0, "minloc trial {}", t);

    const int root = static_cast<int>(t % static_cast<uint64_t>(p));
    std::vector<int64_t> b = Ints(t, me, 4, n, 0, 1 << 20);
    c.Broadcast<int64_t>(b, root, "weights").ThrowIfError();
    TESSEL_CHECK(b == Ints(t, root, 4, n, 0, 1 << 20), "broadcast trial {}", t);

    std::vector<int64_t> counts(static_cast<size_t>(p));
    for (int r = 0; r < p; ++r) counts[static_cast<size_t>(r)] = SharedSize(t * 31 + static_cast<uint64_t>(r), 5, 400);
    std::vector<double> mine = Doubles(t, me, 5, counts[static_cast<size_t>(me)]);
    std::vector<double> got;
    std::vector<int64_t> got_counts;
    c.AllgathervWithCounts<double>(mine, &got, &got_counts, "ids").ThrowIfError();
    std::vector<double> want;
    for (int r = 0; r < p; ++r) {
      std::vector<double> x = Doubles(t, r, 5, counts[static_cast<size_t>(r)]);
      want.insert(want.end(), x.begin(), x.end());
    }
    TESSEL_CHECK(got == want && got_counts == counts, "allgatherv trial {}", t);

    auto pair_count = [&](int s, int d) { return SharedSize(t * 1009 + static_cast<uint64_t>(s * 17 + d), 6, 300); };
    auto pair_block = [&](int s, int d) {
      std::vector<int64_t> blk = Ints(t, s, 100 + static_cast<uint64_t>(d), pair_count(s, d), 0, 999);
      for (size_t k = 0; k < blk.size(); ++k) blk[k] += 1000 * (s * 100 + d);
      return blk;
    };
    std::vector<int64_t> send_counts(static_cast<size_t>(p));
    std::vector<int64_t> send;
    std::vector<int64_t> want_recv;
    for (int d = 0; d < p; ++d) {
      send_counts[static_cast<size_t>(d)] = pair_count(me, d);
      std::vector<int64_t> blk = pair_block(me, d);
      send.insert(send.end(), blk.begin(), blk.end());
      std::vector<int64_t> w = pair_block(d, me);
      want_recv.insert(want_recv.end(), w.begin(), w.end());
    }
    std::vector<int64_t> recv;
    std::vector<int64_t> recv_counts;
    c.AlltoallvWithCounts<int64_t>(send, send_counts, &recv, &recv_counts, "features").ThrowIfError();
    TESSEL_CHECK(recv == want_recv, "alltoallv trial {}", t);
    c.Barrier().ThrowIfError();
  }
}

int Check(Communicator& world) {
  TESSEL_CHECK(world.Backend() == "mpi", "backend {}", world.Backend());
  CheckCollectives(world, 6);
  // A large allreduce (8 MB) through Open MPI's shared-memory transport.
  std::vector<double> big(1 << 20, 1.0);
  world.Allreduce<double>(big).ThrowIfError();
  TESSEL_CHECK(big.front() == world.Size() && big.back() == world.Size(), "big allreduce");

  // Tiny messages force the int-count splitting: chunked allreduce/broadcast and point-to-point v-collectives.
  auto chunked = MakeMpiCommunicator({.max_message_bytes = 64, .check_arguments = true});
  CheckCollectives(*chunked, 6);
  // Byte accounting is the backend-independent payload model (docs/comm.md).
  chunked->Bytes().Reset();
  std::vector<float> grad(100);
  chunked->Allreduce<float>(grad, ReduceOp::kSum, "gradients").ThrowIfError();
  TESSEL_CHECK(chunked->Bytes().Bytes("gradients") == (world.Size() > 1 ? 400u : 0u), "byte count");

  // With check_arguments, disagreeing ranks get a failed Status on every rank instead of a hang.
  std::vector<int32_t> v(static_cast<size_t>(10 + world.Rank()));
  Status s = chunked->Allreduce<int32_t>(v);
  TESSEL_CHECK(world.Size() == 1 || !s.ok(), "mismatched allreduce sizes went unnoticed");
  if (world.Size() > 1) {
    std::vector<int64_t> counts(static_cast<size_t>(world.Size()), 1);
    std::vector<int64_t> recv_counts = counts;
    if (world.Rank() == 0) recv_counts[1] = 2;
    std::vector<int32_t> send(counts.size()), recv(counts.size() + (world.Rank() == 0 ? 1 : 0));
    s = chunked->Alltoallv<int32_t>(send, counts, recv, recv_counts);
    TESSEL_CHECK(!s.ok() && s.message().find("do not mirror") != std::string::npos, "alltoallv mismatch: '{}'",
                 s.message());
  }
  chunked->Barrier().ThrowIfError();
  if (world.Rank() == 0) std::printf("comm mpi check passed on %d ranks\n", world.Size());
  return 0;
}

// Rank 1 fails while the others wait in a collective: the job must end (MPI_Abort) with rank 1's message.
int Fail(Communicator& world, std::string_view how) {
  std::vector<double> v(1000, 1.0);
  world.Allreduce<double>(v).ThrowIfError();
  if (world.Rank() == 1) {
    if (how == "exit") std::_Exit(3);  // dies without MPI_Finalize
    throw Error("injected failure on purpose");
  }
  world.Allreduce<double>(v).ThrowIfError();  // never completes
  world.Barrier().ThrowIfError();
  return 0;
}

}  // namespace
}  // namespace tessel::comm

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "check";
  if (mode != "check" && mode != "throw" && mode != "exit") {
    std::fprintf(stderr, "usage: %s check|throw|exit\n", argv[0]);
    return 2;
  }
  return tessel::comm::RunMain([&](tessel::comm::Communicator& world) {
    return mode == "check" ? tessel::comm::Check(world) : tessel::comm::Fail(world, mode);
  });
}
