// ArrayWriter/ArrayReader: every dtype round-trips byte for byte through a file and its manifest entry;
// dtype, count, size, checksum and file-name problems are reported naming the array and the file.
#include "datasets/array_store.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <limits>

#include "core/checksum.h"
#include "core/error.h"
#include "core/rng.h"

namespace tessel::datasets {
namespace {
namespace fs = std::filesystem;
using ::testing::HasSubstr;

// A folder name per test and process (parameterised test names hold '/'; builds may run the tests at once).
fs::path UniqueTempDir(const std::string& prefix) {
  std::string name = prefix + ::testing::UnitTest::GetInstance()->current_test_info()->name();
  std::replace(name.begin(), name.end(), '/', '_');
  return fs::temp_directory_path() / (name + "." + std::to_string(::getpid()));
}

class ArrayStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = UniqueTempDir("tessel_arrays_");
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  // The writer's entries as the reader gets them back from a parsed manifest.
  ArrayReader Reader(const ArrayWriter& w) const {
    return ArrayReader(dir_, nlohmann::json::parse(w.entries().dump()), "rebuild it");
  }
  fs::path dir_;
};

template <typename T>
void ExpectRoundTrip(const ArrayReader& r, const std::string& name, const std::vector<T>& want) {
  const Buffer<T> got = r.Map<T>(name, /*verify=*/true, static_cast<int64_t>(want.size()));
  ASSERT_EQ(got.size(), want.size()) << name;
  EXPECT_EQ(std::memcmp(got.Host().data(), want.data(), want.size() * sizeof(T)), 0) << name;
}

TEST_F(ArrayStoreTest, EveryDtypeRoundTripsWithItsEntry) {
  Rng rng(7);
  std::vector<int32_t> i32 = {0, -1, std::numeric_limits<int32_t>::max(), std::numeric_limits<int32_t>::min()};
  std::vector<int64_t> i64 = {int64_t{1} << 40, -5, 0};
  std::vector<float> f32(1000);
  std::vector<double> f64(333);
  std::vector<uint8_t> u8(77);
  for (auto& x : f32) x = static_cast<float>(rng.Normal());
  for (auto& x : f64) x = rng.Normal();
  for (auto& x : u8) x = static_cast<uint8_t>(rng.UniformInt(256));
  ArrayWriter w(dir_);
  w.Add<int32_t>("a_i32", i32);
  w.Add<int64_t>("a_i64", i64);
  w.Add<float>("a_f32", f32);
  w.Add<double>("a_f64", f64);
  w.Add<uint8_t>("a_u8", u8);
  w.Add<int64_t>("empty", std::span<const int64_t>());
  EXPECT_THROW(w.Add<int32_t>("a_i32", i32), Error);  // names are unique

  const auto& e = w.entries();
  EXPECT_EQ(e["a_f64"]["dtype"].get<std::string>(), "float64");
  EXPECT_EQ(e["a_f64"]["count"], 333);
  EXPECT_EQ(e["a_f64"]["bytes"], 333 * 8);
  EXPECT_EQ(e["a_f64"]["file"].get<std::string>(), "a_f64.bin");
  EXPECT_EQ(e["a_u8"]["xxh3"], ChecksumHex<uint8_t>(u8));
  EXPECT_EQ(fs::file_size(dir_ / "a_f32.bin"), 4000U);

  const ArrayReader r = Reader(w);
  ExpectRoundTrip(r, "a_i32", i32);
  ExpectRoundTrip(r, "a_i64", i64);
  ExpectRoundTrip(r, "a_f32", f32);
  ExpectRoundTrip(r, "a_f64", f64);
  ExpectRoundTrip(r, "a_u8", u8);
  EXPECT_TRUE(r.Map<int64_t>("empty", true, 0).empty());
  for (const ArrayCheck& c : r.CheckAll()) EXPECT_TRUE(c.ok) << c.name << ": " << c.detail;
  EXPECT_EQ(r.Names().size(), 6U);
}

TEST_F(ArrayStoreTest, MapIsZeroCopyFromThePageAlignedMapping) {
  std::vector<int64_t> v(5000, 3);
  ArrayWriter w(dir_);
  w.Add<int64_t>("v", v);
  const Buffer<int64_t> b = Reader(w).Map<int64_t>("v", true);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(b.Host().data()) % 4096, 0U);  // straight from mmap, not a heap copy
}

TEST_F(ArrayStoreTest, WrongDtypeCountAndMissingEntryAreErrors) {
  std::vector<int32_t> v = {1, 2, 3};
  ArrayWriter w(dir_);
  w.Add<int32_t>("ids", v);
  const ArrayReader r = Reader(w);
  try {
    r.Map<int64_t>("ids", true);
    FAIL();
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("array 'ids' has dtype int32, expected int64"));
    EXPECT_THAT(e.what(), HasSubstr("rebuild it"));
  }
  EXPECT_THAT([&] { r.Map<int32_t>("ids", true, 4); }, ::testing::ThrowsMessage<Error>(HasSubstr("3 values")));
  EXPECT_THAT([&] { r.Map<int32_t>("other", true); },
              ::testing::ThrowsMessage<Error>(HasSubstr("array 'other': missing")));
}

TEST_F(ArrayStoreTest, MalformedEntriesAreReported) {
  std::vector<int32_t> v = {1, 2, 3};
  ArrayWriter w(dir_);
  w.Add<int32_t>("ids", v);
  auto with = [&](const std::string& key, const nlohmann::json& value) {
    nlohmann::json arrays = nlohmann::json::parse(w.entries().dump());
    if (value.is_null()) {
      arrays["ids"].erase(key);
    } else {
      arrays["ids"][key] = value;
    }
    return ArrayReader(dir_, arrays, "fix");
  };
  auto message = [](const ArrayReader& r) {
    try {
      r.Map<int32_t>("ids", true);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_THAT(message(with("dtype", "int16")), HasSubstr("unknown dtype \"int16\""));
  EXPECT_THAT(message(with("file", "../../etc/passwd")), HasSubstr("inside the dataset folder"));
  EXPECT_THAT(message(with("bytes", 13)), HasSubstr("\"bytes\" is 13 but 3 int32 values take 12"));
  EXPECT_THAT(message(with("count", -1)), HasSubstr("non-negative"));
  // 2^62 int32 values: 2^64 bytes wraps to 0, which an empty file would match; refused before any mapping.
  auto wrapped = [&] {
    nlohmann::json arrays = nlohmann::json::parse(w.entries().dump());
    arrays["ids"]["count"] = int64_t{1} << 62;
    arrays["ids"]["bytes"] = 0;
    return ArrayReader(dir_, arrays, "fix");
  };
  EXPECT_THAT(message(wrapped()), HasSubstr("overflows"));
  EXPECT_THAT(message(with("xxh3", nullptr)), HasSubstr("missing key 'xxh3'"));
  EXPECT_THROW(ArrayReader(dir_, nlohmann::json::array(), "fix"), Error);
}

TEST_F(ArrayStoreTest, CorruptTruncatedAndMissingFilesAreReportedByName) {
  std::vector<double> v(100, 1.5);
  ArrayWriter w(dir_);
  w.Add<double>("vals", v);
  w.Add<double>("more", v);
  const ArrayReader r = Reader(w);
  {
    std::fstream f(dir_ / "vals.bin", std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(400);
    f.put('\x55');
  }
  EXPECT_NO_THROW(r.Map<double>("vals", /*verify=*/false));
  try {
    r.Map<double>("vals", true);
    FAIL();
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("vals.bin"));
    EXPECT_THAT(e.what(), HasSubstr("checksum mismatch for array 'vals'"));
  }
  fs::resize_file(dir_ / "more.bin", 799);
  EXPECT_THAT([&] { r.Map<double>("more", false); },
              ::testing::ThrowsMessage<Error>(HasSubstr("has 799 bytes but the manifest says 800")));
  const auto checks = r.CheckAll();
  ASSERT_EQ(checks.size(), 2U);
  for (const auto& c : checks) EXPECT_FALSE(c.ok) << c.name;
  fs::remove(dir_ / "more.bin");
  EXPECT_THAT(r.Check("more").detail, HasSubstr("file of array 'more' is missing"));
}

}  // namespace
}  // namespace tessel::datasets
