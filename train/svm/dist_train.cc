// TrainSvmDistributed: the one-vs-one decomposition of svm_train.cc with each pair solved by SolveBinaryDistributed
// over this rank's block of rows.
#include "train/svm/dist_train.h"

#include <algorithm>
#include <cstring>
#include <memory>

#include "core/error.h"
#include "core/log.h"

namespace tessel::train::svm {
namespace {

void Check(const comm::Status& s) { s.ThrowIfError(); }

// FNV-1a over bytes, for comparing the ranks' copies of the data.
uint64_t Fnv(uint64_t h, const void* data, size_t bytes) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t k = 0; k < bytes; ++k) h = (h ^ p[k]) * 1099511628211ULL;
  return h;
}

// Every rank must see the same data: the ranks compare (rows, features, non-zeros, checksum) and all throw the
// same message when any differs.
void CheckSameData(comm::Communicator& comm, const datasets::SparseRowDataset& data) {
  const auto indptr = data.indptr.Host();
  const auto indices = data.indices.Host();
  const auto values = data.values.Host();
  const auto labels = data.labels.Host();
  uint64_t h = 14695981039346656037ULL;
  h = Fnv(h, indptr.data(), indptr.size_bytes());
  h = Fnv(h, indices.data(), indices.size_bytes());
  h = Fnv(h, values.data(), values.size_bytes());
  h = Fnv(h, labels.data(), labels.size_bytes());
  const int64_t mine[4] = {data.num_rows, data.num_features, data.NonZeros(), static_cast<int64_t>(h >> 1)};
  const int p = comm.Size();
  std::vector<int64_t> all(static_cast<size_t>(4 * p));
  Check(comm.Allgather<int64_t>(mine, all, "svm-setup"));
  for (int r = 1; r < p; ++r) {
    const int64_t* a = all.data();
    const int64_t* b = all.data() + 4 * r;
    TESSEL_CHECK(a[0] == b[0] && a[1] == b[1] && a[2] == b[2] && a[3] == b[3],
                 "{}: the ranks read different data: rank 0 sees {} rows, {} features, {} non-zeros (checksum {:x}) "
                 "but rank {} sees {} rows, {} features, {} non-zeros (checksum {:x}); every rank must read the same "
                 "file (copy it to each node, or put it on a shared file system)",
                 data.name.empty() ? "data" : data.name, a[0], a[1], a[2], a[3], r, b[0], b[1], b[2], b[3]);
  }
}

}  // namespace

std::vector<int64_t> BalancedRowBlocks(std::span<const int64_t> indptr, int parts) {
  TESSEL_CHECK(parts >= 1, "BalancedRowBlocks: {} parts", parts);
  const int64_t n = indptr.empty() ? 0 : static_cast<int64_t>(indptr.size()) - 1;
  const int64_t nnz = n > 0 ? indptr.back() - indptr.front() : 0;
  const double per_row = n > 0 ? std::max(1.0, static_cast<double>(nnz) / static_cast<double>(n)) : 1.0;
  const double total = static_cast<double>(nnz) + per_row * static_cast<double>(n);
  std::vector<int64_t> b(static_cast<size_t>(parts) + 1, n);
  b[0] = 0;
  int64_t r = 0;
  for (int k = 1; k < parts; ++k) {
    const double target = total * k / parts;
    // The row boundary whose weight before it is nearest the target.
    const auto before = [&](int64_t x) {
      return static_cast<double>(indptr[x] - indptr[0]) + per_row * static_cast<double>(x);
    };
    while (r < n && before(r) < target) ++r;
    if (r > 0 && target - before(r - 1) < before(r) - target) --r;
    b[static_cast<size_t>(k)] = std::max(r, b[static_cast<size_t>(k) - 1]);
  }
  return b;
}

SvmModel TrainSvmDistributed(comm::Communicator& comm, const datasets::SparseRowDataset& data, const SvmParams& params,
                             TrainReport* report, std::vector<DistStats>* pair_stats) {
  CheckSameData(comm, data);
  const int parts = comm.Size();
  TESSEL_CHECK(data.num_rows >= parts,
               "{}: {} ranks for {} rows; run at most {} ranks (mpirun -np {}), since each rank must hold samples",
               data.name.empty() ? "data" : data.name, parts, data.num_rows, data.num_rows, data.num_rows);
  const auto indptr = data.indptr.Host();
  const auto indices = data.indices.Host();
  const std::vector<int64_t> blocks = BalancedRowBlocks(indptr, parts);
  const int64_t lo = blocks[static_cast<size_t>(comm.Rank())];
  const int64_t hi = blocks[static_cast<size_t>(comm.Rank()) + 1];
  int64_t max_index = 0;  // LIBSVM's max_index, as TrainOneVsOne resolves it
  for (const int32_t f : indices) max_index = std::max<int64_t>(max_index, f + 1);
  // This rank's rows; the offsets keep pointing into the whole arrays.
  const kernels::SparseRowsView block{indptr.subspan(static_cast<size_t>(lo), static_cast<size_t>(hi - lo + 1)),
                                      indices, data.values.Host(), std::max(data.num_features, max_index)};
  log::Info("svm: {} ranks; rank {} holds rows [{}, {}) of {}", parts, comm.Rank(), lo, hi, data.num_rows);

  std::unique_ptr<kernels::SvmKernelRows> kernel;  // built at the first pair, when gamma is resolved
  std::vector<DistStats> stats;
  const auto solve_pair = [&](const PairTask& t) {
    if (kernel == nullptr) kernel = std::make_unique<kernels::SvmKernelRows>(block, t.kernel);
    const size_t l = t.sub.size();
    std::vector<int32_t> owner(l);
    std::vector<int32_t> nnz(l);
    std::vector<int32_t> rows;
    std::vector<int64_t> gids;
    std::vector<int8_t> y;
    for (size_t g = 0; g < l; ++g) {
      const int32_t r = t.sub[g];
      owner[g] = static_cast<int32_t>(std::upper_bound(blocks.begin(), blocks.end(), r) - blocks.begin()) - 1;
      nnz[g] = static_cast<int32_t>(indptr[r + 1] - indptr[r]);
      if (r >= lo && r < hi) {
        rows.push_back(static_cast<int32_t>(r - lo));
        gids.push_back(static_cast<int64_t>(g));
        y.push_back(t.y[g]);
      }
    }
    DistStats s;
    const DistBinaryProblem problem{kernel.get(), rows, gids, y, static_cast<int64_t>(l), owner, nnz, t.Cp, t.Cn};
    SolverResult r = SolveBinaryDistributed(comm, problem, t.options, &s);
    stats.push_back(s);
    return r;
  };
  SvmModel model = TrainOneVsOne(data, params, report, solve_pair, false);
  if (pair_stats != nullptr) *pair_stats = std::move(stats);
  return model;
}

}  // namespace tessel::train::svm
