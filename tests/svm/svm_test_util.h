// Helpers for the SVM tests: random sparse datasets from seeded streams, a dense float64 kernel oracle, the
// C-SVC dual objective and KKT violation recomputed from scratch, and LIBSVM-style argument parsing.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/context.h"
#include "core/rng.h"
#include "datasets/dataset.h"
#include "kernels/svm_kernel.h"
#include "svm/svm_params.h"

namespace tessel::svm::testing {

// n rows over `dim` features, about `density` of them non-zero; labels from `classes` (cycled, then shuffled
// by the data), with a class-dependent shift so the problem is learnable but not separable.
inline datasets::SparseRowDataset RandomDataset(int64_t n, int64_t dim, double density, std::vector<int32_t> classes,
                                                uint64_t seed, bool binary_values = false) {
  Rng rng(StreamKey{seed, 0, 0, 0, 7});
  std::vector<int64_t> indptr{0};
  std::vector<int32_t> indices;
  std::vector<double> values;
  std::vector<double> labels;
  for (int64_t r = 0; r < n; ++r) {
    const auto c = static_cast<size_t>(rng.UniformInt(classes.size()));
    labels.push_back(classes[c]);
    for (int64_t f = 0; f < dim; ++f) {
      if (rng.Uniform() >= density) continue;
      indices.push_back(static_cast<int32_t>(f));
      values.push_back(
          binary_values
              ? 1.0
              : std::round((rng.Normal() + 0.7 * static_cast<double>(c) * (f % (c + 2) == 0 ? 1.0 : -0.3)) * 1e4) /
                    1e4);
    }
    indptr.push_back(static_cast<int64_t>(indices.size()));
  }
  datasets::SparseRowDataset ds;
  ds.name = "random";
  ds.num_rows = n;
  ds.num_features = dim;
  ds.indptr = Buffer<int64_t>(std::move(indptr));
  ds.indices = Buffer<int32_t>(std::move(indices));
  ds.values = Buffer<double>(std::move(values));
  ds.labels = Buffer<double>(std::move(labels));
  return ds;
}

// A binary problem over every row of a dataset (labels > 0 are +1), with the view the kernel reads; keep it
// in place while a kernel built on `view` is alive.
struct Problem {
  datasets::SparseRowDataset ds;
  kernels::SparseRowsView view;
  std::vector<int32_t> rows;
  std::vector<int8_t> y;
};

// One parameter set of each kernel type, for tests that run every kernel.
inline const std::vector<kernels::SvmKernelParams>& EveryKernel() {
  static const std::vector<kernels::SvmKernelParams> ks = {{kernels::SvmKernelType::kLinear, 3, 0, 0},
                                                           {kernels::SvmKernelType::kPolynomial, 2, 0.05, 1},
                                                           {kernels::SvmKernelType::kRbf, 3, 0.05, 0},
                                                           {kernels::SvmKernelType::kSigmoid, 3, 0.01, -0.5}};
  return ks;
}

// A context that asks for CUDA (the GPU, or the simulated device while one is installed).
inline Context CudaContext() {
  Context c;
  c.device = Device::kCuda;
  return c;
}

inline Problem MakeProblem(datasets::SparseRowDataset ds) {
  Problem p{std::move(ds), {}, {}, {}};
  p.view = p.ds.Rows();
  for (int64_t r = 0; r < p.ds.num_rows; ++r) {
    p.rows.push_back(static_cast<int32_t>(r));
    p.y.push_back(p.ds.labels.Host()[r] > 0 ? 1 : -1);
  }
  return p;
}

inline std::vector<double> DenseRow(const datasets::SparseRowDataset& ds, int64_t r) {
  std::vector<double> x(static_cast<size_t>(ds.num_features), 0.0);
  const auto ptr = ds.indptr.Host();
  for (int64_t e = ptr[r]; e < ptr[r + 1]; ++e) x[ds.indices.Host()[e]] = ds.values.Host()[e];
  return x;
}

// The kernel from its textbook definition on dense float64 vectors.
inline double DenseKernel(const kernels::SvmKernelParams& p, const std::vector<double>& a,
                          const std::vector<double>& b) {
  double dot = 0;
  double dist = 0;
  for (size_t f = 0; f < a.size(); ++f) {
    dot += a[f] * b[f];
    dist += (a[f] - b[f]) * (a[f] - b[f]);
  }
  switch (p.type) {
    case kernels::SvmKernelType::kLinear:
      return dot;
    case kernels::SvmKernelType::kPolynomial:
      return std::pow(p.gamma * dot + p.coef0, p.degree);
    case kernels::SvmKernelType::kRbf:
      return std::exp(-p.gamma * dist);
    case kernels::SvmKernelType::kSigmoid:
      return std::tanh(p.gamma * dot + p.coef0);
  }
  return 0;
}

// svm-train's flags (-s -c -n -p -b -g -t -d -r -e -m -h -wLABEL W) into SvmParams; throws on any other flag.
inline SvmParams ParseLibsvmArgs(const std::string& args) {
  SvmParams p;
  std::istringstream in(args);
  std::string flag;
  while (in >> flag) {
    std::string v;
    in >> v;
    if (flag == "-s")
      p.type = ParseSvmType(v);
    else if (flag == "-n")
      p.nu = std::stod(v);
    else if (flag == "-p")
      p.p = std::stod(v);
    else if (flag == "-b")
      p.probability = std::stoi(v);
    else if (flag == "-c")
      p.C = std::stod(v);
    else if (flag == "-g")
      p.kernel.gamma = std::stod(v);
    else if (flag == "-t")
      p.kernel.type = kernels::ParseSvmKernel(v);
    else if (flag == "-d")
      p.kernel.degree = std::stoi(v);
    else if (flag == "-r")
      p.kernel.coef0 = std::stod(v);
    else if (flag == "-e")
      p.eps = std::stod(v);
    else if (flag == "-m")
      p.cache_mb = std::stod(v);
    else if (flag == "-h")
      p.shrinking = v == "0" ? ShrinkingPolicy::kOff : ShrinkingPolicy::kPeriodic;
    else if (flag.rfind("-w", 0) == 0)
      p.weights.push_back({std::stoi(flag.substr(2)), std::stod(v)});
    else
      throw std::invalid_argument("ParseLibsvmArgs: unknown svm-train flag " + flag);
  }
  return p;
}

inline std::vector<double> SplitDoubles(const std::string& s) {
  std::vector<double> out;
  std::istringstream in(s);
  std::string tok;
  while (std::getline(in, tok, ',')) out.push_back(std::stod(tok));
  return out;
}

}  // namespace tessel::svm::testing
