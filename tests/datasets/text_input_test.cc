// TextFile decompression (gzip, concatenated gzip, bzip2, truncation) and the line/field cursors.
#include "datasets/text_input.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <limits>
#include <utility>

#include "core/memory_budget.h"
#include "tests/datasets/test_util.h"

namespace tessel::datasets {
namespace {
namespace fs = std::filesystem;

using testing_util::Bzip2;
using testing_util::Gzip;

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

// Reads a whole stream, checking the piece contract: no empty piece, each ends with '\n' except the last.
std::string Drain(TextStream& stream, size_t* pieces = nullptr, size_t* largest = nullptr) {
  std::string all;
  std::string_view piece;
  size_t count = 0;
  size_t most = 0;
  bool last = false;
  while (stream.Next(&piece)) {
    EXPECT_FALSE(last) << "a piece without a final '\\n' was not the last";
    EXPECT_FALSE(piece.empty());
    last = piece.back() != '\n';
    all += piece;
    ++count;
    most = std::max(most, piece.size());
  }
  EXPECT_FALSE(stream.Next(&piece)) << "the end is sticky";
  if (pieces != nullptr) *pieces = count;
  if (largest != nullptr) *largest = most;
  return all;
}

// Text with short, empty, CRLF and long lines (longer than the small windows), with and without a final newline.
std::string MixedText(bool final_newline) {
  std::string t;
  for (int i = 0; i < 3000; ++i) {
    t += std::to_string(i * 7919 % 10007);
    if (i % 17 == 0) t += std::string(static_cast<size_t>(i % 300), 'x');  // long lines
    t += i % 5 == 0 ? "\r\n" : "\n";
    if (i % 11 == 0) t += "\n";  // empty lines
  }
  if (!final_newline) t += "last line without newline";
  return t;
}

// Every window size gives back exactly the text, as pieces of whole lines, and a cursor over the stream sees the
// same lines with the same numbers as a cursor over the whole text.
TEST_F(TextInputTest, StreamPiecesAreWholeLinesForEveryWindow) {
  for (bool final_newline : {true, false}) {
    const std::string text = MixedText(final_newline);
    for (size_t window : {size_t{1}, size_t{2}, size_t{7}, size_t{64}, size_t{1000}, size_t{1} << 20}) {
      SCOPED_TRACE(::testing::Message() << "window " << window << " final newline " << final_newline);
      TextStream s = TextStream::FromString("t", text, window);
      size_t pieces = 0;
      EXPECT_EQ(Drain(s, &pieces), text);
      if (window < text.size()) {
        EXPECT_GT(pieces, 1u);
      }

      TextStream s2 = TextStream::FromString("t", text, window);
      LineCursor streamed(s2);
      LineCursor whole("t", text);
      std::string_view a;
      std::string_view b;
      while (whole.Next(&a)) {
        ASSERT_TRUE(streamed.Next(&b));
        ASSERT_EQ(a, b);
        ASSERT_EQ(whole.line_number(), streamed.line_number());
      }
      EXPECT_FALSE(streamed.Next(&b));
    }
  }
  TextStream empty = TextStream::FromString("e", "", 8);
  EXPECT_EQ(Drain(empty), "");
}

// A compressed file is inflated a window at a time: the pieces are never larger than the window (when every line
// fits in it), so memory does not grow with the file. The size estimate follows the compression ratio.
TEST_F(TextInputTest, CompressedStreamsInflateAWindowAtATime) {
  std::string text;
  for (int i = 0; i < 200000; ++i) text += std::to_string(i) + " " + std::to_string(i * 7 % 100003) + "\n";
  const size_t window = size_t{64} << 10;
  for (const auto& [file, compression] : {std::pair{Write("s.gz", Gzip(text)), Compression::kGzip},
                                          std::pair{Write("s.bz2", Bzip2(text)), Compression::kBzip2}}) {
    SCOPED_TRACE(file.string());
    TextStream s = TextStream::Open(file, window);
    EXPECT_EQ(s.compression(), compression);
    EXPECT_EQ(s.name(), file.string());
    std::string_view piece;
    ASSERT_TRUE(s.Next(&piece));
    EXPECT_LE(piece.size(), window);
    // After one window the estimate is within 30% of the truth (uniform text). bzip2 consumes its input a 900 kB
    // block at a time, so its first estimate is low; it is a hint for reservations only.
    if (compression == Compression::kGzip) {
      EXPECT_GT(static_cast<double>(s.EstimatedSize()), 0.7 * static_cast<double>(text.size())) << s.EstimatedSize();
      EXPECT_LT(static_cast<double>(s.EstimatedSize()), 1.3 * static_cast<double>(text.size())) << s.EstimatedSize();
    } else {
      EXPECT_GT(s.EstimatedSize(), 0);
    }
    EXPECT_EQ(s.MaxSize(), static_cast<int64_t>(1000 * fs::file_size(file)));  // the default ratio limit
    std::string all(piece);
    size_t pieces = 0;
    size_t largest = 0;
    all += Drain(s, &pieces, &largest);
    EXPECT_EQ(all, text);
    EXPECT_LE(largest, window);
    EXPECT_GE(pieces + 1, text.size() / window);
  }
  TextStream plain = TextStream::Open(Write("s.txt", text), window);
  EXPECT_EQ(plain.EstimatedSize(), static_cast<int64_t>(text.size()));
  EXPECT_EQ(plain.MaxSize(), static_cast<int64_t>(text.size()));
  size_t pieces = 0;
  EXPECT_EQ(Drain(plain, &pieces), text);
  EXPECT_EQ(pieces, 1u) << "a plain file is one mapped piece";
}

// Concatenated gzip members and multi-stream bzip2 files (pbzip2, `cat a.bz2 b.bz2`) read as one text.
TEST_F(TextInputTest, ConcatenatedMembersAndStreams) {
  const std::string a = MixedText(true);
  const std::string b = "1 2\n3 4\n";
  for (const fs::path& p : {Write("m.gz", Gzip(a) + Gzip(b)), Write("m.bz2", Bzip2(a) + Bzip2(b))}) {
    SCOPED_TRACE(p.string());
    EXPECT_EQ(TextFile::Open(p).text(), a + b);
    for (size_t window : {size_t{16}, size_t{4096}, TextStream::kDefaultWindow}) {
      TextStream s = TextStream::Open(p, window);
      EXPECT_EQ(Drain(s), a + b);
    }
  }
}

// A stream that is cut short or damaged throws from Next() with the file's name, at whatever piece it is found,
// and never returns the damaged tail as text.
TEST_F(TextInputTest, DamagedStreamsThrowWhileStreaming) {
  std::string text;
  for (int i = 0; i < 100000; ++i) text += std::to_string(i) + "\n";
  const std::string gz = Gzip(text);
  const std::string bz = Bzip2(text);
  std::string corrupt_gz = gz;
  for (size_t i = gz.size() / 2; i < gz.size() / 2 + 64; ++i) corrupt_gz[i] = static_cast<char>(corrupt_gz[i] ^ 0x5a);
  std::string corrupt_bz = bz;
  for (size_t i = bz.size() / 2; i < bz.size() / 2 + 64; ++i) corrupt_bz[i] = static_cast<char>(corrupt_bz[i] ^ 0x5a);
  const std::pair<std::string, std::string> cases[] = {
      {"half.gz", gz.substr(0, gz.size() / 2)},
      {"half.bz2", bz.substr(0, bz.size() / 2)},
      {"nearly.gz", gz.substr(0, gz.size() - 3)},
      {"corrupt.gz", corrupt_gz},
      {"corrupt.bz2", corrupt_bz},
      {"junk_after.bz2", bz + "not bzip2 data"},
  };
  for (const auto& [name, bytes] : cases) {
    for (size_t window : {size_t{100}, size_t{1} << 20}) {
      SCOPED_TRACE(name + " window " + std::to_string(window));
      TextStream s = TextStream::Open(Write(name, bytes), window);
      std::string_view piece;
      size_t total = 0;
      try {
        while (s.Next(&piece)) total += piece.size();
        ADD_FAILURE() << "read " << total << " bytes without an error";
      } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find((dir_ / name).string()), std::string::npos) << e.what();
      }
      EXPECT_LE(total, text.size());
    }
  }
}

// The ratio limit holds while streaming too: a bomb stops with the same message, whatever the window.
TEST_F(TextInputTest, StreamsStopAtTheRatioLimit) {
  const std::string lines = [] {
    std::string t;
    for (int i = 0; i < 2000000; ++i) t += "0 0\n";  // 8 MB of one repeated line
    return t;
  }();
  const fs::path gz = Write("bomb.gz", Gzip(lines));
  const fs::path bz = Write("bomb.bz2", Bzip2(lines));
  memory::SetInflateLimits({.max_ratio = 20});
  for (const fs::path& p : {gz, bz}) {
    TextStream s = TextStream::Open(p, 4096);
    EXPECT_EQ(s.MaxSize(), static_cast<int64_t>(20 * fs::file_size(p)));
    try {
      std::string_view piece;
      while (s.Next(&piece)) {
      }
      ADD_FAILURE() << p << " was streamed past the ratio limit";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(p.string() + ": decompresses to more than 20 times"), std::string::npos)
          << e.what();
    }
  }
  memory::SetInflateLimits({.max_ratio = 0});
  TextStream s = TextStream::Open(gz, 4096);
  EXPECT_EQ(s.MaxSize(), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(Drain(s).size(), lines.size());
  memory::SetInflateLimits({});
}

// Stopping early (a reader that fails on an early line) with a fill in flight neither leaks nor blocks.
TEST_F(TextInputTest, AStreamAbandonedMidwayIsReleased) {
  std::string text;
  for (int i = 0; i < 300000; ++i) text += std::to_string(i) + "\n";
  const fs::path gz = Write("abandon.gz", Gzip(text));
  for (int k = 0; k < 20; ++k) {
    TextStream s = TextStream::Open(gz, 1024);
    std::string_view piece;
    ASSERT_TRUE(s.Next(&piece));
    TextStream moved = std::move(s);  // the fill in flight writes into state that moves with the stream
    ASSERT_TRUE(moved.Next(&piece));
  }
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

TEST(ParseFinite, SaysWhatIsWrongWithTheToken) {
  double d = 0;
  EXPECT_EQ(ParseFinite("+2.5", &d), nullptr);
  EXPECT_EQ(d, 2.5);
  EXPECT_STREQ(ParseFinite("2.5x", &d), "is not a number");
  EXPECT_STREQ(ParseFinite("", &d), "is not a number");
  EXPECT_STREQ(ParseFinite("inf", &d), "is not finite");
  EXPECT_STREQ(ParseFinite("nan", &d), "is not finite");
  float f = 0;
  EXPECT_EQ(ParseFinite("-0.25", &f), nullptr);
  EXPECT_EQ(f, -0.25F);
  EXPECT_STREQ(ParseFinite("1e99", &f), "is not a number");  // out of float's range
  LineCursor c("rows.txt", "1 nan\n");
  std::string_view l;
  c.Next(&l);
  try {
    c.ParseDouble("nan", "value");
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "rows.txt:1: value 'nan' is not finite");
  }
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
