// Pieces shared by the distributed solvers (dist_solver.cc: one pair per iteration; dist_batch_solver.cc:
// batched working sets): the record in which a sample travels between ranks (its solver state and its row), and
// the end of a solve (rho, objective, every alpha on every rank, and the run's costs over the ranks).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "comm/communicator.h"
#include "kernels/svm_kernel.h"
#include "svm/dist_solver.h"
#include "svm/elimination.h"
#include "svm/kernel_cache.h"
#include "svm/smo_solver.h"
#include "svm/solver_common.h"

namespace tessel::svm::dist {

inline void Check(const comm::Status& s) { s.ThrowIfError(); }

// What travels with a sample's row.
struct SampleHeader {
  double qd = 0;     // Q_ii
  double g = 0;      // gradient
  double alpha = 0;  // a (not y a)
  double q_ij = 0;   // the SMO solver's j broadcast: the float Q_ij from the owner's cached row of i
  double p = -1;     // the linear term (rebalancing moves it with the sample)
  int64_t gid = -1;
  int32_t nnz = 0;
  int8_t y = 0;
  int8_t pad[3] = {0, 0, 0};
};

// A received sample: its header and its record (header, indices, padding, values) whose row Row() views.
struct Sample {
  SampleHeader h;
  std::vector<std::byte> buffer;
  kernels::SvmKernelRows::ExternalRow Row() const {
    const auto n = static_cast<size_t>(h.nnz);
    const auto* idx = reinterpret_cast<const int32_t*>(buffer.data() + sizeof(SampleHeader));
    const auto* val = reinterpret_cast<const double*>(buffer.data() + sizeof(SampleHeader) + 4 * n + Pad(n));
    return {{idx, n}, {val, n}};
  }
  // Bytes between the indices and the 8-byte aligned values.
  static size_t Pad(size_t n) { return (8 - (4 * n) % 8) % 8; }
  static size_t Bytes(size_t n) { return sizeof(SampleHeader) + 4 * n + Pad(n) + 8 * n; }
};

// Writes the record of a sample with header h (h.nnz is set from the row) and row `row` of `rows` at dst, which
// must hold Sample::Bytes(row's non-zeros) bytes.
inline void PackSample(const kernels::SparseRowsView& rows, int64_t row, SampleHeader h, std::byte* dst) {
  const auto idx = rows.RowIndices(row);
  const auto val = rows.RowValues(row);
  const size_t n = idx.size();
  h.nnz = static_cast<int32_t>(n);
  std::memcpy(dst, &h, sizeof h);
  std::memcpy(dst + sizeof h, idx.data(), 4 * n);
  std::memcpy(dst + sizeof h + 4 * n + Sample::Pad(n), val.data(), 8 * n);
}

// Appends the record (as PackSample) to out.
inline void AppendSample(const kernels::SparseRowsView& rows, int64_t row, const SampleHeader& h,
                         std::vector<std::byte>* out) {
  const size_t at = out->size();
  out->resize(at + Sample::Bytes(rows.RowIndices(row).size()), std::byte{0});
  PackSample(rows, row, h, out->data() + at);
}

// Splits a buffer of concatenated records (an allgatherv of AppendSample's) into samples; throws on a malformed one.
std::vector<Sample> UnpackSamples(std::span<const std::byte> all);

// Rows copied into one CSR block, for a kernel over them with the rank's kernel's parameters and bit-row choice (the
// same arithmetic: QRowOf's contract): a batched round's working set, a rank's rows after rebalancing.
struct RowBlock {
  std::vector<int64_t> indptr{0};
  std::vector<int32_t> indices;
  std::vector<double> values;

  void Clear() {
    indptr.assign(1, 0);
    indices.clear();
    values.clear();
  }
  void Append(std::span<const int32_t> idx, std::span<const double> val) {
    indices.insert(indices.end(), idx.begin(), idx.end());
    values.insert(values.end(), val.begin(), val.end());
    indptr.push_back(static_cast<int64_t>(indices.size()));
  }
  kernels::SparseRowsView View(int64_t num_cols) const { return {indptr, indices, values, num_cols}; }
};

// Collective: throws on every rank unless the problem is consistent (ids ascending and owned by this rank, labels
// +1/-1, and every sample held by exactly one rank).
void ValidateDistProblem(comm::Communicator& comm, const DistBinaryProblem& problem);

// One rank's share of a distributed binary problem, the state both distributed solvers keep: per local position the
// sample's row, global id, label, Q_ii, alpha, status, G and G_bar, with the active samples as the prefix
// [0, active_) (LIBSVM's order by swaps), and a kernel-row cache keyed by global id over the local positions.
class RankSamples : public SolverCore {
 protected:
  RankSamples(comm::Communicator& comm, const DistBinaryProblem& p, const SolverOptions& options);

  // The Q row of a received sample over this rank's first `len` positions (nullptr when len is 0).
  const float* GetQ(const Sample& s, int64_t len);
  // G_bar += c Q_s over all local positions: the cached prefix as it is, the rest computed into scratch.
  void UpdateGBar(const Sample& s, double c);
  // The record header of local position k: its Q_ii, G, alpha, p, global id and label (q_ij 0).
  SampleHeader HeaderOf(int64_t k) const {
    SampleHeader h;
    h.qd = s_.qd[k];
    h.g = s_.g[k];
    h.alpha = s_.alpha[k];
    h.p = s_.p[k];
    h.gid = gid_[k];
    h.y = s_.y[k];
    return h;
  }
  // Exchanges two local positions (the cache follows at the next ApplySwaps).
  void Swap(int64_t a, int64_t b);
  void SetAllActive() {
    active_ = n_;
    global_active_ = big_l_;
  }
  // Collective: G of the eliminated samples from G_bar and the free vectors of every rank, added in global-id order.
  void ReconstructGradient();
  // Collective: every rank's positions k < end with keep(k) (alpha, label and row), in global-id order.
  template <class Keep>
  std::vector<Sample> GatherSamples(int64_t end, Keep keep, std::string_view purpose);
  // Collective, at a check point: LIBSVM's elimination with the ranks' extremes (restoring every sample first the
  // first time the gap reaches 10 eps; Solver_NU's four extremes when nu_); returns every rank's active count.
  std::vector<int64_t> ShrinkRanks();
  // Collective, at the start with a starting alpha: G = p + Q a and G_bar = sum of C Q_j over the samples at C, from
  // the rows of every rank's samples above 0, added in global-id order (the one-process solver's InitialGradient).
  void InitialGradient();
  // Kernel values this rank computed since the solve began (over every kernel it used).
  int64_t LocalEvaluations() const { return retired_evaluations_ + kernel_->evaluations() - evaluations_base_; }
  // Collective: the solution (dist::Finish) with this rank's counters.
  SolverResult FinishSolve(int64_t iterations, bool hit_limit, int64_t extra_evaluations,
                           const comm::ByteCounter& bytes_before, DistStats* stats);

  comm::Communicator& comm_;
  kernels::SvmKernelRows* kernel_;
  int64_t big_l_;
  int64_t n_;
  KernelCache cache_;
  int64_t cache_bytes_;

  std::vector<int32_t> row_;
  std::vector<int64_t> gid_;
  std::vector<int32_t> pos_of_;    // global id -> local position, -1 when another rank holds it
  bool nu_ = false;                // Solver_NU's selection, elimination and rho (DistBinaryProblem::nu)
  AlphaMirror* mirror_ = nullptr;  // DistBinaryProblem::mirror
  int64_t active_ = 0;
  int64_t global_active_ = 0;
  int64_t min_local_active_ = 0;
  std::vector<std::pair<int32_t, int32_t>> pending_swaps_;
  std::vector<float> scratch_;
  int64_t evaluations_base_ = 0;     // kernel_->evaluations() when it became this rank's kernel
  int64_t retired_evaluations_ = 0;  // counted by kernels this rank has replaced
  int64_t retired_hits_ = 0;         // of caches this rank has replaced
  int64_t retired_misses_ = 0;
};

}  // namespace tessel::svm::dist
