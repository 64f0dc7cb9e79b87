// RingAllreduce: reduce-scatter then allgather around the ring on SendRecvRaw, each segment transfer optionally
// split into chunks. The calls are blocking, so a rank reduces chunk k before it sends chunk k+1; the pipelining
// comes from the ring itself (while rank r adds chunk k, its neighbours already move chunk k+1).
#include "comm/ring_allreduce.h"

#include <algorithm>
#include <vector>

#include "core/error.h"

namespace tessel::comm {
namespace {

// Segment k of n elements over p ranks: n / p elements, the first n % p segments one more.
struct Segments {
  int64_t n = 0;
  int p = 1;
  int64_t Size(int k) const { return n / p + (k < n % p ? 1 : 0); }
  int64_t Offset(int k) const { return static_cast<int64_t>(k) * (n / p) + std::min<int64_t>(k, n % p); }
};

int Mod(int a, int p) { return ((a % p) + p) % p; }

template <typename T>
class Ring {
 public:
  Ring(Communicator& comm, std::span<T> data, std::string_view purpose, const RingOptions& opt)
      : comm_(comm),
        data_(data),
        purpose_(purpose),
        tag_(opt.tag),
        p_(comm.Size()),
        next_(Mod(comm.Rank() + 1, comm.Size())),
        prev_(Mod(comm.Rank() - 1, comm.Size())),
        seg_{static_cast<int64_t>(data.size()), comm.Size()} {
    const int64_t largest = seg_.Size(0);
    chunk_ = opt.chunk_bytes == 0 ? largest : std::max<int64_t>(1, opt.chunk_bytes / static_cast<int64_t>(sizeof(T)));
    chunk_ = std::max<int64_t>(1, std::min(chunk_, largest));
  }

  Status Run() {
    const int r = comm_.Rank();
    incoming_.resize(static_cast<size_t>(chunk_));  // the only extra memory: one chunk
    for (int s = 0; s + 1 < p_; ++s) {              // reduce-scatter
      Status st = Step(Mod(r - s, p_), Mod(r - s - 1, p_), /*reduce=*/true);
      if (!st.ok()) return st;
    }
    for (int s = 0; s + 1 < p_; ++s) {  // allgather: rank r starts with its complete segment r + 1
      Status st = Step(Mod(r + 1 - s, p_), Mod(r - s, p_), /*reduce=*/false);
      if (!st.ok()) return st;
    }
    return Status::Ok();
  }

 private:
  // Sends segment `out` to the next rank and receives segment `in` from the previous one, chunk by chunk; adds the
  // received chunks into data (reduce) or stores them (allgather). The neighbour that receives `out` splits it the
  // same way, so each chunk is matched by exactly one receive, also when `out` and `in` differ by one element and
  // one of them has a chunk more (that chunk is a plain send or receive).
  Status Step(int out, int in, bool reduce) {
    const int64_t out_n = seg_.Size(out);
    const int64_t in_n = seg_.Size(in);
    T* out_p = data_.data() + seg_.Offset(out);
    T* in_p = data_.data() + seg_.Offset(in);
    const int64_t element = static_cast<int64_t>(sizeof(T));
    for (int64_t at = 0; at < std::max(out_n, in_n); at += chunk_) {
      const int64_t send_n = std::clamp<int64_t>(out_n - at, 0, chunk_);
      const int64_t recv_n = std::clamp<int64_t>(in_n - at, 0, chunk_);
      T* dst = reduce ? incoming_.data() : in_p + at;
      Status st;
      if (send_n > 0 && recv_n > 0) {
        st = comm_.SendRecvRaw(out_p + at, send_n * element, next_, dst, recv_n * element, prev_, tag_, purpose_);
      } else if (send_n > 0) {
        st = comm_.SendRaw(out_p + at, send_n * element, next_, tag_, purpose_);
      } else {
        st = comm_.RecvRaw(dst, recv_n * element, prev_, tag_);
      }
      if (!st.ok()) return st;
      if (reduce) {
        T* acc = in_p + at;
        for (int64_t i = 0; i < recv_n; ++i) acc[i] += dst[i];  // local + (sum of the ranks before, in ring order)
      }
    }
    return Status::Ok();
  }

  Communicator& comm_;
  std::span<T> data_;
  std::string_view purpose_;
  int tag_;
  int p_;
  int next_;
  int prev_;
  Segments seg_;
  int64_t chunk_ = 1;
  std::vector<T> incoming_;
};

template <typename T>
Status RingAllreduceImpl(Communicator& comm, std::span<T> data, std::string_view purpose, const RingOptions& opt) {
  TESSEL_CHECK(opt.chunk_bytes >= 0, "comm: RingAllreduce chunk_bytes {} is negative", opt.chunk_bytes);
  TESSEL_CHECK(opt.tag >= 0 && opt.tag <= Communicator::kMaxTag, "comm: RingAllreduce tag {} is outside 0..{}", opt.tag,
               Communicator::kMaxTag);
  if (comm.Size() == 1 || data.empty()) return Status::Ok();
  return Ring<T>(comm, data, purpose, opt).Run();
}

}  // namespace

Status RingAllreduce(Communicator& comm, std::span<float> data, std::string_view purpose, const RingOptions& opt) {
  return RingAllreduceImpl(comm, data, purpose, opt);
}

Status RingAllreduce(Communicator& comm, std::span<double> data, std::string_view purpose, const RingOptions& opt) {
  return RingAllreduceImpl(comm, data, purpose, opt);
}

int64_t RingElementsSent(int64_t n, int size, int rank) {
  TESSEL_CHECK(size >= 1 && rank >= 0 && rank < size && n >= 0, "comm: RingElementsSent({}, {}, {}) is invalid", n,
               size, rank);
  if (size == 1) return 0;
  const Segments seg{n, size};
  return (n - seg.Size(Mod(rank + 1, size))) + (n - seg.Size(Mod(rank + 2, size)));
}

}  // namespace tessel::comm
