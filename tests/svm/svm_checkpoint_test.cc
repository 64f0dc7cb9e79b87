// The distributed SVM's resumable state (svm/dist_checkpoint.h): the file round-trips and refuses damage; every rank's
// replicated alpha (AlphaMirror) is the solver's alpha; a solve stopped part-way on 4 thread ranks resumes on 1, 2 and
// 3 ranks (SMO and batched, one pair and many, every formulation) to the undisturbed run's optimum, with fewer steps
// than a cold start.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "comm/thread_comm.h"
#include "core/error.h"
#include "datasets/readers.h"
#include "svm/dist_checkpoint.h"
#include "svm/dist_train.h"
#include "svm/svm_train.h"
#include "tests/svm/svm_test_util.h"

namespace tessel::svm {
namespace {

namespace fs = std::filesystem;
const std::string kSvmData = std::string(TESSEL_TEST_DATA) + "/svm/";

fs::path FreshDir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("tessel_svm_ck_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  return dir;
}

SvmCheckpoint Sample() {
  SvmCheckpoint s;
  s.settings = R"({"-c/--cost":"1.0"})";
  s.ranks = 4;
  s.just_in_time = true;
  s.problems.push_back({3, 10, true, {0.0, 0.5, 1.0}});
  s.problems.push_back({2, 7, false, {0.25, 0.0}});
  return s;
}

TEST(SvmCheckpoint, RoundTripsAndWritesOnlyNewerStateWhenAsked) {
  const fs::path dir = FreshDir("roundtrip");
  EXPECT_FALSE(HasSvmCheckpoint(dir));
  const SvmCheckpoint s = Sample();
  ASSERT_TRUE(SaveSvmCheckpoint(dir, s, /*only_if_newer=*/true));  // creates the folder
  const SvmCheckpoint r = LoadSvmCheckpoint(dir);
  EXPECT_EQ(r.settings, s.settings);
  EXPECT_EQ(r.ranks, 4);
  EXPECT_TRUE(r.just_in_time);
  ASSERT_EQ(r.problems.size(), 2U);
  EXPECT_EQ(r.problems[0].alpha, s.problems[0].alpha);
  EXPECT_EQ(r.problems[1].alpha, s.problems[1].alpha);
  EXPECT_EQ(r.problems[1].iterations, 7);
  EXPECT_FALSE(r.problems[1].done);
  EXPECT_EQ(r.Progress(), (std::pair<size_t, int64_t>{1, 7}));
  EXPECT_EQ(r.TotalSteps(), 17);
  SvmCheckpoint older = s;
  older.problems[1].iterations = 6;
  older.problems[1].alpha = {9.0, 9.0};
  EXPECT_FALSE(SaveSvmCheckpoint(dir, older, /*only_if_newer=*/true));  // a survivor behind another one
  EXPECT_EQ(LoadSvmCheckpoint(dir).problems[1].alpha, s.problems[1].alpha);
  EXPECT_TRUE(SaveSvmCheckpoint(dir, older, /*only_if_newer=*/false));
  EXPECT_EQ(LoadSvmCheckpoint(dir).problems[1].alpha, older.problems[1].alpha);
  fs::remove_all(dir);
}

TEST(SvmCheckpoint, DamagedStateIsRefusedNamingTheFile) {
  const fs::path dir = FreshDir("damaged");
  ASSERT_TRUE(SaveSvmCheckpoint(dir, Sample(), false));
  const fs::path file = dir / "svm_state.bin";
  std::string bytes;
  {
    std::ifstream in(file, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  const auto expect_refused = [&](const std::string& content, const std::string& what) {
    std::ofstream(file, std::ios::binary | std::ios::trunc) << content;
    try {
      (void)LoadSvmCheckpoint(dir);
      ADD_FAILURE() << "accepted: " << what;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("svm_state.bin"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  std::string flipped = bytes;
  flipped[bytes.size() - 12] ^= 1;  // inside the last alpha
  expect_refused(flipped, "checksum");
  expect_refused(bytes.substr(0, bytes.size() / 2), "checksum");
  expect_refused("something else\n", "not a tessel SVM state");
  // A well-formed file whose alpha is negative (written by hand, checksum right) is refused too.
  SvmCheckpoint bad = Sample();
  bad.problems[0].alpha[1] = -0.5;
  ASSERT_TRUE(SaveSvmCheckpoint(dir, bad, false));
  EXPECT_THROW((void)LoadSvmCheckpoint(dir), Error);
  fs::remove_all(dir);
}

struct Run {
  SvmModel model;
  TrainReport report;
};

// Trains on k thread ranks, each with its own SvmElasticState over `dir` resuming from `saved`; rank 0's result.
Run TrainElastic(int k, const datasets::SparseRowDataset& data, const SvmParams& params, DistTrainOptions how,
                 const fs::path& dir, const SvmCheckpoint& saved) {
  std::vector<Run> runs(static_cast<size_t>(k));
  comm::ThreadGroup::Run(k, [&](comm::Communicator& c) {
    SvmElasticState state(dir, "settings", c.Size(), c.Rank(), saved);
    DistTrainOptions mine = how;
    mine.elastic = &state;
    Run& r = runs[static_cast<size_t>(c.Rank())];
    r.model = TrainSvmDistributed(c, data, params, &r.report, nullptr, mine);
  });
  return std::move(runs[0]);
}

void ExpectSameOptimum(const Run& got, const TrainReport& ref, const SvmModel& ref_model,
                       const datasets::SparseRowDataset& data, const std::string& what) {
  ASSERT_EQ(got.report.pairs.size(), ref.pairs.size()) << what;
  for (size_t p = 0; p < ref.pairs.size(); ++p) {
    const double want = ref.pairs[p].result.obj;
    EXPECT_LE(std::abs(got.report.pairs[p].result.obj - want), 1e-6 * std::abs(want)) << what << ", pair " << p;
  }
  // Labels (classes differ by at least 1) equal; the regressions' values to the optimum's accuracy.
  const auto a = PredictSvm(got.model, data);
  const auto b = PredictSvm(ref_model, data);
  ASSERT_EQ(a.size(), b.size()) << what;
  int64_t differ = 0;
  for (size_t i = 0; i < a.size(); ++i) differ += std::abs(a[i] - b[i]) > 1e-4;
  EXPECT_EQ(differ, 0) << what;
}

// A solve stopped by the iteration limit on 4 ranks leaves each problem's alpha (the mirror's, the same on every
// rank) in the state; resumed on 1, 2 and 3 ranks it reaches the undisturbed one-process optimum (objective within
// 1e-6, the same predictions) in fewer steps than the same solver from zero.
void CheckResume(const std::string& file, const std::string& args, int limit, DistTrainOptions how,
                 const std::string& name, const std::vector<int>& resume_on = {1, 2, 3}) {
  const auto data = datasets::ReadLibsvm(kSvmData + file);
  const SvmParams p = testing::ParseLibsvmArgs(args);
  TrainReport ref;
  const SvmModel ref_model = TrainSvm(data, p, &ref);
  const fs::path dir = FreshDir(name);
  const Run cold = TrainElastic(4, data, p, how, dir / "cold", {});  // the same solver from zero
  SvmParams stopped = p;
  stopped.max_iterations = limit;
  (void)TrainElastic(4, data, stopped, how, dir, {});
  const SvmCheckpoint saved = LoadSvmCheckpoint(dir);
  ASSERT_EQ(saved.problems.size(), ref.pairs.size());
  bool stopped_early = false;  // the limit stopped at least one problem part-way
  for (const auto& q : saved.problems) {
    EXPECT_LE(q.iterations, limit);
    stopped_early = stopped_early || !q.done;
  }
  EXPECT_TRUE(stopped_early);
  for (const int k : resume_on) {
    const Run r = TrainElastic(k, data, p, how, dir / std::to_string(k), saved);
    ExpectSameOptimum(r, ref, ref_model, data, name + " resumed on " + std::to_string(k) + " ranks");
    EXPECT_LT(r.report.iterations, cold.report.iterations) << name << " on " << k;
    const SvmCheckpoint end = LoadSvmCheckpoint(dir / std::to_string(k));  // rank 0's state after each problem
    ASSERT_EQ(end.problems.size(), ref.pairs.size());
    for (const auto& q : end.problems) EXPECT_TRUE(q.done);
    EXPECT_EQ(end.TotalSteps(), saved.TotalSteps() + r.report.iterations);
    if (k == resume_on.front()) {  // the mirror is the solver's final alpha: resumed from it, nothing is left to do
      const Run again = TrainElastic(2, data, p, how, dir / "again", end);
      EXPECT_LE(again.report.iterations, static_cast<int64_t>(end.problems.size())) << name;
      ExpectSameOptimum(again, ref, ref_model, data, name + " resumed from its end");
    }
  }
  fs::remove_all(dir);
}

TEST(SvmCheckpoint, SmoStoppedOnFourRanksResumesOnFewer) { CheckResume("heart_scale", "-c 4 -g 0.25", 100, {}, "smo"); }

TEST(SvmCheckpoint, BatchedStoppedOnFourRanksResumesOnFewer) {
  DistTrainOptions how;
  how.batched = true;
  how.batch.working_set = 16;
  CheckResume("heart_scale", "-c 4 -g 0.25", 120, how, "batch");
}

TEST(SvmCheckpoint, ManyPairsResumeEachFromItsAlpha) {
  DistTrainOptions how;  // kAuto: shared when checkpointed
  // A tighter tolerance: some pairs' objectives are about 5, where eps 1e-3 leaves differences of 5e-6.
  CheckResume("letter_300", "-c 10 -g 0.5 -e 1e-5", 20, how, "pairs", {3});
}

// nu-SVC, one-class and the regressions (their start alpha replaced by the saved one, which keeps their equality
// constraints; the regressions' 2l variables) resume as C-SVC does.
TEST(SvmCheckpoint, EveryFormulationResumes) {
  for (const char* type : {"1", "2", "3", "4"}) {
    CheckResume("heart_scale", std::string("-e 1e-5 -s ") + type, 30, {}, std::string("s") + type, {3});
  }
}

TEST(SvmCheckpoint, SpreadPairsAreRefused) {
  const auto data = datasets::ReadLibsvm(kSvmData + "letter_300");
  DistTrainOptions how;
  how.schedule = PairSchedule::kSpread;
  const fs::path dir = FreshDir("spread");
  EXPECT_THROW((void)TrainElastic(2, data, testing::ParseLibsvmArgs("-c 10"), how, dir, {}), Error);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace tessel::svm
