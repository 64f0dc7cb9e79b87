// TextFile decompression (gzip, concatenated gzip, bzip2, truncation) and the line/field cursors.
#include "datasets/text_input.h"

#include <bzlib.h>
#include <zlib.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/memory_budget.h"

namespace tessel::datasets {
namespace {
namespace fs = std::filesystem;

std::string Gzip(const std::string& text) {
  z_stream zs{};
  deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&zs, text.size()) + 64, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  zs.avail_in = static_cast<uInt>(text.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  deflate(&zs, Z_FINISH);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

std::string Bzip2(const std::string& text) {
  std::string out(text.size() + text.size() / 100 + 700, '\0');
  auto len = static_cast<unsigned>(out.size());
  BZ2_bzBuffToBuffCompress(out.data(), &len, const_cast<char*>(text.data()), static_cast<unsigned>(text.size()), 9, 0,
                           0);
  out.resize(len);
  return out;
}

class TextInputTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tessel_text_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path Write(const std::string& name, const std::string& bytes) {
    std::ofstream(dir_ / name, std::ios::binary) << bytes;
    return dir_ / name;
  }
  fs::path dir_;
};

TEST_F(TextInputTest, PlainGzipBzip2Agree) {
  std::string text;
  for (int i = 0; i < 200000; ++i) text += std::to_string(i) + " " + std::to_string(i * 7) + "\n";
  EXPECT_EQ(TextFile::Open(Write("a.txt", text)).text(), text);
  const TextFile gz = TextFile::Open(Write("a.txt.gz", Gzip(text)));
  EXPECT_EQ(gz.compression(), Compression::kGzip);
  EXPECT_EQ(gz.text(), text);
  const TextFile bz = TextFile::Open(Write("a.txt.bz2", Bzip2(text)));
  EXPECT_EQ(bz.compression(), Compression::kBzip2);
  EXPECT_EQ(bz.text(), text);
  EXPECT_EQ(TextFile::Open(Write("cat.gz", Gzip("1 2\n") + Gzip("3 4\n"))).text(), "1 2\n3 4\n");
}

TEST_F(TextInputTest, TruncatedCompressedFilesAreErrors) {
  std::string text(100000, 'x');
  const std::string gz = Gzip(text);
  EXPECT_THROW(TextFile::Open(Write("t.gz", gz.substr(0, gz.size() / 2))), Error);
  const std::string bz = Bzip2(text + "abc");
  EXPECT_THROW(TextFile::Open(Write("t.bz2", bz.substr(0, bz.size() / 2))), Error);
}

// A decompression bomb stops at the ratio limit with a message naming the file, the ratio and the option, long
// before it is inflated; genuine compressed text well below the limit still opens (and with no limit, anything).
TEST_F(TextInputTest, DecompressionBombsStopAtTheRatioLimit) {
  const std::string zeros(size_t{64} << 20, '0');  // 64 MiB of one byte: deflate's best case (~1000:1)
  const fs::path gz = Write("bomb.gz", Gzip(zeros));
  const fs::path bz = Write("bomb.bz2", Bzip2(zeros));
  EXPECT_LT(fs::file_size(gz), size_t{128} << 10);
  memory::SetInflateLimits({.max_ratio = 100});
  for (const fs::path& p : {gz, bz}) {
    try {
      TextFile::Open(p);
      ADD_FAILURE() << p << " was inflated past the ratio limit";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(p.string() + ": decompresses to more than 100 times"), std::string::npos)
          << e.what();
      EXPECT_NE(std::string(e.what()).find("--max-inflate-ratio"), std::string::npos) << e.what();
    }
  }
  const std::string lines = [] {
    std::string t;
    for (int i = 0; i < 20000; ++i) t += std::to_string(i) + " " + std::to_string(i * 7 % 1000) + "\n";
    return t;
  }();
  EXPECT_EQ(TextFile::Open(Write("ok.gz", Gzip(lines))).text(), lines);
  memory::SetInflateLimits({.max_ratio = 0});
  EXPECT_EQ(TextFile::Open(bz).text().size(), zeros.size());
  memory::SetInflateLimits({});
}

TEST_F(TextInputTest, MissingFileAndFolder) {
  EXPECT_THROW(TextFile::Open(dir_ / "missing.txt"), Error);
  EXPECT_THROW(TextFile::Open(dir_), Error);
  Write("x.csv.gz", Gzip("a\n"));
  EXPECT_EQ(FindWithCompression(dir_ / "x.csv").filename(), "x.csv.gz");
  EXPECT_THROW(FindWithCompression(dir_ / "y.csv"), Error);
}

TEST(LineCursor, LineNumbersCommentsAndCrlf) {
  LineCursor c("f.txt", "# comment\r\n\n  1 2\r\n% other\n3\t4");
  std::string_view l;
  ASSERT_TRUE(c.NextContent(&l));
  EXPECT_EQ(l, "  1 2");
  EXPECT_EQ(c.line_number(), 3);
  ASSERT_TRUE(c.NextContent(&l));
  EXPECT_EQ(l, "3\t4");
  EXPECT_EQ(c.line_number(), 5);
  EXPECT_FALSE(c.NextContent(&l));
}

TEST(LineCursor, FailNamesFileAndLine) {
  LineCursor c("edges.txt", "1 2\n3 x7\n");
  std::string_view l;
  c.Next(&l);
  c.Next(&l);
  try {
    c.ParseInt("x7", "node id");
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "edges.txt:2: node id 'x7' is not an integer");
  }
  EXPECT_THROW(c.ParseDouble("nan", "value"), Error);
  EXPECT_THROW(c.ParseFloat("1e99", "value"), Error);
  EXPECT_EQ(c.ParseInt("+5", "id"), 5);
}

TEST(Fields, WhitespaceAndCsv) {
  Fields ws(" a \t bb  c ");
  std::string_view f;
  std::vector<std::string_view> got;
  while (ws.Next(&f)) got.push_back(f);
  EXPECT_EQ(got, (std::vector<std::string_view>{"a", "bb", "c"}));
  Fields csv("1, 2,,3 ", ',');
  got.clear();
  while (csv.Next(&f)) got.push_back(f);
  EXPECT_EQ(got, (std::vector<std::string_view>{"1", "2", "", "3"}));
}

}  // namespace
}  // namespace tessel::datasets
