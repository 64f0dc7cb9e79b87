// The reduction kernel shared by the local, thread and MPI backends (the MPI backend uses it for the loc ops).
// One typed loop per (type, op); the loc ops break ties towards the smaller index.
#include "comm/reduce.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <tuple>
#include <type_traits>

#include "comm/half.h"
#include "core/error.h"
#include "core/name_table.h"

namespace tessel::comm {
namespace {

template <typename T>
void ReduceScalar(T* inout, const T* in, int64_t n, ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
      for (int64_t i = 0; i < n; ++i) inout[i] = static_cast<T>(inout[i] + in[i]);
      return;
    case ReduceOp::kMin:
      for (int64_t i = 0; i < n; ++i) inout[i] = std::min(inout[i], in[i]);
      return;
    case ReduceOp::kMax:
      for (int64_t i = 0; i < n; ++i) inout[i] = std::max(inout[i], in[i]);
      return;
    default:
      break;
  }
}

template <typename T>
void ReduceLoc(ValueIndex<T>* inout, const ValueIndex<T>* in, int64_t n, bool max) {
  for (int64_t i = 0; i < n; ++i) {
    const ValueIndex<T>& a = inout[i];
    const ValueIndex<T>& b = in[i];
    const bool b_better = max ? (b.value > a.value) : (b.value < a.value);
    if (b_better || (b.value == a.value && b.index < a.index)) inout[i] = b;
  }
}

// 16-bit floats: each operation in float, rounded back (what an fp16 allreduce on the wire computes).
template <typename T, float (*ToFloat)(uint16_t), uint16_t (*FromFloat)(float)>
void Reduce16(T* inout, const T* in, int64_t n, ReduceOp op) {
  for (int64_t i = 0; i < n; ++i) {
    const float a = ToFloat(inout[i].bits);
    const float b = ToFloat(in[i].bits);
    const float r = op == ReduceOp::kSum ? a + b : op == ReduceOp::kMin ? std::min(a, b) : std::max(a, b);
    inout[i].bits = FromFloat(r);
  }
}

// DataType's and ReduceOp's names, indexed by their values.
constexpr std::array<std::string_view, 12> kDataTypeNames{
    "int8",    "uint8",   "int32",   "uint32",           "int64",
    "uint64",  "float32", "float64", "(float32, index)", "(float64, index)",
    "float16", "bfloat16"};
static_assert(kDataTypeNames.size() == std::tuple_size_v<DataTypeElements>);
constexpr std::array<std::string_view, 5> kReduceOpNames{"sum", "min", "max", "min-loc", "max-loc"};
static_assert(kReduceOpNames.size() == static_cast<size_t>(ReduceOp::kMaxLoc) + 1);

// fn(std::type_identity<T>{}) for T the element type of `type` (DataTypeElements), its result returned.
template <typename Fn>
auto VisitDataType(DataType type, Fn&& fn) {
  const auto i = static_cast<size_t>(type);
  if (i >= std::tuple_size_v<DataTypeElements>) throw Error("comm: unknown DataType");
  return VisitTypeAt<DataTypeElements>(i, fn);
}

}  // namespace

size_t DataTypeSize(DataType type) {
  return VisitDataType(type, []<typename T>(std::type_identity<T>) { return sizeof(T); });
}

std::string_view DataTypeName(DataType type) { return NameAt(kDataTypeNames, type, "unknown"); }
std::string_view ReduceOpName(ReduceOp op) { return NameAt(kReduceOpNames, op, "unknown"); }

bool IsIndexType(DataType type) { return type == DataType::kFloat32Index || type == DataType::kFloat64Index; }

bool OpFits(DataType type, ReduceOp op) {
  const bool loc_op = op == ReduceOp::kMinLoc || op == ReduceOp::kMaxLoc;
  return loc_op == IsIndexType(type);
}

void ReduceInto(void* inout, const void* in, int64_t count, DataType type, ReduceOp op) {
  TESSEL_CHECK(OpFits(type, op),
               "comm: reduction {} does not apply to {} (use min-loc/max-loc with ValueIndex, "
               "sum/min/max with scalars)",
               ReduceOpName(op), DataTypeName(type));
  if (count <= 0) return;
  VisitDataType(type, [&]<typename T>(std::type_identity<T>) {
    auto* a = static_cast<T*>(inout);
    const auto* b = static_cast<const T*>(in);
    if constexpr (std::is_same_v<T, Half>) {
      Reduce16<Half, HalfToFloat, FloatToHalf>(a, b, count, op);
    } else if constexpr (std::is_same_v<T, BFloat16>) {
      Reduce16<BFloat16, BFloat16ToFloat, FloatToBFloat16>(a, b, count, op);
    } else if constexpr (std::is_same_v<T, ValueIndex<float>> || std::is_same_v<T, ValueIndex<double>>) {
      ReduceLoc(a, b, count, op == ReduceOp::kMaxLoc);
    } else {
      ReduceScalar(a, b, count, op);
    }
  });
}

}  // namespace tessel::comm
