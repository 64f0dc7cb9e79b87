// SvmParams checks (LIBSVM's svm_check_parameter for C-SVC, with the flag to fix in every message) and the
// names of the sample-elimination policies.
#include <cmath>

#include "core/error.h"
#include "svm/svm_params.h"

namespace tessel::svm {

std::string_view ShrinkingName(ShrinkingPolicy policy) { return EnumName(policy); }

ShrinkingPolicy ParseShrinking(std::string_view name) {
  for (const auto& [policy, policy_name] : EnumNames<ShrinkingPolicy>::kNames) {
    if (name == policy_name) return policy;
  }
  if (name == "0") return ShrinkingPolicy::kOff;  // svm-train's -h 0 / -h 1
  if (name == "1") return ShrinkingPolicy::kPeriodic;
  throw Error(fmt::format("unknown shrinking policy '{}': use off, eager, periodic or lazy", name));
}

std::string_view SvmTypeName(SvmType type) { return EnumName(type); }

SvmType ParseSvmType(std::string_view name) {
  for (const auto& [type, type_name] : EnumNames<SvmType>::kNames) {
    if (name == type_name) return type;
  }
  if (name.size() == 1 && name[0] >= '0' && name[0] <= '4') return static_cast<SvmType>(name[0] - '0');
  throw Error(fmt::format(
      "unknown SVM type '{}': use c_svc (0), nu_svc (1), one_class (2), epsilon_svr (3) or nu_svr (4)", name));
}

// The largest -m: a kernel cache of 2^30 MB (1 PiB) is beyond any machine; larger values only overflow byte counts.
constexpr double kMaxCacheMb = 1073741824.0;

void SvmParams::Validate() const {
  // C only where the formulation has one (LIBSVM's svm_check_parameter: C-SVC, epsilon-SVR, nu-SVR).
  if (type == SvmType::kCSvc || type == SvmType::kEpsilonSvr || type == SvmType::kNuSvr)
    TESSEL_CHECK(C > 0 && std::isfinite(C), "C = {} must be positive (-c, e.g. -c 1)", C);
  if (type == SvmType::kNuSvc || type == SvmType::kOneClass || type == SvmType::kNuSvr)
    TESSEL_CHECK(nu > 0 && nu <= 1, "nu = {} must be in (0, 1] (-n, e.g. -n 0.5)", nu);
  TESSEL_CHECK(type != SvmType::kOneClass || nu < 1,
               "nu = 1 puts every sample of a one-class SVM at its bound, so rho is infinite and every point an "
               "outlier (svm-train writes 'rho inf'); use -n below 1, e.g. -n 0.5");
  TESSEL_CHECK(probability == 0 || probability == 1, "-b {}: probability estimates are 0 (off) or 1 (on)", probability);
  TESSEL_CHECK(probability == 0 || type != SvmType::kOneClass,
               "-b 1: a one-class SVM has no probability estimates (LIBSVM 3.24 has none either); drop -b");
  if (type == SvmType::kEpsilonSvr)
    TESSEL_CHECK(p >= 0 && std::isfinite(p), "epsilon = {} must not be negative (-p, e.g. -p 0.1)", p);
  TESSEL_CHECK(kernel.gamma >= 0 && std::isfinite(kernel.gamma),
               "gamma = {} must not be negative (-g; 0 means 1/num_features)", kernel.gamma);
  TESSEL_CHECK(eps > 0 && std::isfinite(eps), "eps = {} must be positive (-e, e.g. -e 0.001)", eps);
  TESSEL_CHECK(cache_mb > 0 && cache_mb <= kMaxCacheMb, "cache size {} MB must be in (0, {:g}] (-m, e.g. -m 100)",
               cache_mb, kMaxCacheMb);
  TESSEL_CHECK(max_iterations == -1 || max_iterations >= 1,
               "--max-iter {} must be -1 (LIBSVM's max(10^7, 100 l)) or a positive iteration limit", max_iterations);
  TESSEL_CHECK(kernel.type != kernels::SvmKernelType::kPolynomial || kernel.degree >= 0,
               "degree = {} of the polynomial kernel must not be negative (-d)", kernel.degree);
  TESSEL_CHECK(std::isfinite(kernel.coef0), "coef0 = {} must be finite (-r)", kernel.coef0);
  TESSEL_CHECK(random_seed >= -1 && random_seed < (int64_t{1} << 32),
               "random seed {} must be -1 (svm-train's rand()) or in [0, 2^32) (random_state's draw)", random_seed);
  for (const auto& w : weights)
    TESSEL_CHECK(w.weight > 0 && std::isfinite(w.weight),
                 "weight {} of class {} must be positive (-w{} WEIGHT): a weight of 0 gives the class C = 0, so none "
                 "of its samples can move and rho may be infinite; leave the class out of the data instead",
                 w.weight, w.label, w.label);
}

}  // namespace tessel::svm
