// The MPI test program, run by ctest under mpirun (label mpi): `check` verifies every collective, the point-to-point
// calls and RingAllreduce against serial references with and without chunking; `throw`, `exit` and `recv` make rank 1
// fail (while the others wait in a collective, or in RecvRaw for `recv`) so the job must end with its message.
#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "comm/mpi_comm.h"
#include "comm/ring_allreduce.h"
#include "core/error.h"
#include "tests/comm/comm_test_util.h"

namespace tessel::comm {
namespace {

using testing::Doubles;
using testing::Ints;
using testing::MessagePayload;
using testing::MessageSize;
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

// Point-to-point: SendRecv with every ring shift and random sizes (0 included), Send/Recv ordered so that blocking
// sends cannot deadlock, per-tag order, byte accounting, and size mismatches as failed Status values.
void CheckPointToPoint(Communicator& c, uint64_t trials) {
  const int p = c.Size();
  const int me = c.Rank();
  const int next = (me + 1) % p;
  const int prev = (me - 1 + p) % p;
  for (uint64_t t = 0; t < trials; ++t) {
    c.Bytes().Reset();
    uint64_t sent = 0;
    for (int k = 0; k < p; ++k) {  // k = 0: a message to itself
      const int dest = (me + k) % p;
      const int source = (me - k + p) % p;
      std::vector<int64_t> got(static_cast<size_t>(MessageSize(t, source, me)));
      c.SendRecv<int64_t>(MessagePayload(t, me, dest), dest, got, source, static_cast<int>(t % 4), "p2p")
          .ThrowIfError();
      TESSEL_CHECK(got == MessagePayload(t, source, me), "sendrecv trial {} shift {}", t, k);
      if (k != 0) sent += static_cast<uint64_t>(MessageSize(t, me, dest)) * sizeof(int64_t);
    }
    TESSEL_CHECK(c.Bytes().Bytes("p2p") == sent, "p2p bytes trial {}: {} != {}", t, c.Bytes().Bytes("p2p"), sent);
    // Rank 0 sends to everyone, then hears back; the others receive first, then answer.
    if (me == 0) {
      for (int d = 1; d < p; ++d) c.Send<int64_t>(MessagePayload(t, 0, d), d, 1).ThrowIfError();
      for (int s = 1; s < p; ++s) {
        std::vector<int64_t> got(static_cast<size_t>(MessageSize(t, s, 0)));
        c.Recv<int64_t>(got, s, 1).ThrowIfError();
        TESSEL_CHECK(got == MessagePayload(t, s, 0), "recv trial {} from {}", t, s);
      }
    } else {
      std::vector<int64_t> got(static_cast<size_t>(MessageSize(t, 0, me)));
      c.Recv<int64_t>(got, 0, 1).ThrowIfError();
      TESSEL_CHECK(got == MessagePayload(t, 0, me), "recv trial {} from 0", t);
      c.Send<int64_t>(MessagePayload(t, me, 0), 0, 1).ThrowIfError();
    }
  }
  // Same tag: send order; tags are independent (tiny messages, which every MPI delivers eagerly, so the sends
  // complete before the receiver asks for the other tag first).
  for (int i = 0; i < 5; ++i) {
    c.Send<int32_t>(std::vector<int32_t>{me, i}, next, 1).ThrowIfError();
    c.Send<int32_t>(std::vector<int32_t>{-i}, next, 2).ThrowIfError();
  }
  for (int i = 0; i < 5; ++i) {
    std::vector<int32_t> got(1);
    c.Recv<int32_t>(got, prev, 2).ThrowIfError();
    TESSEL_CHECK(got[0] == -i, "tag 2 message {} arrived as {}", i, got[0]);
  }
  for (int i = 0; i < 5; ++i) {
    std::vector<int32_t> got(2);
    c.Recv<int32_t>(got, prev, 1).ThrowIfError();
    TESSEL_CHECK(got[0] == prev && got[1] == i, "tag 1 message {} arrived as {}", i, got[1]);
  }
  // The receiver's size is the contract: longer (MPI's truncation error) or shorter messages fail the receive.
  if (p > 1) {
    c.Send<int64_t>(std::vector<int64_t>{1, 2}, next, 9).ThrowIfError();
    c.Send<int64_t>(std::vector<int64_t>{3}, next, 10).ThrowIfError();
    std::vector<int64_t> one(1);
    Status s = c.Recv<int64_t>(one, prev, 9);
    TESSEL_CHECK(!s.ok() && s.message().find("MPI_ERR_TRUNCATE") != std::string::npos, "truncation: '{}'", s.message());
    std::vector<int64_t> two(2);
    s = c.Recv<int64_t>(two, prev, 10);
    TESSEL_CHECK(!s.ok() && s.message().find("expects 16 bytes from rank " + std::to_string(prev) +
                                             " with tag 10, but the message has 8") != std::string::npos,
                 "short message: '{}'", s.message());
  }
  c.Barrier().ThrowIfError();
}

// RingAllreduce against the float64 sum of every rank's input, bit-identical on every rank (compared through
// `world`: an allgather on the 64-byte-chunk communicator would take seconds), exact byte counts.
template <typename T>
void CheckRing(Communicator& c, Communicator& world, uint64_t t, int64_t n, int64_t chunk_bytes) {
  const int p = c.Size();
  const std::vector<double> x = Doubles(t, c.Rank(), 50, n);
  std::vector<T> data(x.begin(), x.end());
  c.Bytes().Reset();
  RingAllreduce(c, std::span<T>(data), "ring", {.chunk_bytes = chunk_bytes}).ThrowIfError();
  const uint64_t want_bytes = static_cast<uint64_t>(RingElementsSent(n, p, c.Rank())) * sizeof(T);
  TESSEL_CHECK(c.Bytes().Bytes("ring") == want_bytes, "ring bytes n {}: {} != {}", n, c.Bytes().Bytes("ring"),
               want_bytes);
  std::vector<double> want(static_cast<size_t>(n), 0.0);
  std::vector<double> scale(static_cast<size_t>(n), 1.0);
  for (int r = 0; r < p; ++r) {
    const std::vector<double> y = Doubles(t, r, 50, n);
    for (size_t i = 0; i < want.size(); ++i) {
      want[i] += static_cast<double>(static_cast<T>(y[i]));
      scale[i] += std::abs(y[i]);
    }
  }
  const double eps = sizeof(T) == 4 ? 1e-6 : 1e-14;
  for (size_t i = 0; i < want.size(); ++i) {
    TESSEL_CHECK(std::abs(static_cast<double>(data[i]) - want[i]) <= eps * scale[i], "ring n {} chunk {} i {}", n,
                 chunk_bytes, i);
  }
  std::vector<T> all(data.size() * static_cast<size_t>(p));
  world.Allgather<T>(data, all).ThrowIfError();
  for (int r = 0; r < p; ++r) {
    TESSEL_CHECK(data.empty() || std::memcmp(all.data() + data.size() * static_cast<size_t>(r), data.data(),
                                             data.size() * sizeof(T)) == 0,
                 "ring n {} chunk {}: rank {} differs from rank {}", n, chunk_bytes, r, c.Rank());
  }
}

void CheckRings(Communicator& c, Communicator& world) {
  const int64_t p = c.Size();
  uint64_t t = 0;
  for (int64_t n : {int64_t{0}, int64_t{1}, p - 1, p + 1, int64_t{1000}, int64_t{100003}}) {
    for (int64_t chunk : {int64_t{0}, int64_t{12}, int64_t{4096}}) {
      if (chunk == 12 && n > 1000) continue;  // 3 elements per message: enough on the small sizes
      CheckRing<float>(c, world, ++t, n, chunk);
      CheckRing<double>(c, world, ++t, n, chunk);
    }
  }
}

int Check(Communicator& world) {
  TESSEL_CHECK(world.Backend() == "mpi", "backend {}", world.Backend());
  // Every rank of these tests runs on this machine (mpirun -np N on one host); finding that counted no bytes.
  TESSEL_CHECK(world.LocalSize() == world.Size(), "LocalSize {} on one host of {} ranks", world.LocalSize(),
               world.Size());
  TESSEL_CHECK(world.Bytes().TotalCalls() == 0, "making the communicator recorded {} calls",
               world.Bytes().TotalCalls());
  CheckCollectives(world, 6);
  CheckPointToPoint(world, 6);
  CheckRings(world, world);
  // A large allreduce (8 MB) through Open MPI's shared-memory transport.
  std::vector<double> big(1 << 20, 1.0);
  world.Allreduce<double>(big).ThrowIfError();
  TESSEL_CHECK(big.front() == world.Size() && big.back() == world.Size(), "big allreduce");

  // Tiny messages force the int-count splitting: chunked allreduce/broadcast and point-to-point v-collectives.
  // Point-to-point messages above 64 bytes travel as one message of a derived type (whole 64-byte blocks + rest).
  // No timeout here (polled without a deadline); the world communicator has the default one.
  auto chunked = MakeMpiCommunicator({.max_message_bytes = 64, .check_arguments = true, .timeout_seconds = 0});
  CheckCollectives(*chunked, 6);
  CheckPointToPoint(*chunked, 6);
  CheckRings(*chunked, world);
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

// Rank 1 fails while every other rank waits in RecvRaw for its message: the job must end with rank 1's message.
int FailInRecv(Communicator& world) {
  std::vector<double> out(1000, world.Rank());
  std::vector<double> in(1000);
  const int p = world.Size();
  world.SendRecv<double>(out, (world.Rank() + 1) % p, in, (world.Rank() - 1 + p) % p, 0).ThrowIfError();
  if (world.Rank() == 1) throw Error("injected failure on purpose");
  world.Recv<double>(in, 1, 0).ThrowIfError();  // never completes
  return 0;
}

// Rank 1 stops (SIGSTOP) after one allreduce while the others wait for it in an allreduce (or, with in_recv, rank 0
// waits in RecvRaw from rank 1 and the others in a barrier): the watchdog must end the job naming rank 1.
int Stall(Communicator& world, bool in_recv) {
  std::vector<double> v(1000, 1.0);
  world.Allreduce<double>(v, ReduceOp::kSum, "warm-up").ThrowIfError();
  if (world.Rank() == 1) ::raise(SIGSTOP);
  if (in_recv && world.Rank() == 0) {
    world.Recv<double>(v, 1, 5).ThrowIfError();  // never completes
  } else if (in_recv) {
    world.Barrier().ThrowIfError();
  } else {
    world.Allreduce<double>(v, ReduceOp::kSum, "gradients").ThrowIfError();  // never completes
  }
  return 0;
}

}  // namespace
}  // namespace tessel::comm

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "check";
  if (mode != "check" && mode != "throw" && mode != "exit" && mode != "recv" && mode != "stall" &&
      mode != "stallrecv") {
    std::fprintf(stderr, "usage: %s check|throw|exit|recv|stall|stallrecv\n", argv[0]);
    return 2;
  }
  // The stall modes run under a 2 s watchdog timeout; the others under the default.
  tessel::comm::MpiOptions options;
  if (mode.starts_with("stall")) options.timeout_seconds = 2;
  return tessel::comm::RunMain(
      [&](tessel::comm::Communicator& world) {
        if (mode == "check") return tessel::comm::Check(world);
        if (mode == "recv") return tessel::comm::FailInRecv(world);
        if (mode.starts_with("stall")) return tessel::comm::Stall(world, mode == "stallrecv");
        return tessel::comm::Fail(world, mode);
      },
      options);
}
