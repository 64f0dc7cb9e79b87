// `tessel train svm`: C-SVC training on LIBSVM text data with svm-train's flag letters (-c -g -t -d -r -e -m -w
// -h), sample-elimination policies and threads; writes a LIBSVM model file (and its tessel sidecar).
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/context.h"
#include "core/error.h"
#include "core/log.h"
#include "core/parallel.h"
#include "datasets/readers.h"
#include "datasets/text_input.h"
#include "tools/cli_params.h"
#include "tools/commands.h"
#include "train/svm/batch_solver.h"
#include "train/svm/svm_ops.h"
#include "train/svm/svm_train.h"

namespace tessel::tools {
namespace {

struct TrainSvmArgs {
  std::string data;
  std::string model;
  bool force = false;                // replace an existing --model
  train::svm::SvmParams params;      // the training parameters (SvmParams::Params declares their options)
  std::vector<std::string> weights;  // LABEL WEIGHT pairs
  int threads = 0;
  std::string device = "cpu";
  int device_id = 0;
  std::string solver = "smo";
  int working_set = 0;  // 0: 256 on the CPU, 1024 on CUDA
  bool json = false;
};

std::vector<train::svm::ClassWeight> ParseWeights(const std::vector<std::string>& tokens) {
  TESSEL_CHECK(tokens.size() % 2 == 0, "-w needs a class label and a weight (e.g. -w1 2 or -w 1 2)");
  std::vector<train::svm::ClassWeight> out;
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

void RunTrainSvm(const TrainSvmArgs& a) {
  TESSEL_CHECK(a.threads >= 0, "--threads {} must be 0 (all cores) or positive", a.threads);
  // The output is checked before anything is read: an existing model (or the training data itself) is never
  // replaced by accident.
  CheckOutputFile(a.model, a.force, "--model", {a.data});
  train::svm::SvmParams p = a.params;
  p.weights = ParseWeights(a.weights);
  p.Validate();  // before reading a large file

  Context ctx;
  ctx.device = ParseDevice(a.device);
  ctx.device_id = a.device_id;
  train::svm::BatchOptions batch;
  batch.working_set = a.working_set > 0 ? a.working_set : (ctx.IsCuda() ? 1024 : 256);
  TESSEL_CHECK(a.working_set >= 0 && batch.working_set % 2 == 0 && batch.working_set >= 2,
               "--working-set {} must be an even number >= 2 (or 0 for the default)", a.working_set);
  TESSEL_CHECK(!ctx.IsCuda() || batch.working_set <= 1024,
               "--working-set {} exceeds 1024, the most one CUDA thread block solves", batch.working_set);
  // Checks the solver name and, with --device cuda, this build and machine, before reading a large file.
  const train::svm::BinarySolver solver = train::svm::MakeBinarySolver(ctx, a.solver, batch);
  if (ctx.IsCuda()) device::SetDevice(ctx.device_id);

  ThreadLimit limit(a.threads);
  log::Info("svm: reading {}", a.data);
  const datasets::SparseRowDataset data = datasets::ReadLibsvm(a.data);
  log::Info(
      "svm: {} rows, {} features, {} non-zeros; C = {}, kernel {}, eps {}, cache {} MB, shrinking {}, {} threads, "
      "solver {} on {}",
      data.num_rows, data.num_features, data.NonZeros(), p.C, kernels::SvmKernelName(p.kernel.type), p.eps, p.cache_mb,
      train::svm::ShrinkingName(p.shrinking), a.threads == 0 ? ThreadLimit::HardwareThreads() : a.threads,
      ctx.IsCuda() || a.solver == "batch" ? fmt::format("batch (q = {})", batch.working_set) : "smo",
      DeviceName(ctx.device));
  train::svm::TrainReport report;
  const train::svm::SvmModel model = train::svm::TrainSvm(data, p, &report, solver);
  train::svm::SaveSvmModel(model, a.model, report.ToJson());
  log::Info("svm: {} support vectors, {} iterations, {} kernel evaluations, {:.3f} s; model written to {}",
            model.total_sv(), report.iterations, report.kernel_evaluations, report.seconds, a.model);
  if (a.json) {
    std::fputs(report.ToJson().c_str(), stdout);
    std::fputc('\n', stdout);
  } else {
    for (const auto& pr : report.pairs)
      std::printf("obj = %f, rho = %f\nnSV = %d, nBSV = %d\n", pr.result.obj, pr.result.rho, pr.result.nr_sv,
                  pr.result.nr_bsv);
    std::printf("Total nSV = %lld\n", static_cast<long long>(model.total_sv()));
  }
}

}  // namespace

void RegisterTrainSvm(CLI::App& app) {
  CLI::App* group = GroupCommand(app, "train", "Train a model (gcn, svm)");
  auto args = std::make_shared<TrainSvmArgs>();
  CLI::App* sub = group->add_subcommand(
      "svm", "C-SVC (LIBSVM's dual, SMO with second-order working sets and sample elimination) on LIBSVM text data");
  sub->set_help_flag("--help", "Print this help message and exit");  // -h is svm-train's shrinking flag
  sub->add_option("--data", args->data, "Training data in LIBSVM format (plain, .gz or .bz2)")
      ->required()
      ->check(CLI::ExistingFile);
  sub->add_option("--model", args->model, "Output model file (LIBSVM text format; FILE.json gets the statistics)")
      ->required();
  sub->add_flag("--force", args->force, "Replace an existing --model file");
  AddParams(sub, &args->params);
  sub->add_option("-w,--weight", args->weights,
                  "Class weight: LABEL WEIGHT multiplies C for that class (svm-train style -w1 2 also works)")
      ->expected(0, 2)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->allow_extra_args(true);
  sub->add_option("--threads", args->threads, "Worker threads (0 = all cores)")->capture_default_str();
  sub->add_option("--device", args->device,
                  "cpu, or cuda (the batched solver on the GPU: kernel rows by cuSPARSE, subproblems in one block)")
      ->capture_default_str();
  sub->add_option("--device-id", args->device_id, "CUDA device ordinal with --device cuda")->capture_default_str();
  sub->add_option("--solver", args->solver,
                  "smo (LIBSVM's SMO, one pair per iteration) or batch (ThunderSVM's batched working sets) on the CPU; "
                  "--device cuda always runs batch")
      ->capture_default_str();
  sub->add_option("--working-set", args->working_set,
                  "Batch solver: samples per working set (even; 0 = 256 on the CPU, 1024 on CUDA, at most 1024 there)")
      ->capture_default_str();
  sub->add_flag("--json", args->json, "Print the training statistics as JSON on stdout");
  SetAction(sub, [args] { RunTrainSvm(*args); });
}

}  // namespace tessel::tools
