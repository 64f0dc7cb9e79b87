// Several parts of a partition folder as one part (partition/merge_parts.h).
#include "partition/merge_parts.h"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <utility>

#include "core/error.h"
#include "partition/dist_partition_steps.h"

namespace tessel::partition {

std::vector<int32_t> GroupParts(const std::vector<int64_t>& offsets, int32_t ranks) {
  const auto k = static_cast<int32_t>(offsets.size()) - 1;
  TESSEL_CHECK(ranks >= 1 && ranks <= k, "{} ranks cannot hold the {} parts: run at most one rank per part", ranks, k);
  std::vector<int32_t> first(static_cast<size_t>(ranks) + 1, k);
  first[0] = 0;
  const int64_t total = offsets.back();
  for (int32_t r = 1; r < ranks; ++r) {
    // The part boundary nearest r/R of the nodes, leaving a part for every rank before and after.
    const int64_t want = total * r / ranks;
    int32_t best = first[static_cast<size_t>(r) - 1] + 1;
    for (int32_t b = best; b <= k - (ranks - r); ++b) {
      if (std::llabs(offsets[static_cast<size_t>(b)] - want) < std::llabs(offsets[static_cast<size_t>(best)] - want)) {
        best = b;
      }
    }
    first[static_cast<size_t>(r)] = best;
  }
  return first;
}

std::vector<int64_t> GroupOffsets(const std::vector<int64_t>& offsets, const std::vector<int32_t>& first) {
  std::vector<int64_t> out;
  for (int32_t f : first) out.push_back(offsets[static_cast<size_t>(f)]);
  return out;
}

namespace {

template <typename T>
void AppendBuffer(const Buffer<T>& b, std::vector<T>* out) {
  auto v = b.Host();
  out->insert(out->end(), v.begin(), v.end());
}

// The owned rows of the parts one after the other, dense or sparse as the parts' features are.
datasets::Features MergeFeatures(const std::vector<LocalPart>& parts) {
  datasets::Features f;
  f.dim = parts.front().features.dim;
  f.sparse = parts.front().features.sparse;
  std::vector<float> dense, values;
  std::vector<int64_t> indptr = {0};
  std::vector<int32_t> indices;
  for (const LocalPart& p : parts) {
    TESSEL_CHECK(p.features.dim == f.dim && p.features.sparse == f.sparse,
                 "part {}: its features ({} columns, {}) differ from part {}'s", p.part, p.features.dim,
                 p.features.sparse ? "sparse" : "dense", parts.front().part);
    f.num_rows += p.features.num_rows;
    if (!f.sparse) {
      AppendBuffer(p.features.dense, &dense);
      continue;
    }
    auto ptr = p.features.indptr.Host();
    const int64_t base = indptr.back();
    for (size_t i = 1; i < ptr.size(); ++i) indptr.push_back(base + ptr[i] - ptr[0]);
    AppendBuffer(p.features.indices, &indices);
    AppendBuffer(p.features.values, &values);
  }
  if (f.sparse) {
    f.indptr = Buffer<int64_t>(std::move(indptr));
    f.indices = Buffer<int32_t>(std::move(indices));
    f.values = Buffer<float>(std::move(values));
  } else {
    f.dense = Buffer<float>(std::move(dense));
  }
  return f;
}

}  // namespace

LocalPart MergeParts(const std::vector<LocalPart>& parts, const std::vector<int64_t>& offsets,
                     const std::vector<int32_t>& first, int32_t rank) {
  TESSEL_CHECK(rank >= 0 && rank + 1 < static_cast<int32_t>(first.size()), "MergeParts: rank {} outside [0, {})", rank,
               first.size() - 1);
  const int32_t lo_part = first[static_cast<size_t>(rank)];
  const int32_t hi_part = first[static_cast<size_t>(rank) + 1];
  TESSEL_CHECK(static_cast<int32_t>(parts.size()) == hi_part - lo_part, "MergeParts: rank {} needs parts {} to {}",
               rank, lo_part, hi_part - 1);
  const std::vector<int64_t> new_offsets = GroupOffsets(offsets, first);
  // The rank that now holds old part p.
  std::vector<int32_t> holder(offsets.size() - 1);
  for (size_t r = 0; r + 1 < first.size(); ++r) {
    for (int32_t p = first[r]; p < first[r + 1]; ++p) holder[static_cast<size_t>(p)] = static_cast<int32_t>(r);
  }
  LocalPart out;
  out.part = rank;
  out.num_parts = static_cast<int32_t>(first.size()) - 1;
  out.global_offset = new_offsets[static_cast<size_t>(rank)];
  out.num_owned = new_offsets[static_cast<size_t>(rank) + 1] - out.global_offset;
  out.dataset_nodes = parts.front().dataset_nodes;
  out.num_classes = parts.front().num_classes;
  const int64_t lo = out.global_offset;
  const int64_t hi = lo + out.num_owned;
  // The global id (the K-part numbering) of part p's local column c: owned, or a halo node of another part.
  const auto global_of = [&](const LocalPart& p, int64_t c) {
    if (c < p.num_owned) return offsets[static_cast<size_t>(p.part)] + c;
    const auto j = static_cast<size_t>(c - p.num_owned);
    return offsets[static_cast<size_t>(p.halo_owner[j])] + p.halo_remote[j];
  };

  // The halo: every halo node of the run's parts that the run does not own, once, by original id.
  struct Halo {
    int64_t original, global;
  };
  std::vector<Halo> halo;
  for (const LocalPart& p : parts) {
    for (int64_t j = 0; j < p.num_halo; ++j) {
      const int64_t g = global_of(p, p.num_owned + j);
      if (g < lo || g >= hi) halo.push_back({p.halo_ids[static_cast<size_t>(j)], g});
    }
  }
  std::sort(halo.begin(), halo.end(), [](const Halo& a, const Halo& b) { return a.original < b.original; });
  halo.erase(
      std::unique(halo.begin(), halo.end(), [](const Halo& a, const Halo& b) { return a.original == b.original; }),
      halo.end());
  out.num_halo = static_cast<int64_t>(halo.size());
  TESSEL_CHECK(out.num_local() <= std::numeric_limits<int32_t>::max(),
               "parts {} to {} together have {} owned + {} halo nodes, more than 32-bit local ids hold; run more ranks",
               lo_part, hi_part - 1, out.num_owned, out.num_halo);
  // Global id -> merged halo index, for the columns below.
  std::vector<std::pair<int64_t, int32_t>> by_global(halo.size());
  std::vector<int64_t> halo_ids(halo.size()), halo_remote(halo.size());
  std::vector<int32_t> halo_owner(halo.size());
  for (size_t j = 0; j < halo.size(); ++j) {
    by_global[j] = {halo[j].global, static_cast<int32_t>(j)};
    halo_ids[j] = halo[j].original;
    halo_owner[j] = holder[static_cast<size_t>(detail::PartOfNew(offsets, halo[j].global))];
    halo_remote[j] = halo[j].global - new_offsets[static_cast<size_t>(halo_owner[j])];
  }
  std::sort(by_global.begin(), by_global.end());
  const auto column = [&](int64_t g) {
    if (g >= lo && g < hi) return static_cast<int32_t>(g - lo);
    const auto it = std::lower_bound(by_global.begin(), by_global.end(), std::pair<int64_t, int32_t>(g, -1));
    return static_cast<int32_t>(out.num_owned + it->second);
  };

  // Rows: the parts' owned rows in order, columns renumbered, each row sorted (weights kept with their columns).
  const bool weighted = parts.front().graph.has_weights();
  std::vector<int64_t> ptr = {0};
  std::vector<int32_t> idx;
  std::vector<float> w;
  std::vector<int64_t> owned_ids;
  std::vector<int32_t> labels;
  std::vector<int64_t> splits[3];
  std::vector<std::pair<int32_t, float>> row;
  for (const LocalPart& p : parts) {
    const int64_t shift = offsets[static_cast<size_t>(p.part)] - lo;
    auto pp = p.graph.indptr().Host();
    auto pi = p.graph.indices().Host();
    auto pw = p.graph.weights().Host();
    for (int64_t u = 0; u < p.num_owned; ++u) {
      row.clear();
      for (int64_t e = pp[static_cast<size_t>(u)]; e < pp[static_cast<size_t>(u) + 1]; ++e) {
        row.emplace_back(column(global_of(p, pi[static_cast<size_t>(e)])),
                         weighted ? pw[static_cast<size_t>(e)] : 0.0F);
      }
      std::sort(row.begin(), row.end());
      for (const auto& [c, x] : row) {
        idx.push_back(c);
        if (weighted) w.push_back(x);
      }
      ptr.push_back(static_cast<int64_t>(idx.size()));
    }
    AppendBuffer(p.owned_ids, &owned_ids);
    AppendBuffer(p.labels, &labels);
    const Buffer<int64_t>* lists[3] = {&p.train, &p.val, &p.test};
    for (int s = 0; s < 3; ++s) {
      for (int64_t u : lists[s]->Host()) splits[s].push_back(u + shift);
    }
  }
  ptr.resize(static_cast<size_t>(out.num_local()) + 1, ptr.back());  // halo rows are empty
  out.graph = datasets::CsrGraph32(Buffer<int64_t>(std::move(ptr)), Buffer<int32_t>(std::move(idx)),
                                   Buffer<float>(std::move(w)));
  out.owned_ids = Buffer<int64_t>(std::move(owned_ids));
  out.halo_ids = Buffer<int64_t>(std::move(halo_ids));
  out.halo_owner = Buffer<int32_t>(std::move(halo_owner));
  out.halo_remote = Buffer<int64_t>(std::move(halo_remote));
  out.features = MergeFeatures(parts);
  out.labels = Buffer<int32_t>(std::move(labels));
  out.train = Buffer<int64_t>(std::move(splits[0]));
  out.val = Buffer<int64_t>(std::move(splits[1]));
  out.test = Buffer<int64_t>(std::move(splits[2]));
  return out;
}

}  // namespace tessel::partition
