// The distributed SVM's resumable state (svm/dist_checkpoint.h): DIR/svm_state.bin is a first line naming the
// format, a JSON line (version, settings, ranks, just_in_time, per problem its samples, iterations and done), every
// problem's alpha as little-endian doubles, and an FNV-1a checksum of everything before it.
#include "svm/dist_checkpoint.h"

#include <cmath>
#include <cstring>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/checksum.h"
#include "core/error.h"
#include "core/file_io.h"
#include "core/log.h"

namespace tessel::svm {
namespace {

namespace fs = std::filesystem;
constexpr std::string_view kMagic = "tessel svm state\n";
constexpr const char* kFile = "svm_state.bin";

std::vector<std::byte> Encode(const SvmCheckpoint& s) {
  nlohmann::json j{{"version", kSvmCheckpointVersion},
                   {"settings", s.settings},
                   {"ranks", s.ranks},
                   {"just_in_time", s.just_in_time},
                   {"problems", nlohmann::json::array()}};
  for (const SvmCheckpointProblem& p : s.problems)
    j["problems"].push_back({{"samples", p.samples}, {"iterations", p.iterations}, {"done", p.done}});
  const std::string head = std::string(kMagic) + j.dump() + "\n";
  std::vector<std::byte> out(head.size());
  std::memcpy(out.data(), head.data(), head.size());
  for (const SvmCheckpointProblem& p : s.problems) {
    const size_t at = out.size();
    out.resize(at + 8 * p.alpha.size());
    std::memcpy(out.data() + at, p.alpha.data(), 8 * p.alpha.size());
  }
  const uint64_t h = Checksum64(out.data(), out.size());
  const size_t at = out.size();
  out.resize(at + 8);
  std::memcpy(out.data() + at, &h, 8);
  return out;
}

}  // namespace

std::pair<size_t, int64_t> SvmCheckpoint::Progress() const {
  size_t done = 0;
  while (done < problems.size() && problems[done].done) ++done;
  return {done, done < problems.size() ? problems[done].iterations : 0};
}

int64_t SvmCheckpoint::TotalSteps() const {
  int64_t total = 0;
  for (const SvmCheckpointProblem& p : problems) total += p.iterations;
  return total;
}

bool HasSvmCheckpoint(const fs::path& dir) { return fs::exists(dir / kFile); }

bool SaveSvmCheckpoint(const fs::path& dir, const SvmCheckpoint& state, bool only_if_newer) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  TESSEL_CHECK(fs::is_directory(dir), "--checkpoint {}: cannot create the folder ({}); give a writable folder",
               dir.string(), ec ? ec.message() : "not a folder");
  const FolderLock lock(dir, fmt::format("--checkpoint {}", dir.string()));
  if (only_if_newer && HasSvmCheckpoint(dir)) {
    try {
      if (LoadSvmCheckpoint(dir).TotalSteps() >= state.TotalSteps()) return false;
    } catch (const Error&) {  // unreadable: replaced by this state
    }
  }
  WriteFileAtomic(dir / kFile, Encode(state));
  return true;
}

SvmCheckpoint LoadSvmCheckpoint(const fs::path& dir) {
  const fs::path file = dir / kFile;
  const std::string fix =
      fmt::format("the SVM state in {} is damaged; delete {} to start over", dir.string(), file.string());
  const std::string bytes = ReadFileToString(file);
  const auto bad = [&](const std::string& what) { return Error::InFile(file.string(), what + " (" + fix + ")"); };
  if (!bytes.starts_with(kMagic)) throw bad("not a tessel SVM state (its first line is not \"tessel svm state\")");
  if (bytes.size() < kMagic.size() + 8) throw bad("cut short");
  uint64_t h = 0;
  std::memcpy(&h, bytes.data() + bytes.size() - 8, 8);
  if (Checksum64(bytes.data(), bytes.size() - 8) != h) {
    throw bad("its checksum does not match (a write cut short, or the file was changed)");
  }
  const size_t nl = bytes.find('\n', kMagic.size());
  if (nl == std::string::npos) throw bad("no header line");
  SvmCheckpoint s;
  size_t at = nl + 1;
  try {
    const nlohmann::json j = nlohmann::json::parse(bytes.substr(kMagic.size(), nl - kMagic.size()));
    const int version = j.at("version").get<int>();
    if (version < 1 || version > kSvmCheckpointVersion) {
      throw bad(fmt::format("version {}; this tessel reads versions 1 to {}", version, kSvmCheckpointVersion));
    }
    s.settings = j.at("settings").get<std::string>();
    s.ranks = j.at("ranks").get<int>();
    s.just_in_time = j.at("just_in_time").get<bool>();
    for (const nlohmann::json& p : j.at("problems")) {
      SvmCheckpointProblem q;
      q.samples = p.at("samples").get<int64_t>();
      q.iterations = p.at("iterations").get<int64_t>();
      q.done = p.at("done").get<bool>();
      if (q.samples < 0 || q.iterations < 0 || static_cast<uint64_t>(q.samples) > (bytes.size() - at) / 8) {
        throw bad(fmt::format("problem {}: {} samples, {} iterations do not fit the file", s.problems.size(), q.samples,
                              q.iterations));
      }
      q.alpha.resize(static_cast<size_t>(q.samples));
      std::memcpy(q.alpha.data(), bytes.data() + at, 8 * q.alpha.size());
      at += 8 * q.alpha.size();
      for (size_t k = 0; k < q.alpha.size(); ++k) {
        if (!std::isfinite(q.alpha[k]) || q.alpha[k] < 0) {
          throw bad(fmt::format("problem {}: alpha {} of sample {} is not a finite number >= 0", s.problems.size(),
                                q.alpha[k], k));
        }
      }
      s.problems.push_back(std::move(q));
    }
  } catch (const nlohmann::json::exception& e) {
    throw bad(fmt::format("a malformed header ({})", e.what()));
  }
  if (at + 8 != bytes.size()) throw bad(fmt::format("{} bytes after the alphas, expected 8", bytes.size() - at));
  return s;
}

SvmElasticState::SvmElasticState(fs::path dir, std::string settings, int ranks, int rank, SvmCheckpoint resumed)
    : dir_(std::move(dir)), rank_(rank), settings_(std::move(settings)), ranks_(ranks), saved_(std::move(resumed)) {}

AlphaMirror* SvmElasticState::Begin(int64_t samples, std::span<const double> alpha0, std::vector<double>* start) {
  TESSEL_CHECK(!solving_, "SvmElasticState: problem {} begun before the last one ended", next_);
  solving_ = true;
  base_steps_ = 0;
  mirror_.steps = 0;
  if (next_ < saved_.problems.size()) {
    const SvmCheckpointProblem& p = saved_.problems[next_];
    TESSEL_CHECK(p.samples == samples,
                 "--checkpoint {}: its problem {} has {} samples but this run's has {}: the state is for other data "
                 "or parameters; delete it to start over",
                 dir_.string(), next_ + 1, p.samples, samples);
    mirror_.alpha = p.alpha;
    base_steps_ = p.iterations;
    *start = p.alpha;
    ++resumed_problems_;
  } else if (alpha0.empty()) {
    mirror_.alpha.assign(static_cast<size_t>(samples), 0.0);
  } else {
    mirror_.alpha.assign(alpha0.begin(), alpha0.end());
  }
  return &mirror_;
}

void SvmElasticState::End(int64_t iterations, bool solved) {
  TESSEL_CHECK(solving_, "SvmElasticState: no problem begun");
  finished_.push_back({static_cast<int64_t>(mirror_.alpha.size()), base_steps_ + iterations, solved, mirror_.alpha});
  solving_ = false;
  ++next_;
  if (rank_ == 0) SaveSvmCheckpoint(dir_, Capture(), /*only_if_newer=*/false);
}

SvmCheckpoint SvmElasticState::Capture() const {
  SvmCheckpoint s;
  s.settings = settings_;
  s.ranks = ranks_;
  s.problems = finished_;
  if (solving_)
    s.problems.push_back(
        {static_cast<int64_t>(mirror_.alpha.size()), base_steps_ + mirror_.steps, false, mirror_.alpha});
  // Saved problems this run has not reached keep their alpha.
  for (size_t k = s.problems.size(); k < saved_.problems.size(); ++k) s.problems.push_back(saved_.problems[k]);
  return s;
}

void SvmElasticState::SaveJustInTime() {
  SvmCheckpoint s = Capture();
  s.just_in_time = true;
  const bool wrote = SaveSvmCheckpoint(dir_, s, /*only_if_newer=*/true);
  const auto [done, steps] = s.Progress();
  const std::string where = solving_ ? fmt::format("{} steps into problem {}", steps, done + 1) : "none under way";
  // `tessel launch` reads this line (app/launch.cc).
  log::Warn("rank {} at the failure: svm: {} problem(s) solved, {}; just-in-time alpha {} {}", rank_, done, where,
            wrote ? "written to" : "already as new in", dir_.string());
}

}  // namespace tessel::svm
