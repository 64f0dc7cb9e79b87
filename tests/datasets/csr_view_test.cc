// core/csr_view.h: the one CSR view reads rows the same way whoever owns them (a graph, a kernel operand, sparse
// features, LIBSVM rows): degrees, row ids and values, and an empty value span for unweighted rows.
#include "core/csr_view.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "core/error.h"
#include "datasets/csr_graph.h"
#include "datasets/dataset.h"
#include "kernels/matrix.h"

namespace tessel {
namespace {

// Rows {1, 2}, {}, {0, 1, 2} over 3 columns, values 1..5.
const std::vector<int64_t> kIndptr = {0, 2, 2, 5};
const std::vector<int32_t> kIndices = {1, 2, 0, 1, 2};
const std::vector<float> kValues = {1, 2, 3, 4, 5};

template <typename Idx, typename Val>
void ExpectRows(const CsrView<Idx, Val>& v, bool with_values) {
  ASSERT_EQ(v.num_rows(), 3);
  EXPECT_EQ(v.num_cols, 3);
  EXPECT_EQ(v.nnz(), 5);
  EXPECT_EQ(v.has_values(), with_values);
  EXPECT_EQ(v.Degree(0), 2);
  EXPECT_EQ(v.Degree(1), 0);
  EXPECT_EQ(v.Degree(2), 3);
  EXPECT_TRUE(v.RowIndices(1).empty());
  const auto row2 = v.RowIndices(2);
  EXPECT_EQ(std::vector<int64_t>(row2.begin(), row2.end()), (std::vector<int64_t>{0, 1, 2}));
  const auto val0 = v.RowValues(0);
  if (with_values) {
    EXPECT_EQ(std::vector<double>(val0.begin(), val0.end()), (std::vector<double>{1, 2}));
    const auto val2 = v.RowValues(2);
    EXPECT_EQ(std::vector<double>(val2.begin(), val2.end()), (std::vector<double>{3, 4, 5}));
  } else {
    EXPECT_TRUE(val0.empty()) << "no values: every entry is 1, RowValues is empty";
  }
}

TEST(CsrView, EveryOwnerGivesTheSameRows) {
  const datasets::CsrGraph32 weighted(Buffer<int64_t>::CopyOf(kIndptr), Buffer<int32_t>::CopyOf(kIndices),
                                      Buffer<float>::CopyOf(kValues));
  ExpectRows(weighted.View(), true);
  const datasets::CsrGraph64 plain(Buffer<int64_t>::CopyOf(kIndptr),
                                   Buffer<int64_t>::CopyOf(std::vector<int64_t>{1, 2, 0, 1, 2}));
  ExpectRows(plain.View(), false);
  EXPECT_EQ(plain.Degree(2), 3);
  EXPECT_TRUE(plain.NeighborWeights(0).empty());

  const kernels::SparseMatrix m{3, 3, Buffer<int64_t>::CopyOf(kIndptr), Buffer<int32_t>::CopyOf(kIndices),
                                Buffer<float>::CopyOf(kValues)};
  ExpectRows(m.HostView(), true);

  datasets::Features f;
  f.num_rows = 3;
  f.dim = 3;
  f.sparse = true;
  f.indptr = Buffer<int64_t>::CopyOf(kIndptr);
  f.indices = Buffer<int32_t>::CopyOf(kIndices);
  f.values = Buffer<float>::CopyOf(kValues);
  ExpectRows(f.SparseRows(), true);

  datasets::SparseRowDataset d;
  d.num_rows = 3;
  d.num_features = 3;
  d.indptr = Buffer<int64_t>::CopyOf(kIndptr);
  d.indices = Buffer<int32_t>::CopyOf(kIndices);
  d.values = Buffer<double>::CopyOf(std::vector<double>{1, 2, 3, 4, 5});
  ExpectRows(d.Rows(), true);
}

TEST(CsrView, EmptyViewHasNoRows) {
  const CsrView<int32_t> v;
  EXPECT_EQ(v.num_rows(), 0);
  EXPECT_EQ(v.nnz(), 0);
}

TEST(SelectRows, RowsInTheGivenOrderWithRepeatsAndNewLabels) {
  datasets::SparseRowDataset d;
  d.name = "toy";
  d.num_rows = 3;
  d.num_features = 4;
  d.indptr = Buffer<int64_t>(std::vector<int64_t>{0, 2, 2, 3});
  d.indices = Buffer<int32_t>(std::vector<int32_t>{0, 3, 1});
  d.values = Buffer<double>(std::vector<double>{1.5, -2, 7});
  d.labels = Buffer<double>(std::vector<double>{1, 2, 3});
  const std::vector<int64_t> rows{2, 0, 2, 1};
  const std::vector<double> labels{-1, 1, -1, 1};
  const datasets::SparseRowDataset s = datasets::SelectRows<int64_t>(d, rows, labels);
  EXPECT_EQ(s.name, "toy");
  EXPECT_EQ(s.num_rows, 4);
  EXPECT_EQ(s.num_features, 4);
  EXPECT_EQ(std::vector<int64_t>(s.indptr.Host().begin(), s.indptr.Host().end()),
            (std::vector<int64_t>{0, 1, 3, 4, 4}));
  EXPECT_EQ(std::vector<int32_t>(s.indices.Host().begin(), s.indices.Host().end()), (std::vector<int32_t>{1, 0, 3, 1}));
  EXPECT_EQ(std::vector<double>(s.values.Host().begin(), s.values.Host().end()), (std::vector<double>{7, 1.5, -2, 7}));
  EXPECT_EQ(std::vector<double>(s.labels.Host().begin(), s.labels.Host().end()), labels);
  const std::vector<int32_t> bad{3};
  const std::vector<double> one{1};
  EXPECT_THROW(datasets::SelectRows<int32_t>(d, bad, one), Error);
  EXPECT_THROW(datasets::SelectRows<int64_t>(d, rows, one), Error);
}

}  // namespace
}  // namespace tessel
