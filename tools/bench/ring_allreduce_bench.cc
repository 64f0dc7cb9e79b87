// tessel_ring_allreduce_bench (run under mpirun): RingAllreduce (comm/ring_allreduce.h) at several chunk sizes
// against the named baseline, the MPI library's own MPI_Allreduce (comm.Allreduce on the MPI backend), on the same
// float buffer, interleaved rep by rep. Reports the median over reps of the slowest rank's time, and the algorithm
// bandwidth (payload bytes / time) and bus bandwidth (× 2(P-1)/P, the bytes each rank must move at least).
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "comm/mpi_comm.h"
#include "comm/ring_allreduce.h"
#include "core/error.h"
#include "core/log.h"

namespace tessel::bench {
namespace {

using Clock = std::chrono::steady_clock;
using comm::Communicator;

struct Method {
  std::string name;
  bool ring = false;
  int64_t chunk_bytes = 0;
};

struct Result {
  int64_t bytes = 0;
  std::string method;
  std::vector<double> seconds;  // per rep: the slowest rank's time
};

std::string HumanBytes(int64_t b) {
  if (b >= (int64_t{1} << 20) && b % (int64_t{1} << 20) == 0) return fmt::format("{} MB", b >> 20);
  if (b >= 1024 && b % 1024 == 0) return fmt::format("{} KB", b >> 10);
  return fmt::format("{} B", b);
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t m = v.size() / 2;
  return v.size() % 2 == 1 ? v[m] : (v[m - 1] + v[m]) / 2;
}

// Input of rank r: (r + 1) + (i % 5), so the sum P(P+1)/2 + P·(i % 5) is exact in float and checkable.
void Fill(std::vector<float>& data, int rank) {
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<float>(rank + 1 + static_cast<int>(i % 5));
}
void CheckSum(const std::vector<float>& data, int p, const std::string& what) {
  for (size_t i = 0; i < data.size(); ++i) {
    const float want = static_cast<float>(p * (p + 1) / 2 + p * static_cast<int>(i % 5));
    TESSEL_CHECK(data[i] == want, "{}: element {} is {}, expected {}", what, i, data[i], want);
  }
}

// One timed run: barrier, the allreduce, then the slowest rank's time (a max allreduce, not timed).
double TimeOnce(Communicator& c, const Method& m, std::vector<float>& data) {
  c.Barrier().ThrowIfError();
  const auto t0 = Clock::now();
  if (m.ring) {
    comm::RingAllreduce(c, data, "bench", {.chunk_bytes = m.chunk_bytes}).ThrowIfError();
  } else {
    c.Allreduce<float>(data, comm::ReduceOp::kSum, "bench").ThrowIfError();
  }
  double s = std::chrono::duration<double>(Clock::now() - t0).count();
  c.Allreduce<double>(std::span<double>(&s, 1), comm::ReduceOp::kMax, "timing").ThrowIfError();
  return s;
}

int Run(Communicator& c, int argc, char** argv) {
  CLI::App app{"RingAllreduce vs MPI_Allreduce on the same float buffer (run under mpirun)"};
  std::vector<int64_t> sizes{1 << 10, 16 << 10, 256 << 10, 4 << 20, 64 << 20, 256 << 20};
  std::vector<int64_t> chunks{0, 64 << 10, 1 << 20};
  int reps = 10;
  int large_reps = 5;
  int64_t large = 64 << 20;
  bool markdown = false;
  app.add_option("--sizes", sizes, "payload bytes per rank (multiples of 4), comma-separated")
      ->delimiter(',')
      ->capture_default_str();
  app.add_option("--chunks", chunks, "RingAllreduce chunk_bytes to time (0: whole segments), comma-separated")
      ->delimiter(',')
      ->capture_default_str();
  app.add_option("--reps", reps, "timed reps per payload and method (after one warm-up)")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000));
  app.add_option("--large-reps", large_reps, "timed reps for payloads of at least --large bytes")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000));
  app.add_option("--large", large, "payload size from which --large-reps applies")->capture_default_str();
  app.add_flag("--markdown", markdown, "print a markdown table (rank 0) instead of plain lines");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return c.Rank() == 0 ? app.exit(e) : (e.get_exit_code() == 0 ? 0 : 2);
  }
  for (int64_t b : sizes) TESSEL_CHECK(b > 0 && b % 4 == 0, "--sizes: {} is not a positive multiple of 4", b);
  for (int64_t ch : chunks) TESSEL_CHECK(ch >= 0, "--chunks: {} is negative", ch);

  std::vector<Method> methods{{"MPI_Allreduce", false, 0}};
  for (int64_t ch : chunks) {
    methods.push_back(
        {ch == 0 ? "RingAllreduce, whole segments" : "RingAllreduce, " + HumanBytes(ch) + " chunks", true, ch});
  }
  const int p = c.Size();
  std::vector<Result> results;
  for (int64_t bytes : sizes) {
    std::vector<float> data(static_cast<size_t>(bytes / 4));
    const int n_reps = bytes >= large ? large_reps : reps;
    std::vector<Result> rows(methods.size());
    for (size_t k = 0; k < methods.size(); ++k) {
      rows[k].bytes = bytes;
      rows[k].method = methods[k].name;
      Fill(data, c.Rank());  // warm-up (pages touched, connections set up) and a correctness check
      TimeOnce(c, methods[k], data);
      CheckSum(data, p, methods[k].name);
    }
    for (int rep = 0; rep < n_reps; ++rep) {  // interleaved, so background load hits every method alike
      for (size_t k = 0; k < methods.size(); ++k) {
        Fill(data, c.Rank());
        rows[k].seconds.push_back(TimeOnce(c, methods[k], data));
      }
    }
    for (Result& r : rows) {
      if (c.Rank() == 0)
        log::Info("{} {}: median {:.6f} s over {} reps", HumanBytes(bytes), r.method, Median(r.seconds),
                  r.seconds.size());
      results.push_back(std::move(r));
    }
  }
  if (c.Rank() != 0) return 0;

  const double bus = 2.0 * (p - 1) / p;
  if (markdown) {
    std::printf(
        "| payload | method | reps | median ms | min ms | algbw GB/s | busbw GB/s | time / MPI_Allreduce time |\n");
    std::printf("|---:|---|---:|---:|---:|---:|---:|---:|\n");
  }
  double mpi_median = 0;
  for (const Result& r : results) {
    const double med = Median(r.seconds);
    const double best = *std::min_element(r.seconds.begin(), r.seconds.end());
    if (r.method == "MPI_Allreduce") mpi_median = med;
    const double algbw = static_cast<double>(r.bytes) / med / 1e9;
    const std::string ratio = r.method == "MPI_Allreduce" ? "1 (baseline)" : fmt::format("{:.2f}", med / mpi_median);
    if (markdown) {
      std::printf("| %s | %s | %zu | %.3f | %.3f | %.3f | %.3f | %s |\n", HumanBytes(r.bytes).c_str(), r.method.c_str(),
                  r.seconds.size(), med * 1e3, best * 1e3, algbw, algbw * bus, ratio.c_str());
    } else {
      std::printf("%s %s: median %.3f ms (min %.3f ms, %zu reps), algbw %.3f GB/s, busbw %.3f GB/s, %s\n",
                  HumanBytes(r.bytes).c_str(), r.method.c_str(), med * 1e3, best * 1e3, r.seconds.size(), algbw,
                  algbw * bus, ratio.c_str());
    }
  }
  return 0;
}

}  // namespace
}  // namespace tessel::bench

int main(int argc, char** argv) {
  return tessel::comm::RunMain(
      [&](tessel::comm::Communicator& world) { return tessel::bench::Run(world, argc, argv); });
}
