// The distributed SVM under real MPI (ctest label mpi, run by mpirun at 2 and 4 ranks): `check` trains
// heart_scale (RBF, linear, and without elimination; SMO, SMO rebalancing at every check point, and batched; nu-SVC,
// one-class, epsilon-SVR and nu-SVR on SMO and batched; -b 1 with its fits spread over the ranks) and letter_300 (26
// classes) over all ranks and compares every pair's objective with the one-process solver (within 1e-6 relative, each
// rank solving alone for the reference), the predictions with the one-process model's, and the models of all ranks with
// rank 0's (bit for bit); `fail` makes rank 1 throw while the others wait inside the solver, so the job must end with
// rank 1's message.
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "comm/mpi_comm.h"
#include "core/error.h"
#include "datasets/readers.h"
#include "svm/batch_solver.h"
#include "svm/dist_solver.h"
#include "svm/dist_train.h"
#include "svm/svm_train.h"
#include "tests/svm/svm_test_util.h"

namespace tessel::svm {
namespace {

int Check(comm::Communicator& c) {
  int failures = 0;
  struct Case {
    const char* file;
    const char* args;
    int batch = 0;  // > 0: the batched solvers with this working set
    double rebalance = 1.2;
  };
  for (const Case& cs :
       {Case{"heart_scale", "-c 4 -g 0.25"}, Case{"heart_scale", "-t 0 -c 0.5 -h 0"},
        Case{"heart_scale", "-c 2 -e 0.00001"}, Case{"letter_300", "-c 16 -g 4"},
        Case{"heart_scale", "-c 4 -g 0.25", 16}, Case{"heart_scale", "-c 2 -h 0", 32},
        Case{"heart_scale", "-c 8 -g 0.5 -e 0.00001", 0, 1.0001}, Case{"heart_scale", "-s 1 -e 0.00001"},
        Case{"heart_scale", "-s 2 -e 0.00001"}, Case{"heart_scale", "-s 3 -e 0.00001"},
        Case{"heart_scale", "-s 4 -h 0"}, Case{"heart_scale", "-b 1 -h 0"}, Case{"heart_scale", "-s 3 -b 1 -h 0"},
        Case{"heart_scale", "-s 1 -h 0", 16}, Case{"heart_scale", "-s 2 -h 0", 16},
        Case{"heart_scale", "-s 3 -h 0 -e 0.00001", 16}, Case{"heart_scale", "-s 4 -h 0", 16}}) {
    const auto data = datasets::ReadLibsvm(std::string(TESSEL_TEST_DATA) + "/svm/" + cs.file);
    const SvmParams p = testing::ParseLibsvmArgs(cs.args);
    DistTrainOptions how;
    how.rebalance = cs.rebalance;  // 1.0001: at every check point where the shares are not even
    BinarySolver one_process;      // empty: SolveBinary
    if (cs.batch > 0) {
      how.batched = true;
      how.batch.working_set = cs.batch;
      // C-SVC: the device loop's host reference; the other formulations: `--solver batch` on one process.
      one_process = [b = how.batch](const BinaryProblem& problem, const SolverOptions& o) {
        return problem.IsCsvc() ? SolveBinaryBatched(problem, o, b) : SolveBinaryBatchedCached(problem, o, b);
      };
    }
    TrainReport one;
    const SvmModel ref = TrainSvm(data, p, &one, one_process);
    TrainReport rep;
    DistTrainStats st;
    const SvmModel model = TrainSvmDistributed(c, data, p, &rep, &st, how);
    int64_t rebalances = 0;
    for (const DistStats& s : st.pairs) rebalances += s.rebalances;
    if (cs.rebalance < 1.1 && c.Size() > 1 && rebalances == 0) {
      std::fprintf(stderr, "rank %d: %s %s: no rebalancing at any check point\n", c.Rank(), cs.file, cs.args);
      ++failures;
    }
    for (size_t t = 0; t < one.pairs.size(); ++t) {
      const double a = one.pairs[t].result.obj;
      const double b = rep.pairs[t].result.obj;
      if (!(std::fabs(a - b) <= 1e-6 * std::fabs(a) + 1e-9)) {
        std::fprintf(stderr, "rank %d: %s %s pair %zu: objective %.12g, one process %.12g\n", c.Rank(), cs.file,
                     cs.args, t, b, a);
        ++failures;
      }
    }
    const auto pa = PredictSvm(ref, data);
    const auto pb = PredictSvm(model, data);
    for (size_t r = 0; r < pa.size(); ++r) {
      // Regression values agree to the rounding of the rank sums (and the stopping tolerance with elimination).
      if (IsRegression(p.type) ? std::fabs(pa[r] - pb[r]) > 1e-4 * (1 + std::fabs(pa[r])) : pa[r] != pb[r]) {
        std::fprintf(stderr, "rank %d: %s %s row %zu: predicted %g, one process %g\n", c.Rank(), cs.file, cs.args, r,
                     pb[r], pa[r]);
        ++failures;
      }
    }
    // -b 1: the fits spread over the ranks are the one-process fits, bit for bit.
    if (model.prob_a != ref.prob_a || model.prob_b != ref.prob_b) {
      std::fprintf(stderr, "rank %d: %s %s: probA/probB differ from the one-process fits\n", c.Rank(), cs.file,
                   cs.args);
      ++failures;
    }
    // Every rank holds the same model: compare the coefficients with rank 0's.
    std::vector<double> coef = model.sv_coef;
    coef.insert(coef.end(), model.rho.begin(), model.rho.end());
    std::vector<double> root = coef;
    c.Broadcast(std::span<double>(root), 0).ThrowIfError();
    if (root != coef) {
      std::fprintf(stderr, "rank %d: %s %s: the model differs from rank 0's\n", c.Rank(), cs.file, cs.args);
      ++failures;
    }
    if (c.Rank() == 0)
      std::printf("%s %s%s: %zu pairs, %lld iterations over %d ranks, %lld support vectors\n", cs.file, cs.args,
                  cs.batch > 0 ? " (batched)" : "", rep.pairs.size(), static_cast<long long>(rep.iterations), c.Size(),
                  static_cast<long long>(model.total_sv()));
  }
  int64_t total = failures;
  c.Allreduce(std::span<int64_t>(&total, 1)).ThrowIfError();
  if (c.Rank() == 0) std::printf("%s\n", total == 0 ? "all ranks agree with the one-process solver" : "FAILED");
  return total == 0 ? 0 : 1;
}

// Rank 1 throws in its first pair's setup while the others wait in the solver's first collective.
int Fail(comm::Communicator& c) {
  const auto data = datasets::ReadLibsvm(std::string(TESSEL_TEST_DATA) + "/svm/heart_scale");
  if (c.Rank() == 1) throw Error("injected failure on purpose");
  TrainSvmDistributed(c, data, SvmParams{});
  return 0;
}

}  // namespace
}  // namespace tessel::svm

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "check";
  if (mode != "check" && mode != "fail") {
    std::fprintf(stderr, "usage: %s check|fail\n", argv[0]);
    return 2;
  }
  return tessel::comm::RunMain([&](tessel::comm::Communicator& world) {
    return mode == "check" ? tessel::svm::Check(world) : tessel::svm::Fail(world);
  });
}
