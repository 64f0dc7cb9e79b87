// The batched SVM solver's device loop (svm/device_loop.h) on the simulated device: its host twins make the
// host batched solver's decisions step for step (the same alphas, bit for bit), so its objective is SMO's; a round
// allocates nothing and makes only the planned copies; the row cache's bookkeeping.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "core/device.h"
#include "core/rng.h"
#include "datasets/readers.h"
#include "svm/batch_solver.h"
#include "svm/device_loop.h"
#include "svm/smo_solver.h"
#include "svm/svm_ops.h"
#include "svm/svm_train.h"
#include "tests/svm/svm_test_util.h"

namespace tessel::svm {
namespace {

using testing::CudaContext;
using testing::EveryKernel;
using testing::MakeProblem;
using testing::Problem;
using testing::RandomDataset;

// The loop on the twins, with its own counts.
SolverResult OnTwin(const Problem& p, kernels::SvmKernelRows& k, double cp, double cn, const SolverOptions& o,
                    const BatchOptions& b, devloop::LoopResult* loop) {
  const std::unique_ptr<devloop::LoopDevice> dev = devloop::MakeTwinLoopDevice(k);
  return SolveOnLoopDevice(*dev, {&k, p.rows, p.y, cp, cn}, o, b, nullptr, loop);
}

// The planned copies of the loop (device_loop.h): per round one upload and one download (its results with the next
// selection); per selection of its own (selections beyond the rounds') one download; per elimination check two
// (extremes, count), plus, when the active set changed, three (the new set's count, the two column sets' entry
// counts) and at most one upload (the cached slots); per reconstruction three (the free count, then the restored
// set's count and its columns' entry count). Every download is the loop's one kind of synchronisation. No
// allocation at all (every array sized at the setup), and at most one download in a round.
void ExpectPlannedTraffic(const devloop::LoopResult& r) {
  const device::Counters& c = r.loop;
  EXPECT_EQ(c.allocations, 0);
  EXPECT_EQ(c.runtime_allocations, 0);
  EXPECT_EQ(r.after_first_round.allocations, 0);
  EXPECT_EQ(c.d2h_copies, r.selections + 2 * r.shrink_checks + 3 * r.active_changes + 3 * r.reconstructions);
  EXPECT_EQ(c.synchronizations, c.d2h_copies);
  EXPECT_EQ(r.max_round_downloads, r.rounds > 0 ? 1 : 0);
  EXPECT_GE(c.h2d_copies, r.rounds);
  EXPECT_LE(c.h2d_copies, r.rounds + r.active_changes);
  // Launches counted as the CUDA loop makes them (at least the subproblem, the bookkeeping and two top-k per round);
  // the simulated device has no CUDA launch sites of its own.
  EXPECT_GE(c.launches, 5 * r.rounds);
  EXPECT_EQ(c.launches_seen, 0);
  // Each round's copies are small: the working set's ids and slots, never a vector over the samples.
  const int64_t per_round = 16 + 4 * devloop::kMaxQ;
  EXPECT_LE(c.d2h_bytes,
            (r.selections + r.rounds) * per_round + (r.shrink_checks + r.reconstructions + r.active_changes) * 32);
}

TEST(SvmDeviceLoopTest, TwinMakesTheHostBatchedSolversStepsForEveryKernelAndPolicy) {
  device::ScopedSimulatedDevice sim;
  Problem p = MakeProblem(RandomDataset(300, 20, 0.5, {1, -1}, 41));
  for (const auto& kp : EveryKernel()) {
    for (const auto policy :
         {ShrinkingPolicy::kOff, ShrinkingPolicy::kEager, ShrinkingPolicy::kPeriodic, ShrinkingPolicy::kLazy}) {
      SCOPED_TRACE(std::string(SvmKernelName(kp.type)) + " " + std::string(ShrinkingName(policy)));
      SolverOptions o;
      o.eps = 1e-8;
      o.shrinking = policy;
      o.cache_bytes = 40 * 300 * 4;  // 40 rows: the working set's 32 and a few more, so rows are evicted
      BatchOptions b;
      b.working_set = 32;
      kernels::SvmKernelRows k(p.view, kp);
      BatchStats host_stats;
      const SolverResult host = SolveBinaryBatched({&k, p.rows, p.y, 2.0, 0.5}, o, b, &host_stats);
      devloop::LoopResult loop;
      const SolverResult dev = OnTwin(p, k, 2.0, 0.5, o, b, &loop);
      ASSERT_EQ(dev.alpha.size(), host.alpha.size());
      for (size_t i = 0; i < host.alpha.size(); ++i) ASSERT_EQ(dev.alpha[i], host.alpha[i]) << "sample " << i;
      EXPECT_EQ(dev.obj, host.obj);
      EXPECT_EQ(dev.rho, host.rho);
      EXPECT_EQ(dev.iterations, host.iterations);
      EXPECT_EQ(loop.rounds, host_stats.rounds);
      EXPECT_EQ(dev.shrink_checks, host.shrink_checks);
      EXPECT_EQ(dev.reconstructions, host.reconstructions);
      EXPECT_EQ(dev.bound_changes, host.bound_changes);
      EXPECT_EQ(dev.min_active, host.min_active);
      EXPECT_LT(dev.gap, o.eps);
      // Rows come back from the cache; evictions happened (40 slots for 300 samples).
      EXPECT_EQ(loop.cache_slots, 40);
      EXPECT_GT(loop.cache_hits, 0);
      EXPECT_GT(loop.cache_misses, 40);
      EXPECT_LT(dev.kernel_evaluations, host.kernel_evaluations);  // the host solver recomputes every row
      ExpectPlannedTraffic(loop);
      if (policy != ShrinkingPolicy::kOff) {
        EXPECT_LT(loop.min_active, 300);
      }
    }
  }
}

// The must-show of issue 14: the device loop's twin reaches SMO's objective (the bound of svm_batch_test.cc:
// both stop with gap < eps, so the objectives differ by at most eps * sum C).
TEST(SvmDeviceLoopTest, TwinReachesSmosObjectiveOnHeartScale) {
  const auto path = std::filesystem::path(TESSEL_TEST_DATA) / "svm" / "heart_scale";
  Problem p = MakeProblem(datasets::ReadLibsvm(path));
  device::ScopedSimulatedDevice sim;
  for (const auto& kp : EveryKernel()) {
    SCOPED_TRACE(std::string(SvmKernelName(kp.type)));
    SolverOptions o;
    o.eps = 1e-9;
    kernels::SvmKernelRows k(p.view, kp);
    const SolverResult smo = SolveBinary({&k, p.rows, p.y, 1.0, 1.0}, o);
    for (const int q : {2, 16, 1024}) {
      BatchOptions b;
      b.working_set = q;
      devloop::LoopResult loop;
      const SolverResult dev = OnTwin(p, k, 1.0, 1.0, o, b, &loop);
      const double bound = o.eps * static_cast<double>(p.rows.size());
      ASSERT_LE(bound, 1e-6 * std::fabs(smo.obj));
      EXPECT_LE(std::fabs(dev.obj - smo.obj), bound) << "q " << q;
      EXPECT_NEAR(dev.rho, smo.rho, 1e-5) << "q " << q;
      EXPECT_LT(dev.gap, o.eps);
      EXPECT_EQ(dev.nr_sv, smo.nr_sv) << "q " << q;
      ExpectPlannedTraffic(loop);
    }
  }
}

// Every formulation on the loop (the linear term, the starting alpha and Solver_NU's selection given to it as data):
// nu-SVC, one-class, epsilon-SVR and nu-SVR through `train svm --device cuda`'s solver on the simulated device reach
// the SMO solver's optimum (svm-train's: svm_types_test.cc) within 1e-6 relative at eps 1e-5 (svm_dist_types_test's
// bound for the batched solvers), the gap under eps, for every elimination policy, on heart_scale and
// make_friedman1(200, random_state=0); each pair's loop allocates nothing after its first round and downloads once a
// round.
TEST(SvmDeviceLoopTest, EveryFormulationReachesSvmTrainsOptimumWithTheLoopsCounts) {
  device::ScopedSimulatedDevice sim;
  const std::string dir = std::string(TESSEL_TEST_DATA) + "/svm/";
  for (const auto& [args, file] :
       {std::pair{"-s 1", "heart_scale"}, std::pair{"-s 2", "heart_scale"},
        std::pair{"-s 2 -t 1 -d 2 -g 0.125 -r 1 -n 0.125", "heart_scale"},
        std::pair{"-s 3 -c 4 -p 0.25 -g 0.25", "heart_scale"}, std::pair{"-s 3 -c 8 -p 0.5", "friedman1_200"},
        std::pair{"-s 4", "heart_scale"}, std::pair{"-s 4 -c 8 -n 0.25", "friedman1_200"}}) {
    const auto data = datasets::ReadLibsvm(dir + file);
    for (const auto policy : {ShrinkingPolicy::kOff, ShrinkingPolicy::kEager, ShrinkingPolicy::kPeriodic}) {
      const std::string what = std::string(file) + " '" + args + "' " + std::string(ShrinkingName(policy));
      SvmParams params = testing::ParseLibsvmArgs("-e 0.00001 " + std::string(args));
      params.shrinking = policy;
      TrainReport smo;
      (void)TrainSvm(data, params, &smo);
      TrainReport dev;
      (void)TrainSvm(data, params, &dev, MakeBinarySolver(CudaContext(), "batch", BatchOptions{.working_set = 16}));
      ASSERT_EQ(dev.pairs.size(), smo.pairs.size()) << what;
      for (size_t t = 0; t < smo.pairs.size(); ++t) {
        const SolverResult& r = dev.pairs[t].result;
        const double ref = smo.pairs[t].result.obj;
        EXPECT_NEAR(r.obj, ref, 1e-6 * std::fabs(ref)) << what;
        EXPECT_LT(r.gap, params.eps) << what;
        EXPECT_GT(r.device.rounds, 1) << what;
        EXPECT_EQ(r.device.after_first_round.allocations, 0) << what;
        EXPECT_EQ(r.device.max_round_downloads, 1) << what;
        EXPECT_EQ(r.device.loop.synchronizations, r.device.loop.d2h_copies) << what;
      }
    }
  }
}

// FormWorkingSet's arrays over l samples (position 100 + s, dataset row 200 + s, y[s] = label(s)) for a working set
// of up to q.
struct WorkingSetArrays {
  std::vector<uint8_t> chosen;
  std::vector<int32_t> pos;
  std::vector<int32_t> rows;
  std::vector<int8_t> y;
  std::vector<std::byte> info_bytes = std::vector<std::byte>(devloop::SelectInfo::Bytes(devloop::kMaxQ));
  devloop::SelectInfo* info = reinterpret_cast<devloop::SelectInfo*>(info_bytes.data());
  std::vector<int32_t> ws_pos;
  std::vector<int32_t> ws_rows;
  std::vector<int8_t> ws_y;

  template <typename Label>
  WorkingSetArrays(int l, int q, Label label)
      : chosen(static_cast<size_t>(l), 0),
        pos(static_cast<size_t>(l)),
        rows(static_cast<size_t>(l)),
        y(static_cast<size_t>(l)),
        ws_pos(static_cast<size_t>(q)),
        ws_rows(static_cast<size_t>(q)),
        ws_y(static_cast<size_t>(q)) {
    for (int s = 0; s < l; ++s) {
      pos[static_cast<size_t>(s)] = 100 + s;
      rows[static_cast<size_t>(s)] = 200 + s;
      y[static_cast<size_t>(s)] = label(s);
    }
  }
  void Form(const std::vector<double>& up_key, const std::vector<int32_t>& up_id, const std::vector<double>& low_key,
            const std::vector<int32_t>& low_id, int part) {
    devloop::FormWorkingSet(up_key.data(), up_id.data(), low_key.data(), low_id.data(),
                            static_cast<int64_t>(up_key.size()), static_cast<int64_t>(ws_pos.size()), part,
                            chosen.data(), pos.data(), rows.data(), y.data(), info, ws_pos.data(), ws_rows.data(),
                            ws_y.data());
  }
};

// Solver_NU's working set: the first label's part (a quarter of q from I_up, then I_low to half of q), then the
// second label's appended until q; the gap is the larger part's.
TEST(SvmDeviceLoopTest, FormWorkingSetPerLabelAppendsTheSecondPart) {
  WorkingSetArrays w(20, 8, [](int s) { return static_cast<int8_t>(s < 10 ? 1 : -1); });
  w.Form({4, 3, 2, 1}, {5, 3, 9, 1}, {-1, -2, -3, -4}, {3, 7, 2, 0}, 1);  // y = +1: gap 3, quota 4
  ASSERT_EQ(w.info->m, 4);
  EXPECT_EQ(w.info->gap, 3.0);
  w.Form({1, 0, -HUGE_VAL, -HUGE_VAL}, {12, 15, -1, -1}, {2, 1, 0, -1}, {11, 12, 13, 14}, 2);  // y = -1: gap 3, rest 4
  ASSERT_EQ(w.info->m, 8);
  EXPECT_EQ(std::vector<int32_t>(w.info->ws, w.info->ws + 8), (std::vector<int32_t>{5, 3, 7, 2, 12, 15, 11, 13}));
  EXPECT_EQ(w.info->gap, 3.0);
  EXPECT_EQ(w.ws_pos[4], 112);
  EXPECT_EQ(w.ws_y[7], -1);
  for (const uint8_t c : w.chosen) EXPECT_EQ(c, 0);
  // A label with an empty side adds nothing; part 1 starts afresh.
  w.Form({4, 3, 2, 1}, {5, 3, 9, 1}, {-1, -2, -3, -4}, {-1, -1, -1, -1}, 1);
  EXPECT_EQ(w.info->m, 0);
  EXPECT_EQ(w.info->gap, -HUGE_VAL);
}

// The device table picks the loop on the simulated device: `--device cuda` in a CPU-only test.
TEST(SvmDeviceLoopTest, CudaContextRunsTheLoopOnTheSimulatedDevice) {
  device::ScopedSimulatedDevice sim;
  Problem p = MakeProblem(RandomDataset(500, 25, 0.4, {1, -1}, 43));
  const kernels::SvmKernelParams kp{kernels::SvmKernelType::kRbf, 3, 0.05, 0};
  SolverOptions o;
  o.eps = 1e-6;
  BatchOptions b;
  b.working_set = 64;
  kernels::SvmKernelRows k(p.view, kp);
  const device::Counters before = device::ReadCounters();
  BatchStats stats;
  const SolverResult dev = SolveBinaryBatched(CudaContext(), {&k, p.rows, p.y, 1, 1}, o, b, &stats);
  const device::Counters used = device::ReadCounters() - before;
  const SolverResult host = SolveBinaryBatched({&k, p.rows, p.y, 1, 1}, o, b);
  for (size_t i = 0; i < host.alpha.size(); ++i) ASSERT_EQ(dev.alpha[i], host.alpha[i]) << "sample " << i;
  EXPECT_GT(used.allocations, 0);  // the solve's state, once
  EXPECT_LT(used.allocations, 60) << "allocations must not grow with rounds (" << stats.rounds << ")";
  EXPECT_GT(stats.rounds, 3);
  EXPECT_GT(dev.cache_hits, 0);
  EXPECT_THROW(SolveBinaryBatched(CudaContext(), {&k, p.rows, p.y, 1, 1}, o, BatchOptions{.working_set = 2048}), Error);
}

// A device too small for the solve's arrays: an error that names the options to lower, nothing left allocated; with
// a smaller working set and cache the same device suffices.
TEST(SvmDeviceLoopTest, TooLittleDeviceMemoryIsAClearErrorAndLeavesNothing) {
  device::ScopedSimulatedDevice sim(4 << 20);  // 4 MiB (the pool serves small arrays in 64 KiB blocks)
  Problem p = MakeProblem(RandomDataset(2000, 10, 0.5, {1, -1}, 46));
  kernels::SvmKernelRows k(p.view, {kernels::SvmKernelType::kRbf, 3, 0.1, 0});
  SolverOptions o;
  o.eps = 1e-3;
  BatchOptions b;
  b.working_set = 256;  // 256 rows of 2000 samples: 2 MB for the cache, 2 MB for the rows' scratch
  try {
    SolveBinaryBatched(CudaContext(), {&k, p.rows, p.y, 1, 1}, o, b);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("lower --working-set or --cache"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("out of memory"), std::string::npos) << e.what();
  }
  EXPECT_EQ(device::ReadCounters().in_use_bytes, 0);
  b.working_set = 16;
  o.cache_bytes = 1;  // the floor: q rows
  const SolverResult dev = SolveBinaryBatched(CudaContext(), {&k, p.rows, p.y, 1, 1}, o, b);
  const SolverResult host = SolveBinaryBatched({&k, p.rows, p.y, 1, 1}, o, b);
  EXPECT_EQ(dev.obj, host.obj);
  EXPECT_EQ(device::ReadCounters().in_use_bytes, 0);
}

TEST(SvmDeviceLoopTest, IterationLimitRestoresEverySampleAndStops) {
  device::ScopedSimulatedDevice sim;
  Problem p = MakeProblem(RandomDataset(300, 20, 0.5, {1, -1}, 44));
  const kernels::SvmKernelParams kp{kernels::SvmKernelType::kRbf, 3, 0.05, 0};
  SolverOptions o;
  o.eps = 1e-8;
  o.shrinking = ShrinkingPolicy::kEager;
  o.max_iterations = 50;
  BatchOptions b;
  b.working_set = 16;
  kernels::SvmKernelRows k(p.view, kp);
  const SolverResult host = SolveBinaryBatched({&k, p.rows, p.y, 1, 1}, o, b);
  devloop::LoopResult loop;
  const SolverResult dev = OnTwin(p, k, 1, 1, o, b, &loop);
  EXPECT_TRUE(dev.hit_iteration_limit);
  EXPECT_EQ(dev.iterations, host.iterations);
  for (size_t i = 0; i < host.alpha.size(); ++i) ASSERT_EQ(dev.alpha[i], host.alpha[i]) << "sample " << i;
  EXPECT_EQ(dev.rho, host.rho);
}

TEST(SvmDeviceLoopTest, TopKTwinKeepsTheBestCandidatesInOrder) {
  // Keys with ties; samples off the side are skipped; fewer candidates than k leave id -1 at the end.
  const std::vector<int32_t> act = {0, 1, 2, 3, 4, 5, 6, 7};
  const std::vector<int8_t> y = {1, -1, 1, 1, -1, 1, -1, 1};
  const std::vector<int8_t> st = {batch::kLower, batch::kLower, batch::kUpper, batch::kFree,
                                  batch::kUpper, batch::kLower, batch::kFree,  batch::kFree};
  const std::vector<double> g = {-1.0, 2.0, 0.5, -1.0, 3.0, -0.25, -4.0, 7.0};
  Problem p = MakeProblem(RandomDataset(8, 3, 0.5, {1, -1}, 45));
  kernels::SvmKernelRows k(p.view, {kernels::SvmKernelType::kLinear, 3, 0, 0});
  const std::unique_ptr<devloop::LoopDevice> dev = devloop::MakeTwinLoopDevice(k);
  std::vector<double> keys(8);
  std::vector<int32_t> ids(8);
  // I_up: y=+1 below C (0, 3, 5, 7) and y=-1 above 0 (4, 6); keys -y G.
  dev->TopK(0, 0, 8, act.data(), y.data(), st.data(), g.data(), 8, keys.data(), ids.data(), nullptr);
  EXPECT_EQ(ids, (std::vector<int32_t>{4, 0, 3, 5, 6, 7, -1, -1}));
  EXPECT_EQ(keys[0], 3.0);
  EXPECT_EQ(keys[1], 1.0);  // 0 and 3 tie at 1.0: the smaller id first
  EXPECT_EQ(keys[6], -HUGE_VAL);
  // I_low: y=+1 above 0 (2, 3, 7) and y=-1 below C (1, 6); keys y G; k = 2 keeps the two best.
  dev->TopK(1, 0, 8, act.data(), y.data(), st.data(), g.data(), 2, keys.data(), ids.data(), nullptr);
  EXPECT_EQ(ids[0], 7);
  EXPECT_EQ(ids[1], 6);
  EXPECT_EQ(keys[1], 4.0);
}

// The tournament (the CUDA kernels' stages, run serially by the twin) against a partial sort, on random candidates
// with many ties, for tile counts that are odd, even and one, and k below, at and above a power of two.
TEST(SvmDeviceLoopTest, TournamentTopKEqualsAPartialSort) {
  Problem p = MakeProblem(RandomDataset(8, 3, 0.5, {1, -1}, 47));
  kernels::SvmKernelRows k(p.view, {kernels::SvmKernelType::kLinear, 3, 0, 0});
  const std::unique_ptr<devloop::LoopDevice> dev = devloop::MakeTwinLoopDevice(k);
  Rng rng(StreamKey{48, 0, 0, 0, 1});
  for (const int64_t l : {int64_t{0}, int64_t{1}, int64_t{31}, int64_t{100}, int64_t{1000}, int64_t{7777}}) {
    std::vector<int32_t> act;
    std::vector<int8_t> y(static_cast<size_t>(l));
    std::vector<int8_t> st(static_cast<size_t>(l));
    std::vector<double> g(static_cast<size_t>(l));
    for (int64_t s = 0; s < l; ++s) {
      if (rng.Uniform() < 0.85) act.push_back(static_cast<int32_t>(s));
      y[static_cast<size_t>(s)] = rng.Uniform() < 0.5 ? 1 : -1;
      st[static_cast<size_t>(s)] = static_cast<int8_t>(rng.UniformInt(3));
      g[static_cast<size_t>(s)] = static_cast<double>(rng.UniformInt(40)) / 8 - 2;  // many ties
    }
    const auto n = static_cast<int64_t>(act.size());
    for (const int64_t kk : {int64_t{1}, int64_t{2}, int64_t{32}, int64_t{33}, int64_t{500}, int64_t{1024}}) {
      for (const int side : {0, 1}) {
        std::vector<std::pair<double, int32_t>> ref;
        for (const int32_t s : act) {
          double v = 0;
          if (devloop::CandidateKey(side, 0, y[static_cast<size_t>(s)], st[static_cast<size_t>(s)],
                                    g[static_cast<size_t>(s)], &v)) {
            ref.emplace_back(v, s);
          }
        }
        std::sort(ref.begin(), ref.end(),
                  [](const auto& a, const auto& b) { return devloop::Before(a.first, a.second, b.first, b.second); });
        std::vector<double> keys(static_cast<size_t>(kk));
        std::vector<int32_t> ids(static_cast<size_t>(kk));
        dev->TopK(side, 0, n, act.data(), y.data(), st.data(), g.data(), kk, keys.data(), ids.data(), nullptr);
        for (int64_t t = 0; t < kk; ++t) {
          const auto u = static_cast<size_t>(t);
          if (u < ref.size()) {
            ASSERT_EQ(ids[u], ref[u].second) << "l " << l << " k " << kk << " side " << side << " at " << t;
            ASSERT_EQ(keys[u], ref[u].first);
          } else {
            ASSERT_EQ(ids[u], -1) << "l " << l << " k " << kk << " side " << side << " at " << t;
          }
        }
      }
      // Both sides at once: the two calls' values, in half their launches (counted as the CUDA table launches).
      const std::unique_ptr<devloop::LoopDevice> counted = devloop::CountingLaunches(*dev);
      const device::Counters c0 = device::ReadCounters();
      std::vector<double> keys[2];
      std::vector<int32_t> ids[2];
      std::vector<double> both_keys[2];
      std::vector<int32_t> both_ids[2];
      for (int side = 0; side < 2; ++side) {
        keys[side].resize(static_cast<size_t>(kk));
        ids[side].resize(static_cast<size_t>(kk));
        both_keys[side].assign(static_cast<size_t>(kk), 7.0);
        both_ids[side].assign(static_cast<size_t>(kk), 7);
        counted->TopK(side, 0, n, act.data(), y.data(), st.data(), g.data(), kk, keys[side].data(), ids[side].data(),
                      nullptr);
      }
      const device::Counters c1 = device::ReadCounters();
      counted->TopKBoth(0, n, act.data(), y.data(), st.data(), g.data(), kk, both_keys[0].data(), both_ids[0].data(),
                        both_keys[1].data(), both_ids[1].data(), nullptr);
      EXPECT_EQ(2 * (device::ReadCounters().launches - c1.launches), c1.launches - c0.launches);
      for (int side = 0; side < 2; ++side) {
        ASSERT_EQ(both_ids[side], ids[side]) << "l " << l << " k " << kk << " side " << side;
        ASSERT_EQ(both_keys[side], keys[side]) << "l " << l << " k " << kk << " side " << side;
      }
    }
  }
}

TEST(SvmDeviceLoopTest, FormWorkingSetTakesHalfFromEachSideOnceEach) {
  // Up heads 5, 3, 9, 1; low heads 3, 7, 2 (3 is on both sides: taken once).
  WorkingSetArrays w(10, 6, [](int s) { return static_cast<int8_t>(s % 2 == 0 ? 1 : -1); });
  const std::vector<double> up_key = {4, 3, 2, 1};
  const std::vector<int32_t> up_id = {5, 3, 9, 1};
  const std::vector<double> low_key = {-1, -2, -3, -HUGE_VAL};
  w.Form(up_key, up_id, low_key, {3, 7, 2, -1}, 0);
  ASSERT_EQ(w.info->m, 6);
  EXPECT_EQ(std::vector<int32_t>(w.info->ws, w.info->ws + 6), (std::vector<int32_t>{5, 3, 9, 7, 2, 1}));
  EXPECT_EQ(w.info->gap, 4.0 + -1.0);
  EXPECT_EQ(w.ws_pos[3], 107);
  EXPECT_EQ(w.ws_rows[4], 202);
  EXPECT_EQ(w.ws_y[5], -1);
  for (const uint8_t c : w.chosen) EXPECT_EQ(c, 0);  // left clean for the next round
  // An empty side: no working set, gap -inf.
  w.Form(up_key, up_id, low_key, {-1, -1, -1, -1}, 0);
  EXPECT_EQ(w.info->m, 0);
  EXPECT_EQ(w.info->gap, -HUGE_VAL);
}

TEST(SvmDeviceLoopTest, RowCacheEvictsTheLeastRecentButNeverTheWorkingSet) {
  devloop::RowCache cache(10, 4);
  std::vector<int32_t> slot(4);
  std::vector<int32_t> missing;
  const std::vector<int32_t> a = {0, 1, 2};
  cache.Assign(a.data(), 3, slot.data(), &missing);
  EXPECT_EQ(missing, (std::vector<int32_t>{0, 1, 2}));
  EXPECT_EQ(cache.misses(), 3);
  const int32_t slot_of_1 = slot[1];
  const int32_t slot_of_2 = slot[2];
  // 1 and 2 hit; 3 takes the free slot, 4 evicts the least recent (sample 0's).
  const std::vector<int32_t> b = {1, 3, 4, 2};
  cache.Assign(b.data(), 4, slot.data(), &missing);
  EXPECT_EQ(missing, (std::vector<int32_t>{1, 2}));
  EXPECT_EQ(slot[0], slot_of_1);
  EXPECT_EQ(slot[3], slot_of_2);
  EXPECT_EQ(cache.hits(), 2);
  std::vector<int32_t> distinct(slot.begin(), slot.end());
  std::sort(distinct.begin(), distinct.end());
  EXPECT_EQ(std::unique(distinct.begin(), distinct.end()), distinct.end());
  // Sample 0 was evicted: it misses again and evicts sample 1, the least recent (3, 4 and 2 came after it).
  const std::vector<int32_t> c = {0};
  cache.Assign(c.data(), 1, slot.data(), &missing);
  EXPECT_EQ(missing.size(), 1U);
  EXPECT_EQ(slot[0], slot_of_1);
  EXPECT_EQ(cache.Used().size(), 4U);
  cache.Clear();
  EXPECT_TRUE(cache.Used().empty());
  const std::vector<int32_t> too_many = {0, 1, 2, 3, 4};
  EXPECT_THROW(cache.Assign(too_many.data(), 5, slot.data(), &missing), Error);
}

}  // namespace
}  // namespace tessel::svm
