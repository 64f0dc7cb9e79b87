#include "app/train_svm.h"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app/rank_settings.h"
#include "comm/agree.h"
#include "comm/communicator.h"
#include "comm/net_model.h"
#include "core/clock.h"
#include "core/error.h"
#include "core/log.h"
#include "core/output_guard.h"
#include "core/parallel.h"
#include "core/peer_failure.h"
#include "core/spin_team.h"
#include "datasets/native_format.h"
#include "datasets/readers.h"
#include "datasets/text_input.h"
#include "kernels/dense.h"
#include "svm/batch_solver.h"
#include "svm/cross_validation.h"
#include "svm/dist_checkpoint.h"
#include "svm/dist_train.h"
#include "svm/svm_ops.h"
#include "svm/svm_train.h"

namespace tessel::app {
namespace {

// printf's %f (svm-train's obj and rho lines): six decimals, as C writes them.
std::string CFixed(double x) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%f", x);
  return buf;
}

// svm-train's positional form (`train svm [options] TRAINING_FILE [MODEL_FILE]`) into --data and --model: the model
// defaults to the training file's name + ".model" in the working folder, as svm-train names it (none with -v).
TrainSvmOptions ResolveFiles(TrainSvmOptions a) {
  if (a.files.empty()) {
    CheckInput(a.data, "--data", InputKind::kFileOrDatasetFolder);
    TESSEL_CHECK(!a.data.empty(),
                 "--data is required: the training data (or svm-train's form: train svm [options] "
                 "TRAINING_FILE [MODEL_FILE])");
    return a;
  }
  TESSEL_CHECK(a.data.empty(), "the training data is given twice: --data {} and {}; give one", a.data, a.files[0]);
  TESSEL_CHECK(a.files.size() == 1 || a.model.empty(), "the model file is given twice: --model {} and {}; give one",
               a.model, a.files[1]);
  a.data = a.files[0];
  CheckInput(a.data, "TRAINING_FILE", InputKind::kFileOrDatasetFolder);
  if (a.files.size() > 1) {
    a.model = a.files[1];
  } else if (a.model.empty() && a.cross_validation == 0) {
    a.model = std::filesystem::path(a.data).filename().string() + ".model";
  }
  return a;
}

// The distributed run's costs for the report: per-rank extremes over the pairs, bytes per iteration, CPU seconds
// per rank, and with --network the time predicted on K machines (each rank's time outside communicator calls plus
// the alpha-beta time of its calls, docs/comm.md "Time model").
nlohmann::json DistributedJson(comm::Communicator& comm, const svm::TrainReport& report, const svm::DistTrainStats& st,
                               const std::optional<comm::NetworkModel>& network, double cpu_seconds) {
  double cpu[2] = {cpu_seconds, -cpu_seconds};
  comm.Allreduce(std::span<double>(cpu, 2), comm::ReduceOp::kMax, "svm-result").ThrowIfError();
  const double iters = static_cast<double>(std::max<int64_t>(report.iterations, 1));
  nlohmann::json j{
      {"ranks", comm.Size()},
      {"pairs", st.schedule == svm::PairSchedule::kSpread ? "spread" : "shared"},
      {"kernel_evaluations_per_rank", {{"min", st.min_kernel_evaluations}, {"max", st.max_kernel_evaluations}}},
      {"bytes_per_rank", st.max_bytes},
      {"bytes_per_iteration", static_cast<double>(st.max_bytes) / iters},
      {"collectives_per_rank", st.collectives},
      {"comm_seconds", st.max_comm_seconds},
      {"cpu_seconds_per_rank", {{"min", -cpu[1]}, {"max", cpu[0]}}}};
  int64_t rounds = 0;
  int64_t rebalances = 0;
  int64_t moved = 0;
  for (const auto& p : st.pairs) {
    rounds += p.rounds;
    rebalances += p.rebalances;
    moved += p.moved_samples;
  }
  j["rebalances"] = rebalances;
  j["rebalanced_samples"] = moved;
  if (rounds > 0) {
    j["rounds"] = rounds;
    j["bytes_per_round"] = static_cast<double>(st.max_bytes) / static_cast<double>(rounds);
  }
  int64_t min_active = -1;
  for (const auto& p : st.pairs)
    min_active = min_active < 0 ? p.min_local_active : std::min(min_active, p.min_local_active);
  if (min_active >= 0) j["min_local_active"] = min_active;
  if (network) {
    j["network"] = network->ToString();
    // SMO with shared pairs predicts each solve iteration by iteration (DistStats::predicted_seconds: every
    // iteration waits for the slowest rank); the rest of the run, and the other solvers, by the run's calls.
    bool per_iteration = !st.pairs.empty();
    double solves = 0, predicted_solves = 0;
    for (const auto& p : st.pairs) {
      per_iteration = per_iteration && p.predicted_seconds > 0;
      solves += p.solve_seconds;
      predicted_solves += p.predicted_seconds;
    }
    j["predicted_seconds"] = per_iteration ? report.seconds - solves + predicted_solves
                                           : report.seconds - st.max_comm_seconds + st.max_cost.modeled;
  }
  return j;
}

std::vector<svm::ClassWeight> ParseWeights(const std::vector<std::string>& tokens) {
  TESSEL_CHECK(tokens.size() % 2 == 0, "-w needs a class label and a weight (e.g. -w1 2 or -w 1 2)");
  std::vector<svm::ClassWeight> out;
  for (size_t k = 0; k < tokens.size(); k += 2) {
    int64_t label = 0;
    double weight = 0;
    TESSEL_CHECK(datasets::ParseInt64(tokens[k], &label) && label >= INT32_MIN && label <= INT32_MAX,
                 "-w: class label '{}' is not an integer (e.g. -w1 2 weights class 1 by 2)", tokens[k]);
    TESSEL_CHECK(datasets::ParseDouble(tokens[k + 1], &weight),
                 "-w: weight '{}' of class {} is not a number (e.g. -w1 2)", tokens[k + 1], label);
    out.push_back({static_cast<int32_t>(label), weight});
  }
  return out;
}

// What every rank of a distributed run must share (comm/agree.h): the training parameters and class weights, the
// device kind, solver, working set, pair schedule and rebalancing, and the content of --data. Per-rank settings
// (--threads, --device-id, --timeout, the cache budget -m) and what rank 0 alone writes or prints (--model, --json,
// --network's prediction) may differ.
comm::Settings RankSettings(const TrainSvmOptions& a) {
  comm::Settings s;
  AddParamSettings(a.params, &s);
  std::erase_if(s, [](const comm::Setting& x) { return x.first == "-m/--cache"; });  // a rank's memory, not maths
  std::string weights;
  try {
    for (const auto& w : ParseWeights(a.weights))
      weights += fmt::format("{}{}:{}", weights.empty() ? "" : ",", w.label, nlohmann::json(w.weight).dump());
  } catch (const Error&) {
    weights = fmt::format("{}", fmt::join(a.weights, " "));  // refused on every rank after the agreement
  }
  s.emplace_back("-w/--weight", weights);
  s.emplace_back("--device", std::string(DeviceName(a.device.device)));
  s.emplace_back("--solver", a.solver);
  s.emplace_back("--working-set", std::to_string(a.working_set));
  s.emplace_back("--pairs", std::string(EnumName(a.pairs)));
  s.emplace_back("--rebalance", nlohmann::json(a.rebalance).dump());
  s.emplace_back("--data", ContentFingerprint(a.data));
  return s;
}

// What a saved alpha depends on (svm/dist_checkpoint.h): the problem's parameters, class weights and data, as a JSON
// object of the ranks' settings; not the solver, the tolerance, elimination or the ranks, which only change the path
// to the same optimum.
std::string CheckpointSettings(const TrainSvmOptions& a) {
  static const std::set<std::string, std::less<>> kPath = {"-m/--cache",    "-e/--eps", "-h/--shrinking",
                                                           "--max-iter",    "--device", "--solver",
                                                           "--working-set", "--pairs",  "--rebalance"};
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [label, value] : RankSettings(a))
    if (!kPath.contains(label)) j[label] = value;
  return j.dump();
}

// The state a run starts from: --checkpoint's when --resume finds one there (its settings compared with this run's,
// a difference named), else none. Refuses an existing state without --resume or --force.
std::unique_ptr<svm::SvmElasticState> MakeElasticState(comm::Communicator& comm, const TrainSvmOptions& a) {
  std::unique_ptr<svm::SvmElasticState> out;
  comm::OnEveryRankOrFail(comm, [&] {
    CheckOutputNotInput(a.checkpoint, "--checkpoint", PathList({a.data, a.model}));
    TESSEL_CHECK(!std::filesystem::exists(a.checkpoint) || std::filesystem::is_directory(a.checkpoint),
                 "--checkpoint {}: {}; give a folder (created when missing)", a.checkpoint, DescribePath(a.checkpoint));
    TESSEL_CHECK(a.cross_validation == 0 && a.params.probability == 0 && a.device.device == Device::kCpu,
                 "--checkpoint {}: the resumable state covers the model's problems on the CPU solvers; drop -v, -b 1 "
                 "and --device cuda, or --checkpoint",
                 a.checkpoint);
    const std::string settings = CheckpointSettings(a);
    svm::SvmCheckpoint saved;
    if (svm::HasSvmCheckpoint(a.checkpoint)) {
      TESSEL_CHECK(a.resume || a.force,
                   "--checkpoint {} holds an SVM state: give --resume to continue from it, or --force to start over "
                   "(it is replaced as the run goes)",
                   a.checkpoint);
      if (a.resume) saved = svm::LoadSvmCheckpoint(a.checkpoint);
    }
    if (!saved.problems.empty() && saved.settings != settings) {
      const auto was = nlohmann::json::parse(saved.settings, nullptr, false);
      const auto now = nlohmann::json::parse(settings);
      std::string diff;
      for (const auto& [label, value] : now.items())
        if (!was.is_object() || !was.contains(label) || was[label] != value)
          diff += fmt::format("{}{} {} (the state's: {})", diff.empty() ? "" : "; ", label, value.dump(),
                              was.is_object() && was.contains(label) ? was[label].dump() : "none");
      throw Error(
          fmt::format("--checkpoint {}: its alpha is for another problem: {}; give the same parameters and "
                      "data, or delete it to start over",
                      a.checkpoint, diff.empty() ? "its settings differ" : diff));
    }
    if (!saved.problems.empty() && comm.Rank() == 0) {
      const auto [done, steps] = saved.Progress();
      log::Info(
          "resuming from {}: {} problem(s) saved, {} solved, {} steps into the next; {} state of {} rank(s), "
          "now on {}",
          a.checkpoint, saved.problems.size(), done, steps, saved.just_in_time ? "just-in-time" : "scheduled",
          saved.ranks, comm.Size());
    }
    out = std::make_unique<svm::SvmElasticState>(a.checkpoint, settings, comm.Size(), comm.Rank(), std::move(saved));
  });
  return out;
}

// While alive, a rank failure makes this rank write the run's state first (core/peer_failure.h).
class JustInTimeHook {
 public:
  explicit JustInTimeHook(svm::SvmElasticState* state) : on_(state != nullptr) {
    if (on_) peer_failure::SetHook([state] { state->SaveJustInTime(); });
  }
  ~JustInTimeHook() {
    if (on_) peer_failure::SetHook({});
  }
  JustInTimeHook(const JustInTimeHook&) = delete;
  JustInTimeHook& operator=(const JustInTimeHook&) = delete;

 private:
  bool on_;
};

// What a run is set up with, checked before any data is read: the parameters with the class weights (-w's after
// those already in options.params.weights), the context, the batched solvers' options and the binary solver.
struct SvmSetup {
  svm::SvmParams params;
  Context ctx;
  svm::BatchOptions batch;
  svm::BinarySolver solver;
};

SvmSetup SetUpSvm(const TrainSvmOptions& a) {
  SvmSetup s;
  s.params = a.params;
  for (const svm::ClassWeight& w : ParseWeights(a.weights)) s.params.weights.push_back(w);
  s.params.Validate();
  s.ctx = MakeContext(a.device, 0, a.threads.threads);
  s.batch = svm::BatchOptions::ForWorkingSet(a.working_set, s.ctx.IsCuda());
  // Checks the solver name and, with --device cuda, this build and machine.
  s.solver = svm::MakeBinarySolver(s.ctx, a.solver, s.batch);
  svm::CheckSolverTakes(svm::BinarySolverTakes(s.ctx, a.solver), s.params.type != svm::SvmType::kCSvc);
  return s;
}

// The log level for one run: -q's warnings only, or Python's verbose=True info lines; restored at the end.
class RunLogLevel {
 public:
  explicit RunLogLevel(const TrainSvmOptions& a) : saved_(log::GetLevel()) {
    if (a.quiet) log::SetLevel(log::Level::kWarn);
    if (a.verbose) log::SetLevel(std::min(saved_, log::Level::kInfo));
  }
  ~RunLogLevel() { log::SetLevel(saved_); }
  RunLogLevel(const RunLogLevel&) = delete;
  RunLogLevel& operator=(const RunLogLevel&) = delete;

 private:
  log::Level saved_;
};

svm::SvmModel TrainRows(const SvmSetup& s, int threads, const datasets::SparseRowDataset& data,
                        svm::TrainReport* report) {
  ThreadLimit limit(threads);
  return svm::TrainSvm(data, s.params, report, s.solver);
}

}  // namespace

svm::SvmModel TrainSvmRows(const TrainSvmOptions& options, const datasets::SparseRowDataset& data,
                           svm::TrainReport* report) {
  const RunLogLevel level(options);
  const SvmSetup s = SetUpSvm(options);
  return TrainRows(s, options.threads.threads, data, report);
}

std::string TrainSvm(const TrainSvmOptions& given) {
  kernels::ReleaseBlasThreads();  // SVM training makes no BLAS call: OpenBLAS's spinning pool would take a core
  const TrainSvmOptions a = ResolveFiles(given);
  const RunLogLevel level(a);
  // MPI starts here when launched by mpirun with several ranks; from now on an exception on any rank ends the job
  // (main.cc). Checks that every rank makes alike throw on every rank; the rest go through OnEveryRankOrFail.
  const std::unique_ptr<comm::Communicator> comm = comm::MakeWorldCommunicator(a.timeout.timeout);
  // One process owns the machine's cores: the SMO solve keeps its threads spinning between its short regions
  // (core/spin_team.h). Ranks may share cores, so they keep oneTBB's sleeping workers.
  SpinTeam::Enable(comm->Size() == 1);
  if (comm->Size() > 1) comm::AgreeOrFail(*comm, RankSettings(a));  // the first collective: options and data agree
  // With --checkpoint also on one rank: the distributed solvers start from a saved alpha and keep it replicated.
  const bool distributed = comm->Size() > 1 || !a.checkpoint.empty();
  const bool lead = comm->Rank() == 0;
  // The output is checked before anything is read: an existing model (or the training data itself) is never
  // replaced by accident.
  TESSEL_CHECK(!a.resume || !a.checkpoint.empty(),
               "--resume needs --checkpoint DIR: the folder of the SVM state to start from");
  TESSEL_CHECK(a.cross_validation == 0 || a.cross_validation >= 2,
               "-v {}: cross-validation needs at least 2 folds (e.g. -v 5)", a.cross_validation);
  TESSEL_CHECK(!a.model.empty() || a.cross_validation > 0,
               "--model is required: the output model file (or -v K for K-fold cross-validation, which writes none)");
  TESSEL_CHECK(a.model.empty() || a.cross_validation == 0,
               "-v {} cross-validates and writes no model (as svm-train -v): drop --model {}", a.cross_validation,
               a.model);
  comm::OnEveryRankOrFail(*comm, [&] {
    if (lead && a.cross_validation == 0) svm::CheckSvmModelOutput(a.model, a.force, "--model", PathList({a.data}));
  });
  const SvmSetup setup = SetUpSvm(a);  // before reading a large file
  const svm::SvmParams& p = setup.params;
  const Context& ctx = setup.ctx;
  const svm::BatchOptions& batch = setup.batch;
  const svm::BinarySolver& solver = setup.solver;
  const std::optional<comm::NetworkModel>& network = a.network.model;  // parsed where the option was read

  // The resumable state: checked (and a saved one read) before the data.
  std::unique_ptr<svm::SvmElasticState> elastic;
  if (!a.checkpoint.empty()) elastic = MakeElasticState(*comm, a);
  ThreadLimit limit(a.threads.threads);
  log::Info("svm: reading {}", a.data);
  datasets::SparseRowDataset data;
  comm::OnEveryRankOrFail(*comm, [&] { data = datasets::ReadSparseRows(a.data); });
  log::Info(
      "svm: {} rows, {} features, {} non-zeros; {}, C = {}, kernel {}, eps {}, cache {} MB, shrinking {}, {} "
      "threads, solver {} on {}",
      data.num_rows, data.num_features, data.NonZeros(), svm::SvmTypeName(p.type), p.C,
      kernels::SvmKernelName(p.kernel.type), p.eps, p.cache_mb, svm::ShrinkingName(p.shrinking),
      a.threads.threads == 0 ? ThreadLimit::HardwareThreads() : a.threads.threads,
      ctx.IsCuda() || a.solver == "batch" ? fmt::format("batch (q = {})", batch.working_set) : "smo",
      DeviceName(ctx.device));
  if (a.cross_validation > 0) {
    // Under mpirun the folds (or, with -b 1, each fold's probability fits) are spread over the ranks.
    svm::FitRunner fits = svm::RankFitRunner(*comm);
    fits.solver = solver;
    const svm::CrossValidationResult cv =
        svm::CrossValidate(data, p, a.cross_validation, solver, nullptr, distributed ? &fits : nullptr);
    if (!lead) return {};
    if (a.json) {
      nlohmann::json j{{"folds", cv.folds}, {"svm_type", svm::SvmTypeName(p.type)}};
      if (svm::IsRegression(p.type)) {
        j["mean_squared_error"] = cv.mean_squared_error;
        j["squared_correlation"] = cv.squared_correlation;
      } else {
        j["accuracy"] = cv.accuracy;
      }
      return j.dump() + "\n";
    }
    return cv.Summary(p.type);
  }
  svm::TrainReport report;
  svm::SvmModel model;
  nlohmann::json stats;
  if (distributed) {
    svm::DistTrainStats dist;
    svm::DistTrainOptions how;
    how.schedule = a.pairs;
    how.batched = a.solver == "batch";
    how.batch = batch;
    how.rebalance = a.rebalance;
    how.network = network;
    how.spread_solver = solver;
    how.elastic = elastic.get();
    const JustInTimeHook hook(comm->Size() > 1 ? elastic.get() : nullptr);
    if (ctx.IsCuda())
      how.shared_refusal = fmt::format(
          "--device cuda: a binary problem shared by {} ranks runs on CPUs (the distributed solvers); with CUDA, run "
          "one process, or, with several classes, --pairs spread (each rank solves whole pairs on its own GPU)",
          comm->Size());
    model = svm::TrainSvmDistributed(*comm, data, p, &report, &dist, how);
    stats = report.ToJson(svm::kReportedPairs);
    stats["distributed"] = DistributedJson(*comm, report, dist, network, ProcessCpuSeconds());
  } else {
    model = TrainRows(setup, a.threads.threads, data, &report);
    stats = report.ToJson(svm::kReportedPairs);
  }
  // Rank 0 writes the model (a temporary file renamed into place); every rank learns whether that worked.
  comm::OnEveryRankOrFail(*comm, [&] {
    if (lead) svm::SaveSvmModel(model, a.model, stats.dump());
  });
  log::Info("svm: {} support vectors, {} iterations, {} kernel evaluations, {:.3f} s; model written to {}",
            model.total_sv(), report.iterations, report.kernel_evaluations, report.seconds, a.model);
  if (distributed) {
    const auto& d = stats["distributed"];
    log::Info("svm: {} ranks, pairs {}, {:.0f} bytes per iteration per rank, {:.3f} s in communication{}", comm->Size(),
              d["pairs"].get<std::string>(), d["bytes_per_iteration"].get<double>(), d["comm_seconds"].get<double>(),
              d.contains("predicted_seconds")
                  ? fmt::format(", {:.3f} s predicted on {} machines ({})", d["predicted_seconds"].get<double>(),
                                comm->Size(), d["network"].get<std::string>())
                  : std::string());
  }
  if (!lead) return {};
  if (a.json) return stats.dump() + "\n";
  std::string out;
  if (!a.quiet) {  // svm-train -q prints none of these
    for (const auto& pr : report.pairs)
      out += fmt::format("obj = {}, rho = {}\nnSV = {}, nBSV = {}\n", CFixed(pr.result.obj), CFixed(pr.result.rho),
                         pr.result.nr_sv, pr.result.nr_bsv);
    out += fmt::format("Total nSV = {}\n", model.total_sv());
  }
  return out;
}

}  // namespace tessel::app
