// C-SVC training across the ranks of a communicator (`mpirun -np K tessel train svm`): the rows are split into K
// contiguous blocks balanced on rows and non-zeros, and every binary problem of the one-vs-one decomposition is
// solved by all ranks together with the distributed SMO (dist_solver.h). The model is the one-process model.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "comm/communicator.h"
#include "datasets/dataset.h"
#include "train/svm/dist_solver.h"
#include "train/svm/svm_model.h"
#include "train/svm/svm_params.h"
#include "train/svm/svm_train.h"

namespace tessel::train::svm {

// K + 1 row boundaries: block k is rows [b[k], b[k+1]), contiguous, each with about the same rows + non-zeros
// (a row weighs its non-zeros plus the mean non-zeros per row). Blocks may be empty when K exceeds the rows.
std::vector<int64_t> BalancedRowBlocks(std::span<const int64_t> indptr, int parts);

// Collective: every rank passes the same dataset (each rank reads the file; the ranks compare its size, features,
// non-zeros and a checksum of labels and entries first, and all fail with the same message when they differ) and
// the same parameters. Throws on every rank when there are more ranks than rows. The report and the model are the
// same on every rank; `pair_stats` gets each binary problem's DistStats in LIBSVM's pair order.
SvmModel TrainSvmDistributed(comm::Communicator& comm, const datasets::SparseRowDataset& data, const SvmParams& params,
                             TrainReport* report = nullptr, std::vector<DistStats>* pair_stats = nullptr);

}  // namespace tessel::train::svm
