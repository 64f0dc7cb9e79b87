// Steps 5 and 6 of distributed partitioning (partition/dist_partition_steps.h): rows to the ranks that write their
// parts, the parts built, features moved in rounds of bounded size, then each part checked and written; rank 0
// writes partitions.json and renames the folder.
#include <algorithm>
#include <cstring>
#include <filesystem>
#include <limits>
#include <numeric>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "core/error.h"
#include "core/file_io.h"
#include "core/log.h"
#include "core/memory_budget.h"
#include "partition/dist_partition_steps.h"
#include "partition/sorted_index.h"

namespace tessel::partition::detail {
namespace {

namespace fs = std::filesystem;

// Feature bytes one rank sends per round of the feature move (the rounds bound the move's transient memory).
constexpr int64_t kFeatureRoundBytes = int64_t{32} << 20;

// One row as it travels to the rank that writes its part.
struct RowMeta {
  int64_t original = 0;
  int64_t new_id = 0;
  int64_t degree = 0;
  int64_t feature_nnz = 0;  // sparse features: the row's non-zeros
  int32_t label = datasets::kNoLabel;
  int32_t split = 0;
};
static_assert(sizeof(RowMeta) == 40);

struct Column {
  int64_t original = 0;
  int64_t new_id = 0;
};

// Rows of the parts this rank writes, as received (ascending original id: sources are ascending blocks, each sends
// its rows in order).
struct Received {
  std::vector<RowMeta> rows;
  std::vector<int64_t> row_start;  // into cols / weights
  std::vector<Column> cols;
  std::vector<float> weights;
};

LocalPart BuildPart(const Received& in, size_t first_row, size_t end_row, int32_t k, int32_t num_parts,
                    const std::vector<int64_t>& offsets, int64_t dataset_nodes, int32_t num_classes, bool has_labels,
                    bool weighted) {
  LocalPart out;
  out.part = k;
  out.num_parts = num_parts;
  out.global_offset = offsets[static_cast<size_t>(k)];
  out.num_owned = static_cast<int64_t>(end_row - first_row);
  out.dataset_nodes = dataset_nodes;
  out.num_classes = num_classes;
  const int64_t lo = offsets[static_cast<size_t>(k)];
  const int64_t hi = offsets[static_cast<size_t>(k) + 1];
  TESSEL_CHECK(out.num_owned == hi - lo, "distributed partition: part {} received {} rows for {} nodes", k,
               out.num_owned, hi - lo);
  std::vector<int64_t> owned(static_cast<size_t>(out.num_owned));
  std::vector<int64_t> halo_entries;  // each remote entry's original id, in the rows' order
  for (size_t r = first_row; r < end_row; ++r) {
    const RowMeta& m = in.rows[r];
    TESSEL_CHECK(m.new_id == lo + static_cast<int64_t>(r - first_row),
                 "distributed partition: part {} row {} arrived out of order", k, m.original);
    owned[r - first_row] = m.original;
    for (int64_t e = in.row_start[r]; e < in.row_start[r + 1]; ++e) {
      const Column& c = in.cols[static_cast<size_t>(e)];
      if (c.new_id < lo || c.new_id >= hi) halo_entries.push_back(c.original);
    }
  }
  // The halo: the remote entries' original ids, sorted and unique, and each remote entry's place among them (a radix
  // sort, not a binary search per entry).
  std::vector<int32_t> halo_at;
  std::vector<int64_t> halo_ids = IndexOf(std::move(halo_entries), &halo_at);
  out.num_halo = static_cast<int64_t>(halo_ids.size());
  TESSEL_CHECK(out.num_local() <= std::numeric_limits<int32_t>::max(),
               "part {} has {} owned + {} halo nodes, more than 32-bit local ids hold; use more parts", k,
               out.num_owned, out.num_halo);
  std::vector<int64_t> halo_new(halo_ids.size());
  for (size_t j = 0, r = first_row; r < end_row; ++r) {
    for (int64_t e = in.row_start[r]; e < in.row_start[r + 1]; ++e) {
      const Column& c = in.cols[static_cast<size_t>(e)];
      if (c.new_id < lo || c.new_id >= hi) halo_new[static_cast<size_t>(halo_at[j++])] = c.new_id;
    }
  }
  std::vector<int32_t> halo_owner(halo_ids.size());
  std::vector<int64_t> halo_remote(halo_ids.size());
  for (size_t j = 0; j < halo_ids.size(); ++j) {
    halo_owner[j] = PartOfNew(offsets, halo_new[j]);
    halo_remote[j] = halo_new[j] - offsets[static_cast<size_t>(halo_owner[j])];
  }
  Free(halo_new);
  size_t next_halo = 0;  // the remote entries are met in the order they were listed above
  const auto to_local = [&](const Column& c) {
    if (c.new_id >= lo && c.new_id < hi) return static_cast<int32_t>(c.new_id - lo);
    return static_cast<int32_t>(out.num_owned + halo_at[next_halo++]);
  };
  const int64_t base = in.row_start[first_row];
  const int64_t entries = in.row_start[end_row] - base;
  std::vector<int64_t> lptr(static_cast<size_t>(out.num_local()) + 1, entries);
  std::vector<int32_t> lidx(static_cast<size_t>(entries));
  std::vector<float> lw(weighted ? lidx.size() : 0);
  std::vector<std::pair<int32_t, float>> row;
  for (size_t r = first_row; r < end_row; ++r) {
    const int64_t b = in.row_start[r] - base;
    const int64_t e_end = in.row_start[r + 1] - base;
    lptr[r - first_row] = b;
    if (!weighted) {
      for (int64_t e = b; e < e_end; ++e)
        lidx[static_cast<size_t>(e)] = to_local(in.cols[static_cast<size_t>(base + e)]);
      std::sort(lidx.begin() + b, lidx.begin() + e_end);
      continue;
    }
    row.clear();
    for (int64_t e = b; e < e_end; ++e) {
      row.emplace_back(to_local(in.cols[static_cast<size_t>(base + e)]), in.weights[static_cast<size_t>(base + e)]);
    }
    std::sort(row.begin(), row.end());
    for (size_t j = 0; j < row.size(); ++j) {
      lidx[static_cast<size_t>(b) + j] = row[j].first;
      lw[static_cast<size_t>(b) + j] = row[j].second;
    }
  }
  out.graph = datasets::CsrGraph32(Buffer<int64_t>(std::move(lptr)), Buffer<int32_t>(std::move(lidx)),
                                   Buffer<float>(std::move(lw)));
  out.owned_ids = Buffer<int64_t>(std::move(owned));
  out.halo_ids = Buffer<int64_t>(std::move(halo_ids));
  out.halo_owner = Buffer<int32_t>(std::move(halo_owner));
  out.halo_remote = Buffer<int64_t>(std::move(halo_remote));
  std::vector<int64_t> splits[3];
  std::vector<int32_t> labels;
  for (size_t r = first_row; r < end_row; ++r) {
    const RowMeta& m = in.rows[r];
    const auto local = static_cast<int64_t>(r - first_row);
    if (m.split & kTrainBit) splits[0].push_back(local);
    if (m.split & kValBit) splits[1].push_back(local);
    if (m.split & kTestBit) splits[2].push_back(local);
    labels.push_back(m.label);
  }
  if (has_labels) out.labels = Buffer<int32_t>(std::move(labels));
  out.train = Buffer<int64_t>(std::move(splits[0]));
  out.val = Buffer<int64_t>(std::move(splits[1]));
  out.test = Buffer<int64_t>(std::move(splits[2]));
  return out;
}

// Sparse features: the dataset's row offsets (empty otherwise).
std::span<const int64_t> FeaturePtr(const DistPartitionRun& run) {
  const datasets::Features& feat = run.feat();
  const bool sparse_features = feat.dim > 0 && feat.sparse;
  return sparse_features ? feat.indptr.Host() : std::span<const int64_t>();
}

// The block's rows to the ranks that write their parts (part p: rank p mod K): each row's ids, degree, feature
// non-zeros, label and split in one all-to-all, then its columns (both ids) and weights. Frees the block's columns
// and weights and col_new before the columns travel.
Received SendRows(DistPartitionRun& run) {
  comm::Communicator& comm = run.comm;
  Block& b = run.b;
  const int64_t rows = b.rows();
  const bool weighted = run.weighted;
  const std::vector<int64_t>& new_id = run.ids.new_id;
  std::vector<int64_t>& col_new = run.ids.col_new;
  const auto dest_of = [&](int64_t i) { return run.DestOf(i); };
  const bool sparse_features = run.feat().dim > 0 && run.feat().sparse;
  auto feat_ptr = FeaturePtr(run);
  Received in;
  std::vector<int64_t> row_counts(static_cast<size_t>(run.K), 0);
  std::vector<int64_t> col_counts(static_cast<size_t>(run.K), 0);
  for (int64_t i = 0; i < rows; ++i) {
    ++row_counts[dest_of(i)];
    col_counts[dest_of(i)] += b.ptr[static_cast<size_t>(i) + 1] - b.ptr[static_cast<size_t>(i)];
  }
  {
    std::vector<int64_t> at = Starts(row_counts);
    std::vector<RowMeta> meta(static_cast<size_t>(rows));
    for (int64_t i = 0; i < rows; ++i) {
      RowMeta& m = meta[static_cast<size_t>(at[dest_of(i)]++)];
      m.original = b.lo + i;
      m.new_id = new_id[static_cast<size_t>(i)];
      m.degree = b.ptr[static_cast<size_t>(i) + 1] - b.ptr[static_cast<size_t>(i)];
      m.feature_nnz =
          sparse_features ? feat_ptr[static_cast<size_t>(b.lo + i) + 1] - feat_ptr[static_cast<size_t>(b.lo + i)] : 0;
      m.label = b.labels.empty() ? datasets::kNoLabel : b.labels[static_cast<size_t>(i)];
      m.split = b.split[static_cast<size_t>(i)];
    }
    in.rows = Exchange(comm, meta, row_counts, nullptr, "partition");
  }
  {
    std::vector<int64_t> at = Starts(col_counts);
    std::vector<Column> cols(b.cols.size());
    std::vector<float> w(weighted ? b.cols.size() : 0);
    for (int64_t i = 0; i < rows; ++i) {
      int64_t& k = at[dest_of(i)];
      for (int64_t e = b.ptr[static_cast<size_t>(i)]; e < b.ptr[static_cast<size_t>(i) + 1]; ++e, ++k) {
        cols[static_cast<size_t>(k)] = {b.cols[static_cast<size_t>(e)], col_new[static_cast<size_t>(e)]};
        if (weighted) w[static_cast<size_t>(k)] = b.weights[static_cast<size_t>(e)];
      }
    }
    Free(b.cols);
    Free(b.weights);
    Free(col_new);
    in.cols = Exchange(comm, cols, col_counts, nullptr, "partition");
    Free(cols);
    if (weighted) in.weights = Exchange(comm, w, col_counts, nullptr, "partition");
  }
  return in;
}

// Indexes the received rows (row_start), groups them by part (they arrive ordered by original id, so a stable sort
// keeps each part's order), and finds the parts this rank writes (my_parts) and where each one's rows start
// (part_first).
void GroupByPart(DistPartitionRun& run, Received& in) {
  const int me = run.me;
  const bool weighted = run.weighted;
  const std::vector<int64_t>& offsets = run.ids.offsets;
  std::vector<int32_t>& my_parts = run.own.my_parts;
  std::vector<size_t>& part_first = run.own.part_first;
  in.row_start.assign(in.rows.size() + 1, 0);
  for (size_t r = 0; r < in.rows.size(); ++r) in.row_start[r + 1] = in.row_start[r] + in.rows[r].degree;
  TESSEL_CHECK(static_cast<size_t>(in.row_start.back()) == in.cols.size(),
               "distributed partition: {} columns received for rows of {} entries", in.cols.size(),
               in.row_start.back());

  for (int32_t p = me; p < run.P; p += run.K) my_parts.push_back(p);
  {
    std::vector<size_t> order(in.rows.size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t c) {
      return PartOfNew(offsets, in.rows[a].new_id) < PartOfNew(offsets, in.rows[c].new_id);
    });
    if (!std::is_sorted(order.begin(), order.end())) {
      Received sorted;
      sorted.rows.reserve(in.rows.size());
      sorted.row_start.assign(in.rows.size() + 1, 0);
      sorted.cols.reserve(in.cols.size());
      if (weighted) sorted.weights.reserve(in.weights.size());
      for (size_t r : order) {
        sorted.rows.push_back(in.rows[r]);
        sorted.cols.insert(sorted.cols.end(), in.cols.begin() + in.row_start[r], in.cols.begin() + in.row_start[r + 1]);
        if (weighted) {
          sorted.weights.insert(sorted.weights.end(), in.weights.begin() + in.row_start[r],
                                in.weights.begin() + in.row_start[r + 1]);
        }
        sorted.row_start[sorted.rows.size()] = static_cast<int64_t>(sorted.cols.size());
      }
      in = std::move(sorted);
    }
  }
  part_first.assign(my_parts.size() + 1, 0);
  for (size_t j = 0; j < my_parts.size(); ++j) {
    part_first[j + 1] = part_first[j] + static_cast<size_t>(offsets[static_cast<size_t>(my_parts[j]) + 1] -
                                                            offsets[static_cast<size_t>(my_parts[j])]);
  }
  TESSEL_CHECK(part_first.back() == in.rows.size(), "distributed partition: rank {} received {} rows for {} nodes", me,
               in.rows.size(), part_first.back());
}

// The parts' graphs, ids, labels and splits, built now so the received columns are freed before the features
// arrive (the features are the largest part of a part); with sparse features, each part's feature row offsets from
// the rows' non-zero counts.
void BuildParts(DistPartitionRun& run, const Received& in) {
  const std::vector<int32_t>& my_parts = run.own.my_parts;
  const std::vector<size_t>& part_first = run.own.part_first;
  const datasets::Features& feat = run.feat();
  std::vector<LocalPart>& built = run.own.built;
  std::vector<std::vector<int64_t>>& part_feat_ptr = run.own.part_feat_ptr;
  built.resize(my_parts.size());
  part_feat_ptr.resize(my_parts.size());
  comm::OnEveryRankOrFail(run.comm, [&] {
    for (size_t j = 0; j < my_parts.size(); ++j) {
      const auto c = Clock::now();
      built[j] = BuildPart(in, part_first[j], part_first[j + 1], my_parts[j], run.P, run.ids.offsets, run.n,
                           run.data.num_classes, run.data.has_labels(), run.weighted);
      if (feat.dim > 0 && feat.sparse) {  // the sparse feature rows' offsets, from the rows' non-zero counts
        const auto owned = static_cast<int64_t>(part_first[j + 1] - part_first[j]);
        std::vector<int64_t>& ptr = part_feat_ptr[j];
        ptr.assign(static_cast<size_t>(owned) + 1, 0);
        for (int64_t i = 0; i < owned; ++i) {
          ptr[static_cast<size_t>(i) + 1] =
              ptr[static_cast<size_t>(i)] + in.rows[part_first[j] + static_cast<size_t>(i)].feature_nnz;
        }
      }
      run.result.timings.build += Seconds(c);
    }
  });
}

// Each part's feature arrays at their full size, filled as the rounds arrive (dense: row-major; sparse: CSR whose
// offsets BuildParts made).
void AllocatePartFeatures(DistPartitionRun& run) {
  const datasets::Features& feat = run.feat();
  for (size_t j = 0; j < run.own.my_parts.size(); ++j) {
    datasets::Features& f = run.own.part_features[j];
    const auto owned = static_cast<int64_t>(run.own.part_first[j + 1] - run.own.part_first[j]);
    f.num_rows = owned;
    f.dim = feat.dim;
    f.sparse = feat.sparse;
    if (!feat.sparse) {
      f.dense = Buffer<float>(std::vector<float>(static_cast<size_t>(owned * feat.dim)));
    } else {
      const std::vector<int64_t>& ptr = run.own.part_feat_ptr[j];
      f.indices = Buffer<int32_t>(std::vector<int32_t>(static_cast<size_t>(ptr.back())));
      f.values = Buffer<float>(std::vector<float>(static_cast<size_t>(ptr.back())));
    }
  }
}

// Bytes the block's row i takes in a feature round: 8 bytes of new id, then 4 per dense value or 8 per sparse
// (index, value) pair.
int64_t FeatureRowBytes(const DistPartitionRun& run, std::span<const int64_t> feat_ptr, int64_t i) {
  const datasets::Features& feat = run.feat();
  if (!feat.sparse) return feat.dim * 4 + 8;
  return (feat_ptr[static_cast<size_t>(run.b.lo + i) + 1] - feat_ptr[static_cast<size_t>(run.b.lo + i)]) * 8 + 8;
}

// Round boundaries over this rank's rows: rounds of at most an eighth of this block's feature bytes (at least 1 MiB,
// at most kFeatureRoundBytes), so the send and receive buffers of a round stay small beside the part's own features.
std::vector<int64_t> FeatureRoundCuts(const DistPartitionRun& run, std::span<const int64_t> feat_ptr) {
  const int64_t rows = run.b.rows();
  int64_t block_bytes = 0;
  for (int64_t i = 0; i < rows; ++i) block_bytes += FeatureRowBytes(run, feat_ptr, i);
  const int64_t round_bytes = std::clamp<int64_t>(block_bytes / 8, int64_t{1} << 20, kFeatureRoundBytes);
  std::vector<int64_t> cuts{0};
  for (int64_t i = 0, bytes = 0; i < rows; ++i) {
    bytes += FeatureRowBytes(run, feat_ptr, i);
    if (bytes >= round_bytes) {
      cuts.push_back(i + 1);
      bytes = 0;
    }
  }
  if (cuts.back() != rows) cuts.push_back(rows);
  return cuts;
}

// The feature rows [a, z) of the block, bucketed by the rank that writes their part (`counts`: 32-bit words per
// rank). Per row: new id, then (dense) dim floats or (sparse) nnz (index, value) pairs, as 32-bit words.
std::vector<uint32_t> PackFeatureRound(const DistPartitionRun& run, std::span<const int64_t> feat_ptr, int64_t a,
                                       int64_t z, std::vector<int64_t>* counts_out) {
  const datasets::Features& feat = run.feat();
  const Block& b = run.b;
  auto dense = feat.sparse ? std::span<const float>() : feat.dense.Host();
  auto sidx = feat.sparse ? feat.indices.Host() : std::span<const int32_t>();
  auto sval = feat.sparse ? feat.values.Host() : std::span<const float>();
  std::vector<int64_t>& counts = *counts_out;
  counts.assign(static_cast<size_t>(run.K), 0);
  for (int64_t i = a; i < z; ++i) counts[run.DestOf(i)] += FeatureRowBytes(run, feat_ptr, i) / 4;
  std::vector<int64_t> at = Starts(counts);
  std::vector<uint32_t> send(static_cast<size_t>(at.back()));
  for (int64_t i = a; i < z; ++i) {
    int64_t& k = at[run.DestOf(i)];
    const int64_t g = run.ids.new_id[static_cast<size_t>(i)];
    std::memcpy(&send[static_cast<size_t>(k)], &g, 8);
    k += 2;
    const int64_t u = b.lo + i;
    if (!feat.sparse) {
      std::memcpy(&send[static_cast<size_t>(k)], dense.data() + u * feat.dim, static_cast<size_t>(feat.dim) * 4);
      k += feat.dim;
    } else {
      for (int64_t e = feat_ptr[static_cast<size_t>(u)]; e < feat_ptr[static_cast<size_t>(u) + 1]; ++e) {
        std::memcpy(&send[static_cast<size_t>(k)], &sidx[static_cast<size_t>(e)], 4);
        std::memcpy(&send[static_cast<size_t>(k) + 1], &sval[static_cast<size_t>(e)], 4);
        k += 2;
      }
    }
  }
  return send;
}

// Each received feature row lands at its place in its part's feature arrays.
void UnpackFeatureRound(DistPartitionRun& run, const std::vector<uint32_t>& recv) {
  const datasets::Features& feat = run.feat();
  const std::vector<int32_t>& my_parts = run.own.my_parts;
  const std::vector<int64_t>& offsets = run.ids.offsets;
  for (size_t k = 0; k < recv.size();) {
    int64_t g = 0;
    std::memcpy(&g, &recv[k], 8);
    k += 2;
    const int32_t p = PartOfNew(offsets, g);
    const auto j = static_cast<size_t>(std::find(my_parts.begin(), my_parts.end(), p) - my_parts.begin());
    TESSEL_CHECK(j < my_parts.size(), "distributed partition: rank {} received features of part {}", run.me, p);
    const int64_t local = g - offsets[static_cast<size_t>(p)];
    datasets::Features& f = run.own.part_features[j];
    if (!feat.sparse) {
      std::memcpy(f.dense.MutableHost().data() + local * feat.dim, &recv[k], static_cast<size_t>(feat.dim) * 4);
      k += static_cast<size_t>(feat.dim);
    } else {
      const std::vector<int64_t>& ptr = run.own.part_feat_ptr[j];
      auto idx = f.indices.MutableHost();
      auto val = f.values.MutableHost();
      for (int64_t e = ptr[static_cast<size_t>(local)]; e < ptr[static_cast<size_t>(local) + 1]; ++e) {
        std::memcpy(idx.data() + e, &recv[k], 4);
        std::memcpy(val.data() + e, &recv[k + 1], 4);
        k += 2;
      }
    }
  }
}

// Features in rounds of at most kFeatureRoundBytes sent per rank (every rank runs the same number of rounds); each
// dense source row's pages are released once sent.
void MoveFeatures(DistPartitionRun& run) {
  const datasets::Features& feat = run.feat();
  const int64_t rows = run.b.rows();
  run.own.part_features.resize(run.own.my_parts.size());
  if (feat.dim <= 0) return;
  AllocatePartFeatures(run);
  auto feat_ptr = FeaturePtr(run);
  auto dense = feat.sparse ? std::span<const float>() : feat.dense.Host();
  const std::vector<int64_t> cuts = FeatureRoundCuts(run, feat_ptr);
  std::vector<int64_t> rounds{static_cast<int64_t>(cuts.size()) - 1};
  run.comm.Allreduce<int64_t>(rounds, comm::ReduceOp::kMax, "setup").ThrowIfError();
  for (int64_t round = 0; round < rounds[0]; ++round) {
    const int64_t a = round + 1 < static_cast<int64_t>(cuts.size()) ? cuts[static_cast<size_t>(round)] : rows;
    const int64_t z = round + 1 < static_cast<int64_t>(cuts.size()) ? cuts[static_cast<size_t>(round) + 1] : rows;
    std::vector<int64_t> counts;
    std::vector<uint32_t> send = PackFeatureRound(run, feat_ptr, a, z, &counts);
    if (!feat.sparse && z > a) {
      memory::ReleaseMappedPages(dense.data() + (run.b.lo + a) * feat.dim, (z - a) * feat.dim * 4);
    }
    std::vector<uint32_t> recv = Exchange(run.comm, send, counts, nullptr, "partition");
    Free(send);
    UnpackFeatureRound(run, recv);
  }
  for (size_t j = 0; j < run.own.my_parts.size(); ++j) {
    if (feat.sparse) run.own.part_features[j].indptr = Buffer<int64_t>(std::move(run.own.part_feat_ptr[j]));
  }
}

// Checks and writes each part this rank writes into rank 0's temporary folder, with its features (the part's build
// time includes the check); records each part's halo and manifest checksum at its place in `halos` and `sums_hex`.
void WriteOwnParts(DistPartitionRun& run, std::vector<int64_t>* halos, std::vector<char>* sums_hex) {
  DistPartitionTimings& t = run.result.timings;
  comm::OnEveryRankOrFail(run.comm, [&] {
    for (size_t j = 0; j < run.own.my_parts.size(); ++j) {
      const int32_t p = run.own.my_parts[j];
      auto c = Clock::now();
      LocalPart& lp = run.own.built[j];
      lp.features = std::move(run.own.part_features[j]);
      lp.Validate();
      t.build += Seconds(c);
      c = Clock::now();
      const std::string sum = folder::WritePart(lp, fs::path(run.temp) / folder::PartDirName(p));
      TESSEL_CHECK(sum.size() == 16, "partition: manifest checksum '{}' is not 16 hex digits", sum);
      std::memcpy(&(*sums_hex)[static_cast<size_t>(p) * 16], sum.data(), 16);
      (*halos)[static_cast<size_t>(p)] = lp.num_halo;
      t.write += Seconds(c);
      if (run.total_entries >= 1000000) {
        log::Info("partition: part {}/{} written by rank {} ({} owned, {} halo, {} entries)", p + 1, run.P, run.me,
                  lp.num_owned, lp.num_halo, lp.graph.num_entries());
      }
      lp = LocalPart{};
    }
  });
}

}  // namespace

// 5. Move rows to the ranks that write their parts (part p: rank p mod K), build the parts, then move the features.
void MoveRows(DistPartitionRun& run) {
  const int me = run.me;
  auto clock = Clock::now();
  Received in = SendRows(run);
  LogMemory(me, "rows moved");
  GroupByPart(run, in);
  BuildParts(run, in);
  in = Received{};
  LogMemory(me, "parts built");
  MoveFeatures(run);
  LogMemory(me, "features moved");
  run.b = Block{};
  Free(run.ids.new_id);
  Free(run.assignment.part);
  run.result.timings.move = Seconds(clock);
}

// 6. Build, check and write this rank's parts; rank 0 writes partitions.json and renames the folder.
void WriteParts(DistPartitionRun& run) {
  comm::Communicator& comm = run.comm;
  DistPartitionResult& result = run.result;
  PartitionStats& stats = result.stats;
  std::vector<int64_t> halos(static_cast<size_t>(run.P), 0);
  std::vector<char> sums_hex(static_cast<size_t>(run.P) * 16, 0);
  WriteOwnParts(run, &halos, &sums_hex);
  result.parts_written = static_cast<int64_t>(run.own.my_parts.size());
  LogMemory(run.me, "parts written");
  SumOverRanks(comm, &halos);
  {
    std::vector<uint8_t> bytes(sums_hex.begin(), sums_hex.end());
    comm.Allreduce<uint8_t>(bytes, comm::ReduceOp::kMax, "setup").ThrowIfError();
    sums_hex.assign(bytes.begin(), bytes.end());
  }
  SetHalo(&stats, halos);
  std::vector<std::string> manifest_sums(static_cast<size_t>(run.P));
  for (int32_t p = 0; p < run.P; ++p)
    manifest_sums[static_cast<size_t>(p)] = std::string(&sums_hex[static_cast<size_t>(p) * 16], 16);

  result.description = folder::Describe(SummarizeDataset(run.data, stats.symmetric), run.options, result.algorithm, -1,
                                        result.balance, run.ids.offsets, stats, manifest_sums);
  const auto c = Clock::now();
  comm::OnEveryRankOrFail(comm, [&] {
    if (run.me != 0) return;
    WriteFileAtomic(run.out->path() / "partitions.json", result.description.dump(2) + "\n");
    run.out->Commit();
  });
  result.timings.write += Seconds(c);
}

}  // namespace tessel::partition::detail
