// Encode + decode throughput of every codec of comm/compress.h on one core against memcpy of the same float buffer
// (the baseline: what an uncompressed exchange costs the CPU at the least). Prints a Markdown table and JSON lines.
// Usage: tessel_codec_bench [--elements N] [--reps R]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "comm/compress.h"
#include "core/rng.h"

namespace {

using Clock = std::chrono::steady_clock;

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  using namespace tessel;
  CLI::App app{"Encode+decode throughput of the compression codecs on one core, against memcpy"};
  int64_t n = 1 << 24;
  int reps = 7;
  int64_t block = 256;
  app.add_option("--elements", n, "Floats per buffer")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 30));
  app.add_option("--reps", reps, "Repetitions (the median is reported)")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000));
  app.add_option("--block", block, "int8 / qsgd block (elements per scale)")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
  CLI11_PARSE(app, argc, argv);
  std::vector<float> x(static_cast<size_t>(n));
  Rng rng(1);
  for (float& v : x) v = static_cast<float>(rng.Uniform() * 2 - 1);
  std::vector<float> out(x.size());
  const double gb = static_cast<double>(n) * 4 / 1e9;
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = Clock::now();
    std::memcpy(out.data(), x.data(), x.size() * 4);
    std::memcpy(x.data(), out.data(), x.size() * 4);
    t.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
  }
  const double base = Median(t);
  std::printf(
      "| codec | wire bytes / float32 bytes | encode GB/s | decode GB/s | encode+decode GB/s | vs memcpy x2 |\n");
  std::printf("| --- | ---: | ---: | ---: | ---: | ---: |\n");
  std::printf("| memcpy there and back (baseline) | 1.000 | | | %.2f | 1.00 |\n", gb / base);
  for (const std::string spec : {"none", "fp16", "bf16", "int8", "qsgd:15", "qsgd:3", "topk:0.01", "topk:0.1"}) {
    auto codec = comm::MakeCodec(comm::CompressSpec::Parse(spec, "--codec"), block);
    std::vector<std::byte> wire(static_cast<size_t>(codec->EncodedBytes(n)));
    std::vector<double> te, td;
    for (int r = 0; r < reps; ++r) {
      auto t0 = Clock::now();
      codec->Encode(x, static_cast<uint64_t>(r), wire);
      te.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
      t0 = Clock::now();
      codec->Decode(wire, out, false);
      td.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
    }
    const double e = Median(te);
    const double d = Median(td);
    std::printf("| %s | %.4f | %.2f | %.2f | %.2f | %.2f |\n", spec.c_str(),
                static_cast<double>(wire.size()) / (static_cast<double>(n) * 4), gb / e, gb / d, gb / (e + d),
                base / (e + d));
    std::fprintf(stderr, "{\"codec\": \"%s\", \"elements\": %lld, \"encode_s\": %.6f, \"decode_s\": %.6f}\n",
                 spec.c_str(), static_cast<long long>(n), e, d);
  }
  return 0;
}
