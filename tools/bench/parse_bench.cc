// tessel_parse_bench: ReadEdgeList speed on one thread (best of N) against the named baseline `wc -l` on the
// same file (the speed of just counting lines). Inputs: files given with --input plus a generated "u v" list.
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/log.h"
#include "core/parallel.h"
#include "core/rng.h"
#include "datasets/readers.h"

extern char** environ;

namespace tessel::bench {
namespace {
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }
double CpuSeconds(const rusage& u) {
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}
// User + system CPU seconds of this process so far (one thread runs, so this is the parser's CPU time).
double SelfCpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return CpuSeconds(u);
}

// Writes `edges` lines "u v\n" with ids uniform in [0, nodes), from a seeded stream.
void WriteRandomEdgeList(const fs::path& path, int64_t edges, int64_t nodes, uint64_t seed) {
  Rng rng(StreamKey{.seed = seed, .purpose = 0x7061727365});
  std::FILE* f = std::fopen(path.c_str(), "wb");
  TESSEL_CHECK(f != nullptr, "{}: cannot create the generated input", path.string());
  fmt::memory_buffer buf;
  for (int64_t i = 0; i < edges; ++i) {
    fmt::format_to(std::back_inserter(buf), "{} {}\n", rng.UniformInt(static_cast<uint64_t>(nodes)),
                   rng.UniformInt(static_cast<uint64_t>(nodes)));
    if (buf.size() > (size_t{1} << 20) || i + 1 == edges) {
      const size_t wrote = std::fwrite(buf.data(), 1, buf.size(), f);
      if (wrote != buf.size()) {
        std::fclose(f);
        throw Error(fmt::format("{}: write failed (disk full?)", path.string()));
      }
      buf.clear();
    }
  }
  TESSEL_CHECK(std::fclose(f) == 0, "{}: write failed", path.string());
}

// Runs `wc -l FILE` (found on PATH) and returns its line count; the wall time includes starting the process,
// `cpu_s` gets the child's user + system CPU seconds.
int64_t WcLines(const fs::path& path, double* cpu_s) {
  int fds[2];
  TESSEL_CHECK(pipe(fds) == 0, "pipe() failed");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  std::string file = path.string();
  std::string wc = "wc";
  std::string flag = "-l";
  char* argv[] = {wc.data(), flag.data(), file.data(), nullptr};
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, "wc", &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  std::string out;
  char chunk[256];
  ssize_t got = 0;
  while (rc == 0 && (got = read(fds[0], chunk, sizeof chunk)) > 0) out.append(chunk, static_cast<size_t>(got));
  close(fds[0]);
  TESSEL_CHECK(rc == 0, "cannot run `wc -l` (is coreutils on PATH?)");
  int status = 0;
  rusage usage{};
  wait4(pid, &status, 0, &usage);
  *cpu_s = CpuSeconds(usage);
  TESSEL_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "`wc -l {}` failed: {}", file, out);
  return std::stoll(out);
}

struct Row {
  std::string name;
  double megabytes = 0;
  int64_t edges = 0;
  int64_t lines = 0;
  double parse_s = 0;  // wall seconds
  double wc_s = 0;
  double parse_cpu_s = 0;  // user + system CPU seconds
  double wc_cpu_s = 0;
};

Row Measure(const fs::path& path, const std::string& name, int repeats) {
  Row row;
  row.name = name;
  row.megabytes = static_cast<double>(fs::file_size(path)) / 1e6;
  row.wc_s = row.parse_s = row.wc_cpu_s = row.parse_cpu_s = 1e300;
  for (int r = 0; r < repeats; ++r) {  // the baseline first: it also brings the file into the page cache
    const auto t0 = Clock::now();
    double cpu = 0;
    row.lines = WcLines(path, &cpu);
    row.wc_s = std::min(row.wc_s, Seconds(t0, Clock::now()));
    row.wc_cpu_s = std::min(row.wc_cpu_s, cpu);
  }
  for (int r = 0; r < repeats; ++r) {
    const double c0 = SelfCpuSeconds();
    const auto t0 = Clock::now();
    const datasets::EdgeList e = datasets::ReadEdgeList(path);
    const double s = Seconds(t0, Clock::now());
    const double cpu = SelfCpuSeconds() - c0;
    row.edges = static_cast<int64_t>(e.size());
    row.parse_s = std::min(row.parse_s, s);
    row.parse_cpu_s = std::min(row.parse_cpu_s, cpu);
    log::Info("{}: run {}: {} edges in {:.3f} s wall, {:.3f} s CPU", name, r + 1, row.edges, s, cpu);
  }
  return row;
}

int Main(int argc, char** argv) {
  CLI::App app{"tessel_parse_bench: ReadEdgeList on one thread (best of N) vs `wc -l` on the same files"};
  std::vector<std::string> inputs;
  int64_t gen_edges = 10'000'000;
  int64_t gen_nodes = 1'000'000;
  uint64_t seed = 1;
  int repeats = 3;
  std::string tmp = fs::temp_directory_path().string();
  bool markdown = false;
  bool json = false;
  app.add_option("--input", inputs, "edge-list files to time (repeat the option for several)")
      ->check(CLI::ExistingFile);
  app.add_option("--generated-edges", gen_edges, "lines of the generated \"u v\" file (0: none)")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 40).description("must be >= 0; use 0 to skip the generated file"));
  app.add_option("--generated-nodes", gen_nodes, "ids of the generated file are uniform in [0, nodes)")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 62).description("must be >= 1"));
  app.add_option("--seed", seed, "seed of the generated file")->capture_default_str();
  app.add_option("--repeats", repeats, "timed runs per file and tool; the best one is reported")
      ->capture_default_str()
      ->check(CLI::Range(1, 100).description("must be in [1, 100]"));
  app.add_option("--tmp", tmp, "folder for the generated file (removed afterwards)")
      ->capture_default_str()
      ->check(CLI::ExistingDirectory);
  auto* md = app.add_flag("--markdown", markdown, "print a markdown table instead of plain text");
  app.add_flag("--json", json, "print one JSON object per file instead of plain text")->excludes(md);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  if (inputs.empty() && gen_edges == 0) {
    std::fprintf(stderr, "error: nothing to time: pass --input FILE or a --generated-edges count above 0\n");
    return 2;
  }

  const ThreadLimit one_thread(1);
  std::vector<std::pair<fs::path, std::string>> files;
  for (const auto& in : inputs) files.emplace_back(in, fs::path(in).filename().string());
  fs::path gen_dir;
  if (gen_edges > 0) {
    gen_dir = fs::path(tmp) / fmt::format("tessel_parse_bench_{}", getpid());
    fs::create_directories(gen_dir);
    const fs::path gen = gen_dir / "random.edges.txt";
    log::Info("writing {} random edges over {} nodes to {}", gen_edges, gen_nodes, gen.string());
    WriteRandomEdgeList(gen, gen_edges, gen_nodes, seed);
    files.emplace_back(gen,
                       fmt::format("generated {}M edges, {}M nodes (seed {})", static_cast<double>(gen_edges) / 1e6,
                                   static_cast<double>(gen_nodes) / 1e6, seed));
  }
  std::vector<Row> rows;
  try {
    for (const auto& [path, name] : files) rows.push_back(Measure(path, name, repeats));
  } catch (...) {
    if (!gen_dir.empty()) fs::remove_all(gen_dir);
    throw;
  }
  if (!gen_dir.empty()) fs::remove_all(gen_dir);

  if (markdown) {
    std::printf(
        "| file | size MB | edges | seconds | edges/s | MB/s | wc -l seconds | ratio (parse / wc -l) | "
        "CPU seconds (parse / wc -l) | edges per CPU second |\n");
    std::printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  }
  for (const Row& r : rows) {
    const double eps = static_cast<double>(r.edges) / r.parse_s;
    const double mbps = r.megabytes / r.parse_s;
    const double ratio = r.parse_s / r.wc_s;
    std::string line;
    if (markdown) {
      line =
          fmt::format("| {} | {:.1f} | {} | {:.3f} | {:.1f}M | {:.0f} | {:.3f} | {:.1f} | {:.3f} / {:.3f} | {:.1f}M |",
                      r.name, r.megabytes, r.edges, r.parse_s, eps / 1e6, mbps, r.wc_s, ratio, r.parse_cpu_s,
                      r.wc_cpu_s, static_cast<double>(r.edges) / r.parse_cpu_s / 1e6);
    } else if (json) {
      const nlohmann::json j = {
          {"file", r.name},       {"megabytes", r.megabytes},     {"edges", r.edges},   {"lines", r.lines},
          {"seconds", r.parse_s}, {"cpu_seconds", r.parse_cpu_s}, {"edges_per_s", eps}, {"megabytes_per_s", mbps},
          {"wc_seconds", r.wc_s}, {"wc_cpu_seconds", r.wc_cpu_s}, {"ratio", ratio}};
      line = j.dump();
    } else {
      line = fmt::format(
          "{}: {:.1f} MB, {} edges ({} lines): ReadEdgeList {:.3f} s ({:.3f} s CPU) = {:.1f}M edges/s, {:.0f} MB/s; "
          "wc -l {:.3f} s ({:.3f} s CPU); ratio {:.1f}",
          r.name, r.megabytes, r.edges, r.lines, r.parse_s, r.parse_cpu_s, eps / 1e6, mbps, r.wc_s, r.wc_cpu_s, ratio);
    }
    std::printf("%s\n", line.c_str());
  }
  return 0;
}

}  // namespace
}  // namespace tessel::bench

int main(int argc, char** argv) {
  try {
    return tessel::bench::Main(argc, argv);
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
