// `tessel train svm`: LIBSVM's SVMs (C-SVC, nu-SVC, one-class, epsilon-SVR, nu-SVR) on LIBSVM text data with
// svm-train's flag letters, on one process or, under `mpirun -np K`, on the ranks together (svm/dist_train.h);
// writes a LIBSVM model file (and its tessel sidecar), or cross-validates with -v. Every option declared once here.
#pragma once

#include <string>
#include <vector>

#include "app/given.h"
#include "app/run_options.h"
#include "comm/net_model.h"
#include "datasets/dataset.h"
#include "svm/dist_train.h"
#include "svm/svm_params.h"
#include "svm/svm_train.h"

namespace tessel::app {

struct TrainSvmOptions {
  std::string data;
  std::vector<std::string> files;  // svm-train's positional form: TRAINING_FILE [MODEL_FILE]
  bool quiet = false;              // -q: warnings and errors only (svm-train -q)
  std::string model;
  bool force = false;
  svm::SvmParams params;             // the training parameters (SvmParams::Params declares their options)
  std::vector<std::string> weights;  // LABEL WEIGHT pairs
  ThreadOptions threads;
  DeviceOptions device;
  std::string solver = "smo";
  int working_set = 0;          // 0: 256 on the CPU, 1024 on CUDA
  comm::NetworkOption network;  // predict the multi-rank time on this network (none: no prediction)
  svm::PairSchedule pairs = svm::PairSchedule::kAuto;
  double rebalance = 1.2;
  TimeoutOption timeout;
  bool json = false;
  std::string checkpoint;  // the resumable state (svm/dist_checkpoint.h)
  bool resume = false;
  int cross_validation = 0;  // -v K: K-fold cross-validation instead of a model (0 = off)
  bool verbose = false;      // not an option: Python's estimators (scikit-learn's verbose) log the run at info level
  Given given;

  template <typename Self, typename V>
  static void Params(Self& c, V&& v) {
    v(ParamInfo{"data",
                "Training data: LIBSVM text (plain, .gz or .bz2) or a native rows folder (tessel convert); required "
                "unless given as svm-train's TRAINING_FILE"}
          .Cli(),
      c.data);
    LibsvmFormParams(v,
                     "svm-train's form: TRAINING_FILE [MODEL_FILE] instead of --data and --model (MODEL_FILE defaults "
                     "to TRAINING_FILE's name + .model in the working folder)",
                     2, "Quiet: warnings and errors only (svm-train -q)", c.files, c.quiet);
    v(ParamInfo{"model", "Output model file (LIBSVM text format; FILE.json gets the statistics); required unless -v"}
          .Cli(),
      c.model);
    v(ParamInfo{"force",
                "Replace an existing --model file and its sidecar MODEL.json (regular files only; never a folder, a "
                "device or the --data file), or start over from an SVM state in --checkpoint"}
          .Cli(),
      c.force);
    svm::SvmParams::Params(c.params, v);
    v(ParamInfo{"weight", "Class weight: LABEL WEIGHT multiplies C for that class (svm-train style -w1 2 also works)"}
          .Flags("-w,--weight")
          .Cli()
          .Values(2),
      c.weights);
    ThreadOptions::Params(c.threads, v);
    DeviceOptions::Params(c.device, v);
    v(
        ParamInfo{
            "solver",
            "smo (LIBSVM's SMO, one pair per iteration) or batch (ThunderSVM's batched working sets: under mpirun two "
            "collectives per round of up to 10 q steps instead of two per step); --device cuda always runs batch"},
        c.solver);
    v(ParamInfo{"working_set",
                "Batch solver: samples per working set (even; 0 = 256 on the CPU, 1024 on CUDA, at most 1024 there)"}
          .Range(0, 1 << 16),
      c.working_set);
    v(ParamInfo{"network",
                "Under mpirun: predict the training time on one machine per rank connected by this network, "
                "BANDWIDTH,LATENCY[,shared][,burst=SIZE] (e.g. 10Gbit,5us; docs/comm.md, time model), from the "
                "measured compute and the bytes and messages sent"}
          .Cli(),
      c.network);
    v(ParamInfo{"pairs",
                "Under mpirun, how one-vs-one pairs use the ranks: shared (every pair solved by all ranks over their "
                "row blocks), spread (each pair solved by one rank alone), or auto (spread when there are at least as "
                "many pairs as ranks)"}
          .Cli(),
      c.pairs);
    v(ParamInfo{"rebalance",
                "Under mpirun (SMO, pairs shared): move active samples between ranks at an elimination check point "
                "when one rank's share exceeds this times the mean (0 = never)"}
          .Cli()
          .Range(0, 1e9),
      c.rebalance);
    TimeoutOption::Params(c.timeout, v);
    v(ParamInfo{"checkpoint",
                "Folder for the resumable state: every problem's alpha, written as each problem is solved and, when a "
                "rank fails, by the survivors (the alpha of the last completed step, kept replicated on every rank); "
                "resumable on any number of ranks (tessel launch restarts on the survivors); pairs always shared"}
          .Cli(),
      c.checkpoint);
    v(ParamInfo{"resume", "Start every problem from its alpha in --checkpoint when there is one (gradients rebuilt)"}
          .Cli(),
      c.resume);
    v(ParamInfo{"json", "Print the training statistics as JSON on stdout"}.Cli(), c.json);
    v(ParamInfo{"cross_validation",
                "K-fold cross-validation as svm-train -v K (LIBSVM's folds; prints the accuracy, or the mean squared "
                "error and squared correlation; writes no model); 0 = off"}
          .Flags("-v,--cross-validation")
          .Cli()
          .Range(0, 1 << 30),
      c.cross_validation);
  }
};

// One process's training on rows in memory, set up and checked as `train svm` sets them up (parameters and class
// weights, the context, the solver): what the command runs on one process after reading --data, and what Python's
// estimators call. options.params.weights may hold class weights besides -w's (Python's class_weight); the paths,
// -v and the multi-rank options are not read.
svm::SvmModel TrainSvmRows(const TrainSvmOptions& options, const datasets::SparseRowDataset& data,
                           svm::TrainReport* report);

// Trains (or cross-validates) and writes the model; returns what svm-train prints on stdout (rank 0; empty on the
// other ranks): the pairs' obj/rho/nSV lines, -v's summary, or with --json the statistics.
std::string TrainSvm(const TrainSvmOptions& options);

}  // namespace tessel::app
