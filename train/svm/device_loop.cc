// The batched C-SVC solver's device loop (train/svm/device_loop.h): state allocated once, per round a device top-k
// selection, rows from a device row cache, the subproblem and the updates on the device, two small downloads and
// one small upload. Mirrors the host batched solver (batch_solver.cc) decision for decision.
#include "train/svm/device_loop.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <limits>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "core/device.h"
#include "core/error.h"
#include "core/interrupt.h"
#include "core/log.h"

namespace tessel::train::svm::devloop {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// A device array from the pool, freed with its owner.
template <typename T>
class DeviceArray {
 public:
  DeviceArray() = default;
  explicit DeviceArray(int64_t n) : n_(std::max<int64_t>(n, 1)) {
    ptr_ = static_cast<T*>(device::Malloc(static_cast<size_t>(n_) * sizeof(T)));
  }
  ~DeviceArray() { device::Free(ptr_); }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  DeviceArray(DeviceArray&& o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)), n_(std::exchange(o.n_, 0)) {}
  DeviceArray& operator=(DeviceArray&& o) noexcept {
    std::swap(ptr_, o.ptr_);
    std::swap(n_, o.n_);
    return *this;
  }
  T* get() const { return ptr_; }
  void Upload(const T* host, int64_t n) {
    if (n > 0) device::CopyToDevice(ptr_, host, static_cast<size_t>(n) * sizeof(T));
  }
  void Download(T* host, int64_t n) const {
    if (n > 0) device::CopyToHost(host, ptr_, static_cast<size_t>(n) * sizeof(T));
  }

 private:
  T* ptr_ = nullptr;
  int64_t n_ = 0;
};

class Loop {
 public:
  Loop(LoopDevice& dev, const LoopProblem& p);
  LoopResult Run();

 private:
  void Allocate(int64_t slots);  // every device array of the solve
  double Select();
  void Round(int64_t limit);
  void SetActive(int64_t n);
  void SetAllActive();
  void Reconstruct();
  void DoShrinking();
  int64_t CountOnHost();
  void Progress(int64_t steps, bool force);

  LoopDevice& dev_;
  const LoopProblem& p_;
  int64_t l_;
  int64_t q_;
  EliminationSchedule schedule_;
  int64_t max_iter_;
  int64_t inner_limit_;
  RowCache cache_;

  // Per sample.
  DeviceArray<int32_t> rows_;
  DeviceArray<int8_t> y_;
  DeviceArray<double> qd_, alpha_, g_, g_bar_;
  DeviceArray<int8_t> st_;
  DeviceArray<uint8_t> chosen_;
  // Per active (or eliminated) position.
  DeviceArray<int32_t> act_, keep_, pos_, act_rows_, inact_, inact_rows_, free_, free_rows_, remap_;
  DeviceArray<int8_t> act_y_, inact_y_, free_y_;
  // Selection.
  DeviceArray<double> up_key_, low_key_;
  DeviceArray<int32_t> up_id_, low_id_;
  DeviceArray<std::byte> topk_scratch_, compact_scratch_;
  DeviceArray<std::byte> select_;  // SelectInfo
  DeviceArray<int32_t> ws_pos_, ws_rows_, miss_rows_;
  DeviceArray<int8_t> ws_y_, miss_y_;
  // The round.
  DeviceArray<int32_t> upload_;  // [slot per entry | missing entries | their slots], and the used slots
  DeviceArray<double> new_alpha_, delta_, coef_, changed_coef_;
  DeviceArray<int32_t> changed_rows_;
  DeviceArray<int8_t> changed_y_;
  DeviceArray<std::byte> round_;  // RoundInfo
  DeviceArray<float> arena_;      // cache slots x l
  DeviceArray<float> scratch_;    // q x l
  DeviceArray<int64_t> count_;
  DeviceArray<double> ext_;

  std::vector<std::byte> h_select_, h_round_;
  std::vector<int32_t> h_upload_;
  std::vector<int32_t> missing_;
  int64_t n_act_ = 0;
  int64_t n_inact_ = 0;
  bool unshrink_ = false;
  double last_gap_ = kInf;
  LoopResult r_;
  std::chrono::steady_clock::time_point last_log_ = std::chrono::steady_clock::now();
};

const SelectInfo& AsSelect(const std::vector<std::byte>& b) { return *reinterpret_cast<const SelectInfo*>(b.data()); }
const RoundInfo& AsRound(const std::vector<std::byte>& b) { return *reinterpret_cast<const RoundInfo*>(b.data()); }

int64_t CacheSlots(const LoopProblem& p) {
  const int64_t row_bytes = static_cast<int64_t>(sizeof(float)) * p.l;
  return std::clamp<int64_t>(p.cache_bytes / std::max<int64_t>(row_bytes, 1), p.working_set,
                             std::max<int64_t>(p.l, p.working_set));
}

Loop::Loop(LoopDevice& dev, const LoopProblem& p)
    : dev_(dev),
      p_(p),
      l_(p.l),
      q_(p.working_set),
      schedule_(p.shrinking, p.l, p.eps),
      max_iter_(p.max_iterations < 0 ? std::max<int64_t>(10000000, 100 * p.l) : p.max_iterations),
      inner_limit_(p.inner_limit < 0 ? int64_t{10} * p.working_set : p.inner_limit),
      cache_(p.l, CacheSlots(p)) {
  TESSEL_CHECK(q_ >= 2 && q_ <= kMaxQ && q_ % 2 == 0, "device SVM solver: working set {} must be even, 2..{}", q_,
               kMaxQ);
  TESSEL_CHECK(l_ >= 1 && l_ < (int64_t{1} << 31), "device SVM solver: {} samples (1 .. 2^31 - 1)", l_);
  const int64_t slots = cache_.slots();
  TESSEL_CHECK(slots <= (int64_t{1} << 40) / l_, "device SVM solver: a row cache of {} rows of {} samples is too large",
               slots, l_);
  try {
    Allocate(slots);
  } catch (const Error& e) {
    // The large arrays: the row cache (slots x l floats), the rows' scratch (q x l floats) and the kernel's work
    // (q x l doubles), then a few arrays per sample (about 64 bytes) and the top-k's scratch (24).
    const double mb = (4.0 * static_cast<double>(slots + q_) + 8.0 * static_cast<double>(q_) + 88.0) *
                      static_cast<double>(l_) / (1 << 20);
    throw Error(fmt::format(
        "device SVM solver: about {:.0f} MB of device memory for {} samples (a row cache of {} rows, work for q = {} "
        "rows) could not be allocated; lower --working-set or --cache, or use the CPU: {}",
        mb, l_, slots, q_, e.what()));
  }
  h_select_.resize(SelectInfo::Bytes(q_));
  h_round_.resize(RoundInfo::Bytes(q_));
  h_upload_.resize(static_cast<size_t>(std::max<int64_t>(3 * q_, slots)));
  log::Debug("svm device: {} samples, q {}, row cache {} slots ({:.1f} MB)", l_, q_, slots,
             4.0 * static_cast<double>(slots * l_) / (1 << 20));

  // The initial state: one upload each.
  rows_.Upload(p.sample_rows, l_);
  y_.Upload(p.y, l_);
  alpha_.Upload(std::vector<double>(static_cast<size_t>(l_), 0.0).data(), l_);
  g_.Upload(std::vector<double>(static_cast<size_t>(l_), -1.0).data(), l_);
  g_bar_.Upload(std::vector<double>(static_cast<size_t>(l_), 0.0).data(), l_);
  st_.Upload(std::vector<int8_t>(static_cast<size_t>(l_), batch::kLower).data(), l_);
  chosen_.Upload(std::vector<uint8_t>(static_cast<size_t>(l_), 0).data(), l_);
  dev_.Diagonal(rows_.get(), l_, qd_.get());
  SetAllActive();
  r_.min_active = l_;
  r_.cache_slots = slots;
}

void Loop::Allocate(int64_t slots) {
  rows_ = DeviceArray<int32_t>(l_);
  y_ = DeviceArray<int8_t>(l_);
  qd_ = DeviceArray<double>(l_);
  alpha_ = DeviceArray<double>(l_);
  g_ = DeviceArray<double>(l_);
  g_bar_ = DeviceArray<double>(l_);
  st_ = DeviceArray<int8_t>(l_);
  chosen_ = DeviceArray<uint8_t>(l_);
  for (auto* a : {&act_, &keep_, &pos_, &act_rows_, &inact_, &inact_rows_, &free_, &free_rows_, &remap_})
    *a = DeviceArray<int32_t>(l_);
  for (auto* a : {&act_y_, &inact_y_, &free_y_}) *a = DeviceArray<int8_t>(l_);
  up_key_ = DeviceArray<double>(q_);
  low_key_ = DeviceArray<double>(q_);
  up_id_ = DeviceArray<int32_t>(q_);
  low_id_ = DeviceArray<int32_t>(q_);
  topk_scratch_ = DeviceArray<std::byte>(static_cast<int64_t>(dev_.TopKScratchBytes(l_, q_)));
  compact_scratch_ = DeviceArray<std::byte>(static_cast<int64_t>(dev_.CompactScratchBytes(l_)));
  select_ = DeviceArray<std::byte>(static_cast<int64_t>(SelectInfo::Bytes(q_)));
  round_ = DeviceArray<std::byte>(static_cast<int64_t>(RoundInfo::Bytes(q_)));
  for (auto* a : {&ws_pos_, &ws_rows_, &miss_rows_, &changed_rows_}) *a = DeviceArray<int32_t>(q_);
  for (auto* a : {&ws_y_, &miss_y_, &changed_y_}) *a = DeviceArray<int8_t>(q_);
  for (auto* a : {&new_alpha_, &delta_, &coef_, &changed_coef_}) *a = DeviceArray<double>(q_);
  upload_ = DeviceArray<int32_t>(std::max<int64_t>(3 * q_, slots));
  arena_ = DeviceArray<float>(slots * l_);
  scratch_ = DeviceArray<float>(q_ * l_);
  count_ = DeviceArray<int64_t>(1);
  ext_ = DeviceArray<double>(2);
  dev_.ReserveRows(q_, l_);
}

int64_t Loop::CountOnHost() {
  int64_t n = 0;
  count_.Download(&n, 1);
  return n;
}

void Loop::SetActive(int64_t n) {
  n_act_ = n;
  dev_.SetActive(l_, n, act_.get(), rows_.get(), y_.get(), pos_.get(), act_rows_.get(), act_y_.get());
  dev_.Compact(LoopDevice::Keep::kInactive, l_, nullptr, y_.get(), st_.get(), g_.get(), pos_.get(), 0, 0, inact_.get(),
               count_.get(), compact_scratch_.get());
  n_inact_ = CountOnHost();
  TESSEL_CHECK(n_inact_ + n_act_ == l_, "device SVM solver: {} active and {} eliminated samples of {}", n_act_,
               n_inact_, l_);
  dev_.GatherI32(n_inact_, inact_.get(), rows_.get(), inact_rows_.get());
  dev_.GatherI8(n_inact_, inact_.get(), y_.get(), inact_y_.get());
  dev_.SetColumns(0, act_rows_.get(), n_act_);
  dev_.SetColumns(1, inact_rows_.get(), n_inact_);
}

void Loop::SetAllActive() {
  dev_.Iota(l_, act_.get());
  SetActive(l_);
  cache_.Clear();  // the cached rows lack the restored columns
}

// The host solver's Select: the q best of each side, the working set formed on the device, one download.
double Loop::Select() {
  ++r_.selections;
  void* scratch = topk_scratch_.get();
  dev_.TopK(0, n_act_, act_.get(), y_.get(), st_.get(), g_.get(), q_, up_key_.get(), up_id_.get(), scratch);
  dev_.TopK(1, n_act_, act_.get(), y_.get(), st_.get(), g_.get(), q_, low_key_.get(), low_id_.get(), scratch);
  auto* info = reinterpret_cast<SelectInfo*>(select_.get());
  dev_.FormWorkingSet(up_key_.get(), up_id_.get(), low_key_.get(), low_id_.get(), q_, q_, chosen_.get(), pos_.get(),
                      rows_.get(), y_.get(), info, ws_pos_.get(), ws_rows_.get(), ws_y_.get());
  select_.Download(h_select_.data(), static_cast<int64_t>(h_select_.size()));
  return AsSelect(h_select_).gap;
}

void Loop::Round(int64_t limit) {
  const SelectInfo& sel = AsSelect(h_select_);
  const int64_t m = sel.m;
  auto* d_info = reinterpret_cast<SelectInfo*>(select_.get());
  const int32_t* ws = d_info->ws;  // the device copy of the ids
  // Slots: hits keep theirs, misses take the least recently used; one upload of [slots | missing | their slots].
  cache_.Assign(sel.ws, m, h_upload_.data(), &missing_);
  const auto nm = static_cast<int64_t>(missing_.size());
  for (int64_t u = 0; u < nm; ++u) {
    h_upload_[static_cast<size_t>(m + u)] = missing_[static_cast<size_t>(u)];
    h_upload_[static_cast<size_t>(m + nm + u)] = h_upload_[static_cast<size_t>(missing_[static_cast<size_t>(u)])];
  }
  upload_.Upload(h_upload_.data(), m + 2 * nm);
  const int32_t* slot = upload_.get();
  if (nm > 0) {
    dev_.GatherI32(nm, slot + m, ws_rows_.get(), miss_rows_.get());
    dev_.GatherI8(nm, slot + m, ws_y_.get(), miss_y_.get());
    dev_.QRows(0, miss_rows_.get(), miss_y_.get(), nm, act_y_.get(), scratch_.get());
    dev_.StoreRows(nm, n_act_, scratch_.get(), slot + m + nm, arena_.get(), l_);
  }
  auto* d_round = reinterpret_cast<RoundInfo*>(round_.get());
  dev_.LocalSmo(m, arena_.get(), l_, slot, ws, ws_pos_.get(), y_.get(), qd_.get(), alpha_.get(), g_.get(), p_.cp, p_.cn,
                p_.eps, p_.inner_factor, limit, new_alpha_.get(), d_round);
  const bool track = schedule_.eliminates();
  dev_.ApplyRound(m, ws, ws_rows_.get(), ws_y_.get(), new_alpha_.get(), p_.cp, p_.cn, track, y_.get(), alpha_.get(),
                  st_.get(), delta_.get(), coef_.get(), d_round, changed_rows_.get(), changed_y_.get(),
                  changed_coef_.get());
  dev_.UpdateActive(n_act_, m, arena_.get(), l_, slot, delta_.get(), coef_.get(), track, act_.get(), g_.get(),
                    g_bar_.get());
  round_.Download(h_round_.data(), static_cast<int64_t>(h_round_.size()));
  const RoundInfo& info = AsRound(h_round_);
  r_.bound_changes += info.changed;
  if (info.changed > 0 && n_inact_ > 0) {
    // G_bar of the eliminated samples: the changed entries' rows over them, in entry order.
    dev_.QRows(1, changed_rows_.get(), changed_y_.get(), info.changed, inact_y_.get(), scratch_.get());
    dev_.AddRows(n_inact_, info.changed, scratch_.get(), changed_coef_.get(), nullptr, inact_.get(), g_bar_.get());
  }
}

// G of the eliminated samples from G_bar plus the free samples' rows, in chunks of q in sample order.
void Loop::Reconstruct() {
  if (n_inact_ == 0) return;
  ++r_.reconstructions;
  dev_.ResetFromGBar(n_inact_, inact_.get(), g_bar_.get(), g_.get());
  dev_.Compact(LoopDevice::Keep::kFree, n_act_, act_.get(), y_.get(), st_.get(), g_.get(), pos_.get(), 0, 0,
               free_.get(), count_.get(), compact_scratch_.get());
  const int64_t nf = CountOnHost();
  dev_.GatherI32(nf, free_.get(), rows_.get(), free_rows_.get());
  dev_.GatherI8(nf, free_.get(), y_.get(), free_y_.get());
  for (int64_t b = 0; b < nf; b += q_) {
    const int64_t m = std::min(q_, nf - b);
    dev_.QRows(1, free_rows_.get() + b, free_y_.get() + b, m, inact_y_.get(), scratch_.get());
    dev_.AddRows(n_inact_, m, scratch_.get(), alpha_.get(), free_.get() + b, inact_.get(), g_.get());
  }
}

void Loop::DoShrinking() {
  ++r_.shrink_checks;
  dev_.Extremes(n_act_, act_.get(), y_.get(), st_.get(), g_.get(), ext_.get());
  double ext[2] = {0, 0};
  ext_.Download(ext, 2);
  if (schedule_.Unshrink(unshrink_, ext[0] + ext[1])) {
    unshrink_ = true;
    if (n_inact_ > 0) {  // with none eliminated, the active set is already every sample (and the cache stays)
      Reconstruct();
      SetAllActive();
    }
  }
  dev_.Compact(LoopDevice::Keep::kNotShrunk, n_act_, act_.get(), y_.get(), st_.get(), g_.get(), pos_.get(), ext[0],
               ext[1], keep_.get(), count_.get(), compact_scratch_.get());
  const int64_t n = CountOnHost();
  if (n != n_act_) {
    ++r_.active_changes;
    // The cached rows move to the new columns: entry k of a row is the old position of the new k-th sample.
    dev_.GatherI32(n, keep_.get(), pos_.get(), remap_.get());
    const std::vector<int32_t> used = cache_.Used();
    if (!used.empty()) {
      upload_.Upload(used.data(), static_cast<int64_t>(used.size()));
      for (size_t b = 0; b < used.size(); b += static_cast<size_t>(q_)) {
        const auto m = static_cast<int64_t>(std::min(used.size() - b, static_cast<size_t>(q_)));
        dev_.CompactRows(m, upload_.get() + b, arena_.get(), l_, remap_.get(), n, scratch_.get());
      }
    }
    std::swap(act_, keep_);
    SetActive(n);
  }
  r_.min_active = std::min(r_.min_active, n_act_);
}

void Loop::Progress(int64_t steps, bool force) {
  const auto now = std::chrono::steady_clock::now();
  if (!force && now - last_log_ < std::chrono::seconds(2)) return;
  last_log_ = now;
  log::Info("svm device: {} rounds, {} steps, gap {:.6g} (tolerance {:g}), active {}/{}, row cache {} hits {} misses",
            r_.rounds, steps, last_gap_, p_.eps, n_act_, l_, cache_.hits(), cache_.misses());
}

LoopResult Loop::Run() {
  const device::Counters before = device::ReadCounters();
  int64_t since = 0;  // iterations since the last check point of the elimination schedule
  int64_t steps = 0;
  bool hit_limit = false;
  while (true) {
    if (steps >= max_iter_) {
      hit_limit = true;
      break;
    }
    if (schedule_.Due(since)) {
      since = 0;
      if (schedule_.CheckNow(last_gap_)) DoShrinking();
    }
    last_gap_ = Select();
    if (last_gap_ < p_.eps) {
      if (n_inact_ == 0) break;
      Reconstruct();
      SetAllActive();
      last_gap_ = Select();
      if (last_gap_ < p_.eps) break;
      since = schedule_.period();  // eliminate again at the next round
    }
    ++r_.rounds;
    interrupt::Check("svm");
    Round(std::min(inner_limit_, max_iter_ - steps));
    const int64_t taken = AsRound(h_round_).steps;
    steps += taken;
    since += taken;
    Progress(steps, false);
  }
  if (hit_limit) {
    if (n_inact_ > 0) {
      Reconstruct();
      SetAllActive();
    }
    log::Warn("svm device: reached the iteration limit ({}) before the gap fell under eps; the model may be inaccurate",
              max_iter_);
  }
  Progress(steps, true);
  r_.loop = device::ReadCounters() - before;
  r_.a.resize(static_cast<size_t>(l_));
  r_.g.resize(static_cast<size_t>(l_));
  r_.status.resize(static_cast<size_t>(l_));
  alpha_.Download(r_.a.data(), l_);
  g_.Download(r_.g.data(), l_);
  st_.Download(r_.status.data(), l_);
  r_.gap = last_gap_;
  r_.iterations = steps;
  r_.kernel_evaluations = dev_.Evaluations();
  r_.cache_hits = cache_.hits();
  r_.cache_misses = cache_.misses();
  r_.hit_iteration_limit = hit_limit;
  return std::move(r_);
}

}  // namespace

LoopResult RunDeviceLoop(LoopDevice& dev, const LoopProblem& problem) {
  TESSEL_CHECK(problem.sample_rows != nullptr && problem.y != nullptr, "device SVM solver: no samples");
  Loop loop(dev, problem);
  return loop.Run();
}

// ---- RowCache

RowCache::RowCache(int64_t l, int64_t slots)
    : slot_of_(static_cast<size_t>(l), -1),
      sample_(static_cast<size_t>(slots), -1),
      prev_(static_cast<size_t>(slots), -1),
      next_(static_cast<size_t>(slots), -1),
      stamp_(static_cast<size_t>(slots), -1) {
  TESSEL_CHECK(slots >= 1 && slots < (int64_t{1} << 31), "row cache: {} slots", slots);
  Clear();
}

void RowCache::Clear() {
  std::fill(slot_of_.begin(), slot_of_.end(), -1);
  std::fill(sample_.begin(), sample_.end(), -1);
  first_ = last_ = -1;
  // Every slot free, in order, on the LRU list (free slots are the least recent).
  for (int32_t s = 0; s < static_cast<int32_t>(sample_.size()); ++s) {
    prev_[static_cast<size_t>(s)] = next_[static_cast<size_t>(s)] = -1;
    PushBack(s);
  }
}

void RowCache::Unlink(int32_t s) {
  const auto i = static_cast<size_t>(s);
  if (prev_[i] >= 0)
    next_[static_cast<size_t>(prev_[i])] = next_[i];
  else
    first_ = next_[i];
  if (next_[i] >= 0)
    prev_[static_cast<size_t>(next_[i])] = prev_[i];
  else
    last_ = prev_[i];
  prev_[i] = next_[i] = -1;
}

void RowCache::PushBack(int32_t s) {
  const auto i = static_cast<size_t>(s);
  prev_[i] = last_;
  next_[i] = -1;
  if (last_ >= 0)
    next_[static_cast<size_t>(last_)] = s;
  else
    first_ = s;
  last_ = s;
}

void RowCache::Assign(const int32_t* ws, int64_t m, int32_t* slot, std::vector<int32_t>* missing) {
  TESSEL_CHECK(m <= slots(), "row cache: a working set of {} rows in {} slots", m, slots());
  ++round_;
  missing->clear();
  // Hits first, so none of them is evicted by a miss of this round.
  for (int64_t t = 0; t < m; ++t) {
    const int32_t s = slot_of_[static_cast<size_t>(ws[t])];
    slot[t] = s;
    if (s < 0) continue;
    ++hits_;
    stamp_[static_cast<size_t>(s)] = round_;
    Unlink(s);
    PushBack(s);
  }
  for (int64_t t = 0; t < m; ++t) {
    if (slot[t] >= 0) continue;
    ++misses_;
    const int32_t s = first_;  // least recent; never one stamped this round (those are at the back)
    TESSEL_CHECK(s >= 0 && stamp_[static_cast<size_t>(s)] != round_, "row cache: no slot to evict");
    if (sample_[static_cast<size_t>(s)] >= 0) slot_of_[static_cast<size_t>(sample_[static_cast<size_t>(s)])] = -1;
    sample_[static_cast<size_t>(s)] = ws[t];
    slot_of_[static_cast<size_t>(ws[t])] = s;
    stamp_[static_cast<size_t>(s)] = round_;
    Unlink(s);
    PushBack(s);
    slot[t] = s;
    missing->push_back(static_cast<int32_t>(t));
  }
}

std::vector<int32_t> RowCache::Used() const {
  std::vector<int32_t> used;
  for (int32_t s = 0; s < static_cast<int32_t>(sample_.size()); ++s)
    if (sample_[static_cast<size_t>(s)] >= 0) used.push_back(s);
  return used;
}

}  // namespace tessel::train::svm::devloop
