// The compressed allreduces under real MPI (ctest label mpi, run by mpirun at 2 and 4 ranks): `check` runs every
// method for a few steps and compares each result with the serial reference over all ranks' inputs (every rank
// regenerates them) and with the other ranks' results (allgather, bit for bit); `fail` makes rank 1 throw while the
// others wait inside a compressed allreduce, so the job must end with rank 1's message.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "comm/compress.h"
#include "comm/mpi_comm.h"
#include "core/error.h"
#include "core/rng.h"

namespace tessel::comm {
namespace {

std::vector<float> Input(uint64_t step, int rank, int64_t n) {
  Rng rng(StreamKey{.seed = step, .rank = static_cast<uint64_t>(rank), .purpose = 91});
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = static_cast<float>(rng.Uniform() * 2.0 - 1.0);
  return v;
}

int Check(Communicator& c) {
  const int p = c.Size();
  const std::vector<MatrixShape> shapes = {{60, 40}, {1, 40}};
  const int64_t n = 60 * 40 + 40;
  int failures = 0;
  for (const std::string spec :
       {"none", "fp16", "bf16", "int8", "qsgd", "topk:0.05", "randk:0.1", "cltk:0.05", "powersgd:2"}) {
    auto ar = MakeCompressedAllreduce(CompressSpec::Parse(spec, "--grad-compress"), shapes, 17);
    CompressStats st;
    for (uint64_t step = 0; step < 3; ++step) {
      std::vector<float> x = Input(step, c.Rank(), n);
      ar->Allreduce(c, x, step, "gradients", &st).ThrowIfError();
      // Identical on every rank.
      std::vector<float> all(static_cast<size_t>(n * p));
      c.Allgather<float>(std::span<const float>(x), std::span<float>(all), "check").ThrowIfError();
      for (int r = 0; r < p; ++r) {
        if (std::memcmp(all.data() + r * n, x.data(), static_cast<size_t>(n) * 4) != 0) {
          std::fprintf(stderr, "%s step %llu: rank %d's result differs from rank %d's\n", spec.c_str(),
                       static_cast<unsigned long long>(step), r, c.Rank());
          ++failures;
        }
      }
      // Close to the exact sum where the method promises it in one step (the lossless and rounding codecs).
      if (spec == "none" || spec == "fp16" || spec == "bf16" || spec == "int8") {
        const double tol = spec == "none"   ? 1e-5
                           : spec == "fp16" ? p * (p + 1.0) * 0x1p-12
                           : spec == "bf16" ? p * (p + 1.0) * 0x1p-9
                                            : 1.01 * p / 254.0;
        for (int64_t i = 0; i < n; ++i) {
          double want = 0;
          for (int r = 0; r < p; ++r) want += Input(step, r, n)[static_cast<size_t>(i)];
          if (std::fabs(want - x[static_cast<size_t>(i)]) > tol + 1e-6) {
            std::fprintf(stderr, "%s step %llu element %lld: %g, want %g\n", spec.c_str(),
                         static_cast<unsigned long long>(step), static_cast<long long>(i), x[static_cast<size_t>(i)],
                         want);
            ++failures;
            break;
          }
        }
      }
    }
    if (st.wire_bytes == 0 || st.wire_bytes > st.raw_bytes) {
      std::fprintf(stderr, "%s: %llu wire bytes for %llu raw\n", spec.c_str(),
                   static_cast<unsigned long long>(st.wire_bytes), static_cast<unsigned long long>(st.raw_bytes));
      ++failures;
    }
  }
  int total = failures;
  c.Allreduce<int>(std::span<int>(&total, 1), ReduceOp::kSum, "check").ThrowIfError();
  if (c.Rank() == 0) std::printf("compressed allreduce under MPI, %d ranks: %s\n", p, total == 0 ? "ok" : "FAILED");
  return total == 0 ? 0 : 1;
}

int Fail(Communicator& c) {
  auto ar = MakeCompressedAllreduce(CompressSpec::Parse("topk:0.1", "--grad-compress"), {}, 1);
  std::vector<float> x = Input(0, c.Rank(), 1000);
  if (c.Rank() == 1) throw Error("rank 1 failed inside the compressed allreduce on purpose");
  ar->Allreduce(c, x, 0, "gradients", nullptr).ThrowIfError();
  return 0;
}

}  // namespace
}  // namespace tessel::comm

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "check";
  if (mode != "check" && mode != "fail") {
    std::fprintf(stderr, "usage: %s check|fail\n", argv[0]);
    return 2;
  }
  return tessel::comm::RunMain([&](tessel::comm::Communicator& world) {
    return mode == "check" ? tessel::comm::Check(world) : tessel::comm::Fail(world);
  });
}
