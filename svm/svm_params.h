// C-SVC training parameters with LIBSVM's meanings and defaults (svm-train flags in the comments), and the
// sample-elimination (shrinking) policies of Narasimhan, Vishnu, Holder, Hoisie (2014).
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "core/params.h"
#include "kernels/svm_kernel.h"
#include "svm/elimination.h"

namespace tessel::svm {

// ShrinkingPolicy and its schedule: svm/elimination.h.
std::string_view ShrinkingName(ShrinkingPolicy policy);
// "off" | "eager" | "periodic" | "lazy" (also LIBSVM's -h values "0" = off, "1" = periodic).
ShrinkingPolicy ParseShrinking(std::string_view name);

// LIBSVM's formulations (svm-train -s 0..4): C-SVC, nu-SVC, one-class SVM (distribution estimation), epsilon-SVR
// and nu-SVR. The names are svm-train's model-file names.
enum class SvmType { kCSvc, kNuSvc, kOneClass, kEpsilonSvr, kNuSvr };
std::string_view SvmTypeName(SvmType type);
// "c_svc" | "nu_svc" | "one_class" | "epsilon_svr" | "nu_svr", or svm-train's -s number "0" .. "4".
SvmType ParseSvmType(std::string_view name);
// Classification types (C-SVC, nu-SVC) have classes, labels and one-vs-one pairs; the others one problem.
inline bool IsClassification(SvmType type) { return type == SvmType::kCSvc || type == SvmType::kNuSvc; }
inline bool IsRegression(SvmType type) { return type == SvmType::kEpsilonSvr || type == SvmType::kNuSvr; }

// The order of the classes in a model (its labels, rho, sv_coef and SV groups): LIBSVM's first appearance in the
// training data (a -1/+1 pair puts +1 first), or ascending labels as scikit-learn's LIBSVM fork orders them (the
// Python binding's SVC, so that its dual_coef_, intercept_ and support_ equal sklearn.svm.SVC's).
enum class ClassOrder { kFirstAppearance, kSorted };

struct ClassWeight {
  int32_t label = 0;
  double weight = 1;  // multiplies C for this class (-wLABEL WEIGHT)
};

// The training parameters of `tessel train svm`, with svm-train's letters. Params declares the CLI options (flag,
// help, default) once; the class weights (-w LABEL WEIGHT, also svm-train's -w1 2) are parsed by the command.
struct SvmParams {
  SvmType type = SvmType::kCSvc;     // -s
  kernels::SvmKernelParams kernel;   // -t, -d, -g, -r; gamma 0 = 1 / num_features
  double C = 1;                      // -c (C-SVC, epsilon-SVR, nu-SVR)
  double nu = 0.5;                   // -n (nu-SVC, one-class, nu-SVR)
  double p = 0.1;                    // -p: the epsilon of epsilon-SVR's loss
  int probability = 0;               // -b 1: Platt's probabilities (classification), the Laplace scale (regression)
  double eps = 1e-3;                 // -e: stop when the maximal violation gap is below eps
  double cache_mb = 100;             // -m: kernel-row cache budget in MB (split between concurrent pairs)
  std::vector<ClassWeight> weights;  // -w
  ShrinkingPolicy shrinking = ShrinkingPolicy::kPeriodic;  // -h 1 = periodic
  int64_t max_iterations = -1;                             // -1: LIBSVM's max(10^7, 100 l)
  ClassOrder class_order = ClassOrder::kFirstAppearance;   // not an option of the CLI (svm-train's order)
  // The shuffles of -b 1's fits (and -v's folds): -1 = svm-train's unseeded rand(); 0 .. 2^32 - 1 = scikit-learn's
  // generator seeded with it (Python's random_state; glibc_rand.h ShuffleRand). Not an option of the CLI.
  int64_t random_seed = -1;

  // Throws tessel::Error naming the bad value and the fix (C <= 0, gamma < 0, eps <= 0, ...).
  void Validate() const;

  template <typename Self, typename V>
  static void Params(Self& c, V&& v) {
    v(ParamInfo{"svm_type",
                "Formulation: c_svc (0), nu_svc (1), one_class (2), epsilon_svr (3), nu_svr (4), as svm-train -s",
                "-s,--svm-type"},
      c.type);
    v(ParamInfo{"cost", "C, the penalty of the soft margin (> 0; c_svc, epsilon_svr, nu_svr)", "-c,--cost"}, c.C);
    v(ParamInfo{"nu", "nu of nu_svc, one_class and nu_svr, in (0, 1]", "-n,--nu"}, c.nu);
    v(ParamInfo{"epsilon", "epsilon of epsilon_svr's loss (>= 0)", "-p,--epsilon"}, c.p);
    v(ParamInfo{"gamma", "gamma of polynomial, RBF and sigmoid kernels; 0 = 1/num_features", "-g,--gamma"},
      c.kernel.gamma);
    v(ParamInfo{"kernel", "Kernel: linear (0), polynomial (1), rbf (2), sigmoid (3)", "-t,--kernel"}, c.kernel.type);
    v(ParamInfo{"degree", "Degree of the polynomial kernel", "-d,--degree"}, c.kernel.degree);
    v(ParamInfo{"coef0", "coef0 of polynomial and sigmoid kernels", "-r,--coef0"}, c.kernel.coef0);
    v(ParamInfo{"eps", "Stopping tolerance on the maximal violation gap (> 0)", "-e,--eps"}, c.eps);
    v(ParamInfo{"cache_mb",
                "Kernel cache budget in MB (> 0), shared by the binary problems solved at once; with --device cuda the "
                "device row cache of each problem (at least --working-set rows)",
                "-m,--cache"},
      c.cache_mb);
    v(ParamInfo{"shrinking",
                "Sample elimination: off, eager (every iteration), periodic (LIBSVM, every min(l,1000)), lazy "
                "(only near convergence); -h 0/1 as svm-train",
                "-h,--shrinking"},
      c.shrinking);
    v(ParamInfo{"max_iter", "Iteration limit per binary problem (-1 = max(10^7, 100 l))"}, c.max_iterations);
    v(ParamInfo{"probability",
                "1: also fit probability estimates as svm-train -b 1 (Platt's sigmoid per pair from an internal "
                "5-fold cross-validation; the Laplace scale of the residuals for regression); 0: none",
                "-b,--probability"},
      c.probability);
  }
};

}  // namespace tessel::svm

namespace tessel {
// The one list of SvmType's names (svm-train's model files); Parse also takes svm-train's -s 0 .. 4.
TESSEL_ENUM_NAMES_PARSED(svm::SvmType, svm::ParseSvmType, {svm::SvmType::kCSvc, "c_svc"},
                         {svm::SvmType::kNuSvc, "nu_svc"}, {svm::SvmType::kOneClass, "one_class"},
                         {svm::SvmType::kEpsilonSvr, "epsilon_svr"}, {svm::SvmType::kNuSvr, "nu_svr"});
// The one list of ShrinkingPolicy's names; Parse also takes svm-train's -h 0 and 1.
TESSEL_ENUM_NAMES_PARSED(svm::ShrinkingPolicy, svm::ParseShrinking, {svm::ShrinkingPolicy::kOff, "off"},
                         {svm::ShrinkingPolicy::kEager, "eager"}, {svm::ShrinkingPolicy::kPeriodic, "periodic"},
                         {svm::ShrinkingPolicy::kLazy, "lazy"});
}  // namespace tessel
