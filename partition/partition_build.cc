// Partition build: relabelling by counting sort, per-part halo discovery (remote endpoints of owned rows,
// parallel sort + unique), local CSR with columns remapped through a reusable scratch map, and owned node data.
#include "partition/partition_build.h"

#include <algorithm>
#include <atomic>
#include <limits>
#include <mutex>
#include <utility>
#include <variant>

#include <tbb/parallel_sort.h>

#include "core/error.h"
#include "core/parallel.h"

namespace tessel::partition {
namespace {

constexpr int64_t kRowGrain = 2048;
constexpr int64_t kFlatGrain = 1 << 16;
constexpr int32_t kClaimed = -2;  // scratch-map mark: a remote endpoint already collected for the current part

// Inclusive running sum in place: v[i] = v[0] + ... + v[i].
void RunningSum(std::span<int64_t> v) {
  for (size_t i = 1; i < v.size(); ++i) v[i] += v[i - 1];
}

// Each split list cut by part, as local ids (ascending, because local ids follow original ids).
std::vector<std::vector<int64_t>> SplitByPart(const Buffer<int64_t>& ids, const PartitionPlan& plan) {
  std::vector<std::vector<int64_t>> out(static_cast<size_t>(plan.num_parts));
  for (int64_t u : ids.Host()) out[plan.part[u]].push_back(plan.local[u]);
  return out;
}

datasets::Features OwnedFeatures(const datasets::Features& f, std::span<const int64_t> owned) {
  datasets::Features out;
  if (f.num_rows == 0 && f.dim == 0) return out;
  const auto rows = static_cast<int64_t>(owned.size());
  out.num_rows = rows;
  out.dim = f.dim;
  out.sparse = f.sparse;
  if (!f.sparse) {
    out.dense = Buffer<float>(static_cast<size_t>(rows * f.dim));
    auto src = f.dense.Host();
    auto dst = out.dense.MutableHost();
    const auto dim = static_cast<size_t>(f.dim);
    parallel_for<int64_t>(0, rows, 1024, [&](int64_t i) {
      std::copy_n(src.begin() + static_cast<ptrdiff_t>(static_cast<size_t>(owned[i]) * dim), dim,
                  dst.begin() + static_cast<ptrdiff_t>(static_cast<size_t>(i) * dim));
    });
    return out;
  }
  auto ptr = f.indptr.Host();
  std::vector<int64_t> optr(static_cast<size_t>(rows) + 1, 0);
  parallel_for<int64_t>(0, rows, 4096, [&](int64_t i) { optr[i + 1] = ptr[owned[i] + 1] - ptr[owned[i]]; });
  RunningSum(optr);
  std::vector<int32_t> idx(static_cast<size_t>(optr[rows]));
  std::vector<float> val(idx.size());
  auto sidx = f.indices.Host();
  auto sval = f.values.Host();
  parallel_for<int64_t>(0, rows, 1024, [&](int64_t i) {
    const int64_t b = ptr[owned[i]];
    const int64_t len = ptr[owned[i] + 1] - b;
    std::copy_n(sidx.begin() + b, len, idx.begin() + optr[i]);
    std::copy_n(sval.begin() + b, len, val.begin() + optr[i]);
  });
  out.indptr = Buffer<int64_t>(std::move(optr));
  out.indices = Buffer<int32_t>(std::move(idx));
  out.values = Buffer<float>(std::move(val));
  return out;
}

}  // namespace

PartitionPlan MakePlan(std::vector<int32_t> assignment, int32_t num_parts) {
  TESSEL_CHECK(num_parts >= 1, "partition plan: {} parts; need at least 1", num_parts);
  PartitionPlan plan;
  plan.num_parts = num_parts;
  plan.part = std::move(assignment);
  const auto n = static_cast<int64_t>(plan.part.size());
  plan.offsets.assign(static_cast<size_t>(num_parts) + 1, 0);
  for (int64_t u = 0; u < n; ++u) {
    const int32_t p = plan.part[u];
    TESSEL_CHECK(p >= 0 && p < num_parts, "partition plan: node {} is in part {}, outside [0, {})", u, p, num_parts);
    ++plan.offsets[p + 1];
  }
  RunningSum(plan.offsets);
  // Counting sort: stable, so each part keeps ascending original ids.
  plan.local.resize(static_cast<size_t>(n));
  plan.members.resize(static_cast<size_t>(n));
  std::vector<int64_t> next(plan.offsets.begin(), plan.offsets.end() - 1);
  for (int64_t u = 0; u < n; ++u) {
    const int32_t p = plan.part[u];
    const int64_t g = next[p]++;
    plan.members[g] = u;
    plan.local[u] = g - plan.offsets[p];
  }
  return plan;
}

int64_t LocalPart::ToOriginal(int64_t local) const {
  TESSEL_CHECK(local >= 0 && local < num_local(), "part {}: local id {} is outside [0, {})", part, local, num_local());
  return local < num_owned ? owned_ids[static_cast<size_t>(local)] : halo_ids[static_cast<size_t>(local - num_owned)];
}

int64_t LocalPart::ToLocal(int64_t original) const {
  auto owned = owned_ids.Host();
  auto it = std::lower_bound(owned.begin(), owned.end(), original);
  if (it != owned.end() && *it == original) return it - owned.begin();
  auto halo = halo_ids.Host();
  it = std::lower_bound(halo.begin(), halo.end(), original);
  if (it != halo.end() && *it == original) return num_owned + (it - halo.begin());
  return -1;
}

void LocalPart::Validate() const {
  const std::string what = fmt::format("part {}", part);
  TESSEL_CHECK(num_parts >= 1 && part >= 0 && part < num_parts, "{}: part id outside [0, {})", what, num_parts);
  TESSEL_CHECK(static_cast<int64_t>(owned_ids.size()) == num_owned, "{}: {} owned ids for {} owned nodes", what,
               owned_ids.size(), num_owned);
  TESSEL_CHECK(static_cast<int64_t>(halo_ids.size()) == num_halo &&
                   static_cast<int64_t>(halo_owner.size()) == num_halo &&
                   static_cast<int64_t>(halo_remote.size()) == num_halo,
               "{}: halo arrays disagree with the halo size {}", what, num_halo);
  auto check_ids = [&](std::span<const int64_t> ids, std::string_view name) {
    for (size_t i = 0; i < ids.size(); ++i) {
      TESSEL_CHECK(ids[i] >= 0 && ids[i] < dataset_nodes, "{}: {} id {} is outside [0, {})", what, name, ids[i],
                   dataset_nodes);
      TESSEL_CHECK(i == 0 || ids[i - 1] < ids[i], "{}: {} ids must be strictly ascending (entry {})", what, name, i);
    }
  };
  check_ids(owned_ids.Host(), "owned");
  check_ids(halo_ids.Host(), "halo");
  for (int64_t j = 0; j < num_halo; ++j) {
    const int32_t owner = halo_owner[static_cast<size_t>(j)];
    TESSEL_CHECK(owner >= 0 && owner < num_parts && owner != part,
                 "{}: halo node {} has owner part {}; it must be another part in [0, {})", what, j, owner, num_parts);
    TESSEL_CHECK(halo_remote[static_cast<size_t>(j)] >= 0, "{}: halo node {} has a negative remote id", what, j);
    TESSEL_CHECK(ToLocal(halo_ids[static_cast<size_t>(j)]) == num_owned + j, "{}: halo node {} is also owned", what, j);
  }
  TESSEL_CHECK(graph.num_nodes() == num_local(), "{}: local graph has {} rows for {} local nodes", what,
               graph.num_nodes(), num_local());
  graph.Validate(what + " local graph");
  auto p = graph.indptr().Host();
  TESSEL_CHECK(p[num_owned] == graph.num_entries(), "{}: halo rows of the local graph must be empty", what);
  // The halo is exactly the set of remote endpoints: every halo column is used.
  std::vector<uint8_t> used(static_cast<size_t>(num_halo), 0);
  for (int32_t v : graph.indices().Host()) {
    if (v >= num_owned) used[static_cast<size_t>(v - num_owned)] = 1;
  }
  const auto unused = std::find(used.begin(), used.end(), 0);
  TESSEL_CHECK(unused == used.end(), "{}: halo node {} is not an endpoint of any owned row", what,
               unused - used.begin());
  if (!features.empty() || features.num_rows != 0) {
    TESSEL_CHECK(features.num_rows == num_owned, "{}: {} feature rows for {} owned nodes", what, features.num_rows,
                 num_owned);
    features.Validate(what + " features");
  }
  if (!labels.empty()) {
    TESSEL_CHECK(static_cast<int64_t>(labels.size()) == num_owned, "{}: {} labels for {} owned nodes", what,
                 labels.size(), num_owned);
    for (int32_t y : labels.Host()) {
      TESSEL_CHECK(y == datasets::kNoLabel || (y >= 0 && y < num_classes), "{}: label {} outside [0, {})", what, y,
                   num_classes);
    }
  }
  std::vector<uint8_t> seen(static_cast<size_t>(num_owned), 0);
  const std::pair<std::string_view, const Buffer<int64_t>*> lists[] = {
      {"train", &train}, {"val", &val}, {"test", &test}};
  for (const auto& [name, list] : lists) {
    auto ids = list->Host();
    for (size_t i = 0; i < ids.size(); ++i) {
      TESSEL_CHECK(ids[i] >= 0 && ids[i] < num_owned && (i == 0 || ids[i - 1] < ids[i]) && seen[ids[i]] == 0,
                   "{}: {} split entry {} (local id {}) is out of range, out of order or in another split", what, name,
                   i, ids[i]);
      seen[ids[i]] = 1;
    }
  }
}

PartBuilder::PartBuilder(const datasets::NodeDataset& data, const PartitionPlan& plan)
    : data_(data), plan_(plan), halo_slot_(plan.part.size(), -1) {
  TESSEL_CHECK(static_cast<int64_t>(plan.part.size()) == data.num_nodes(),
               "partition plan covers {} nodes but the dataset has {}", plan.part.size(), data.num_nodes());
  built_.assign(static_cast<size_t>(plan.num_parts), 0);
  splits_[0] = SplitByPart(data.train, plan);
  splits_[1] = SplitByPart(data.val, plan);
  splits_[2] = SplitByPart(data.test, plan);
}

LocalPart PartBuilder::Build(int32_t k) {
  TESSEL_CHECK(k >= 0 && k < plan_.num_parts, "part {} is outside [0, {})", k, plan_.num_parts);
  TESSEL_CHECK(built_[k] == 0, "part {} was already built by this PartBuilder", k);
  built_[k] = 1;
  LocalPart out;
  out.part = k;
  out.num_parts = plan_.num_parts;
  out.global_offset = plan_.offsets[k];
  out.num_owned = plan_.num_owned(k);
  out.dataset_nodes = data_.num_nodes();
  const int64_t owned_n = out.num_owned;
  const std::span<const int64_t> owned(plan_.members.data() + out.global_offset, static_cast<size_t>(owned_n));
  out.owned_ids = Buffer<int64_t>::CopyOf(owned);
  const std::span<const int32_t> part = plan_.part;
  const std::span<const int64_t> local = plan_.local;

  std::visit(
      [&](const auto& g) {
        auto ptr = g.indptr().Host();
        auto idx = g.indices().Host();
        // 1. Row lengths, and the halo: remote endpoints, each claimed once through the scratch map (-1 = free,
        //    kClaimed = seen in this part), collected per chunk, then sorted.
        std::vector<int64_t> row_ptr(static_cast<size_t>(owned_n) + 1, 0);
        std::vector<int64_t> halo;
        std::mutex halo_mutex;
        parallel_for_chunks<int64_t>(0, owned_n, kRowGrain, [&](int64_t b, int64_t e_end) {
          std::vector<int64_t> found;
          for (int64_t i = b; i < e_end; ++i) {
            const int64_t u = owned[i];
            row_ptr[i + 1] = ptr[u + 1] - ptr[u];
            for (int64_t e = ptr[u]; e < ptr[u + 1]; ++e) {
              const auto v = static_cast<int64_t>(idx[e]);
              if (part[v] == k) continue;
              std::atomic_ref<int32_t> slot(halo_slot_[v]);
              int32_t expected = -1;
              if (slot.load(std::memory_order_relaxed) == -1 &&
                  slot.compare_exchange_strong(expected, kClaimed, std::memory_order_relaxed)) {
                found.push_back(v);
              }
            }
          }
          const std::lock_guard<std::mutex> lock(halo_mutex);
          halo.insert(halo.end(), found.begin(), found.end());
        });
        RunningSum(row_ptr);
        tbb::parallel_sort(halo.begin(), halo.end());
        out.num_halo = static_cast<int64_t>(halo.size());
        TESSEL_CHECK(out.num_local() <= std::numeric_limits<int32_t>::max(),
                     "part {} has {} owned + {} halo nodes, more than 32-bit local ids hold; use more parts", k,
                     owned_n, out.num_halo);
        std::vector<int32_t> owner(halo.size());
        std::vector<int64_t> remote(halo.size());
        parallel_for<int64_t>(0, out.num_halo, kFlatGrain, [&](int64_t j) {
          const int64_t v = halo[j];
          halo_slot_[v] = static_cast<int32_t>(j);
          owner[j] = part[v];
          remote[j] = local[v];
        });
        // 3. Local rows: columns remapped, sorted by local id, weights carried along.
        const int64_t num_local = out.num_local();
        const bool weighted = g.has_weights();
        auto wsrc = g.weights().Host();
        std::vector<int64_t> lptr(static_cast<size_t>(num_local) + 1, row_ptr[owned_n]);
        std::copy(row_ptr.begin(), row_ptr.end(), lptr.begin());
        std::vector<int32_t> lidx(static_cast<size_t>(row_ptr[owned_n]));
        std::vector<float> lw(weighted ? lidx.size() : 0);
        auto to_local = [&](int64_t v) {
          return static_cast<int32_t>(part[v] == k ? local[v] : owned_n + halo_slot_[v]);
        };
        parallel_for_chunks<int64_t>(0, owned_n, kRowGrain, [&](int64_t b, int64_t e_end) {
          std::vector<std::pair<int32_t, float>> row;
          for (int64_t i = b; i < e_end; ++i) {
            const int64_t u = owned[i];
            const auto out_row = lidx.begin() + row_ptr[i];
            if (!weighted) {
              for (int64_t e = ptr[u]; e < ptr[u + 1]; ++e) out_row[e - ptr[u]] = to_local(idx[e]);
              std::sort(out_row, out_row + (ptr[u + 1] - ptr[u]));
              continue;
            }
            row.clear();
            for (int64_t e = ptr[u]; e < ptr[u + 1]; ++e) row.emplace_back(to_local(idx[e]), wsrc[e]);
            std::sort(row.begin(), row.end());
            for (size_t j = 0; j < row.size(); ++j) {
              out_row[static_cast<ptrdiff_t>(j)] = row[j].first;
              lw[static_cast<size_t>(row_ptr[i]) + j] = row[j].second;
            }
          }
        });
        out.graph = datasets::CsrGraph32(Buffer<int64_t>(std::move(lptr)), Buffer<int32_t>(std::move(lidx)),
                                         Buffer<float>(std::move(lw)));
        parallel_for<int64_t>(0, out.num_halo, kFlatGrain, [&](int64_t j) { halo_slot_[halo[j]] = -1; });
        out.halo_ids = Buffer<int64_t>(std::move(halo));
        out.halo_owner = Buffer<int32_t>(std::move(owner));
        out.halo_remote = Buffer<int64_t>(std::move(remote));
      },
      data_.graph);

  // 4. Owned node data.
  out.features = OwnedFeatures(data_.features, owned);
  if (data_.has_labels()) {
    auto labels = data_.labels.Host();
    std::vector<int32_t> l(static_cast<size_t>(owned_n));
    parallel_for<int64_t>(0, owned_n, kFlatGrain, [&](int64_t i) { l[i] = labels[owned[i]]; });
    out.labels = Buffer<int32_t>(std::move(l));
  }
  out.num_classes = data_.num_classes;
  out.train = Buffer<int64_t>(std::move(splits_[0][k]));
  out.val = Buffer<int64_t>(std::move(splits_[1][k]));
  out.test = Buffer<int64_t>(std::move(splits_[2][k]));
  return out;
}

}  // namespace tessel::partition
