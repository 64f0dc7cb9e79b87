// core/output_guard.h: outputs against the run's inputs (resolved paths and device/inode of every existing
// ancestor), against devices, and against files and folders of another kind.
#include "core/output_guard.h"

#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <optional>
#include <string_view>
#include <system_error>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/file_io.h"
#include "core/name_table.h"

namespace tessel {
namespace fs = std::filesystem;
namespace {

struct Node {
  dev_t dev = 0;
  ino_t ino = 0;
  bool operator==(const Node& o) const { return dev == o.dev && ino == o.ino; }
};

std::optional<Node> StatNode(const fs::path& p) {
  struct stat st {};
  if (::stat(p.c_str(), &st) != 0) return std::nullopt;
  return Node{st.st_dev, st.st_ino};
}

// The absolute path with symbolic links of its existing part resolved and `.`/`..` removed, without a trailing '/'.
fs::path Resolved(const fs::path& p) {
  std::error_code ec;
  fs::path a = fs::absolute(p, ec);
  if (ec) a = p;
  fs::path c = fs::weakly_canonical(a, ec);
  if (ec) c = a.lexically_normal();
  while (c.has_relative_path() && c.filename().empty()) c = c.parent_path();
  return c;
}

// Whether `inner` equals `outer` or lies below it (component by component).
bool IsWithin(const fs::path& inner, const fs::path& outer) {
  auto i = inner.begin();
  for (auto o = outer.begin(); o != outer.end(); ++o, ++i) {
    if (i == inner.end() || *i != *o) return false;
  }
  return true;
}

// The nodes of the existing ancestors of a resolved path (not the path itself), nearest first.
std::vector<Node> AncestorNodes(const fs::path& resolved) {
  std::vector<Node> out;
  fs::path q = resolved;
  while (q.has_relative_path()) {
    q = q.parent_path();
    if (auto n = StatNode(q)) out.push_back(*n);
  }
  return out;
}

bool Contains(const std::vector<Node>& nodes, const std::optional<Node>& n) {
  if (!n) return false;
  for (const Node& x : nodes) {
    if (x == *n) return true;
  }
  return false;
}

// An input that does not exist is a prefix (tests/data/cora/cora): its files are PREFIX.* in its folder.
std::vector<fs::path> Expand(const fs::path& input) {
  std::error_code ec;
  if (fs::exists(fs::symlink_status(input, ec))) return {input};
  std::vector<fs::path> out{input};
  fs::path parent = input.parent_path();
  if (parent.empty()) parent = ".";
  const std::string prefix = input.filename().string() + ".";
  if (prefix.size() == 1) return out;
  fs::directory_iterator it(parent, ec);
  if (ec) return out;
  for (const fs::directory_entry& e : it) {
    const std::string name = e.path().filename().string();
    if (name.size() > prefix.size() && name.compare(0, prefix.size(), prefix) == 0) out.push_back(e.path());
  }
  return out;
}

// The command line's options ("--output") and positional arguments (svm-predict's "OUTPUT_FILE") get the CLI's
// spelling; Python's keyword arguments ("checkpoint") their own.
std::string ForceHint(std::string_view flag) {
  const bool cli = flag.starts_with("--") || (!flag.empty() && flag[0] >= 'A' && flag[0] <= 'Z');
  return cli ? "--force" : "force=True";
}

// A string field of a small JSON file, or "" when the file is missing, not JSON or has no such string.
std::string JsonField(const fs::path& file, const char* key) {
  std::error_code ec;
  if (!fs::is_regular_file(file, ec)) return "";
  const auto size = fs::file_size(file, ec);
  if (ec || size > (64U << 20)) return "";
  try {
    const nlohmann::json j = nlohmann::json::parse(ReadFileToString(file));
    if (j.is_object() && j.contains(key) && j[key].is_string()) return j[key].get<std::string>();
  } catch (const std::exception&) {
  }
  return "";
}

enum class What {
  kMissing,
  kRegular,
  kEmptyFolder,
  kOtherFolder,
  kDataset,
  kPartition,
  kCheckpoint,
  kBadCheckpoint,
  kDevice,
  kFifo,
  kSocket,
  kDanglingLink,
  kOther
};

What Classify(const fs::path& p) {
  struct stat st {};
  if (::lstat(p.c_str(), &st) != 0) return What::kMissing;
  if (S_ISLNK(st.st_mode) && ::stat(p.c_str(), &st) != 0) return What::kDanglingLink;
  if (S_ISREG(st.st_mode)) return What::kRegular;
  if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) return What::kDevice;
  if (S_ISFIFO(st.st_mode)) return What::kFifo;
  if (S_ISSOCK(st.st_mode)) return What::kSocket;
  if (!S_ISDIR(st.st_mode)) return What::kOther;
  std::error_code ec;
  if (fs::is_empty(p, ec) && !ec) return What::kEmptyFolder;
  if (JsonField(p / "checkpoint.json", "kind") == "tessel-gcn-checkpoint") return What::kCheckpoint;
  if (JsonField(p / "manifest.json", "format") == "tessel-dataset") return What::kDataset;
  if (JsonField(p / "partitions.json", "format") == "tessel-partition") return What::kPartition;
  if (fs::exists(p / "checkpoint.json", ec)) return What::kBadCheckpoint;
  return What::kOtherFolder;
}

// What's phrases and OutputKind's nouns for the messages, indexed by their values.
constexpr std::array<std::string_view, 13> kWhatPhrases{"does not exist",
                                                        "is a regular file",
                                                        "is an empty folder",
                                                        "is a folder of other files",
                                                        "is a tessel dataset",
                                                        "is a tessel partition folder",
                                                        "is a tessel checkpoint",
                                                        "is a folder whose checkpoint.json is damaged or not tessel's",
                                                        "is a device",
                                                        "is a named pipe",
                                                        "is a socket",
                                                        "is a symbolic link to nothing",
                                                        "is neither a file nor a folder"};
static_assert(kWhatPhrases.size() == static_cast<size_t>(What::kOther) + 1);
constexpr std::array<std::string_view, 4> kKindNouns{"a regular file", "a tessel dataset", "a partition folder",
                                                     "a tessel checkpoint"};
static_assert(kKindNouns.size() == static_cast<size_t>(OutputKind::kCheckpointFolder) + 1);

std::string_view Describe(What w) { return NameAt(kWhatPhrases, w, ""); }
std::string_view KindNoun(OutputKind kind) { return NameAt(kKindNouns, kind, ""); }

// Whether a writer of `kind` may replace what is there (with force).
bool Replaceable(What w, OutputKind kind) {
  if (w == What::kDanglingLink) return true;  // only the link is replaced
  switch (kind) {
    case OutputKind::kFile:
      return w == What::kRegular;
    case OutputKind::kDatasetFolder:
      return w == What::kEmptyFolder || w == What::kDataset;
    case OutputKind::kPartitionFolder:
      return w == What::kEmptyFolder || w == What::kPartition;
    case OutputKind::kCheckpointFolder:
      return w == What::kEmptyFolder || w == What::kCheckpoint;
  }
  return false;
}

// Whether a regular file with more than one name (a hard link) is one of the files under `dir` (walked to a bounded
// number of entries: datasets, partitions and checkpoints hold tens of files, not millions).
bool FolderHoldsFile(const fs::path& dir, const Node& file) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return false;
  fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec);
  size_t seen = 0;
  for (; !ec && it != fs::recursive_directory_iterator() && seen < 100000; it.increment(ec), ++seen) {
    struct stat st {};
    if (::lstat(it->path().c_str(), &st) == 0 && S_ISREG(st.st_mode) && Node{st.st_dev, st.st_ino} == file) {
      return true;
    }
  }
  return false;
}

// Whether `p` is a regular file with other names (hard links) somewhere.
bool HasHardLinks(const fs::path& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && st.st_nlink > 1;
}

void CheckAgainst(const fs::path& out, std::string_view flag, std::span<const fs::path> paths, bool outputs) {
  const fs::path ro = Resolved(out);
  const std::optional<Node> no = StatNode(out);
  const std::vector<Node> out_up = AncestorNodes(ro);
  const std::string role = outputs ? "another output of this command" : "an input of this command";
  const std::string fix = fmt::format("{} never replaces a command's own {}: choose another path", ForceHint(flag),
                                      outputs ? "outputs" : "inputs");
  for (const fs::path& given : paths) {
    if (given.empty()) continue;
    // An output that does not exist yet is only its own path; an input that does not exist may be a prefix.
    for (const fs::path& in : outputs ? std::vector<fs::path>{given} : Expand(given)) {
      const fs::path ri = Resolved(in);
      const std::optional<Node> ni = StatNode(in);
      if (ri == ro || (no && ni && *no == *ni)) {
        throw Error(fmt::format("{} {}: is {} ({}); {}", flag, out.string(), role, in.string(), fix));
      }
      if (IsWithin(ro, ri) || Contains(out_up, ni)) {
        throw Error(fmt::format("{} {}: lies inside {}, {}; {}", flag, out.string(), in.string(), role, fix));
      }
      if (IsWithin(ri, ro) || Contains(AncestorNodes(ri), no)) {
        throw Error(fmt::format("{} {}: contains {}, {}; {}", flag, out.string(), in.string(), role, fix));
      }
      // A hard link to a file inside an input folder is that file under another name.
      if (no && HasHardLinks(out) && FolderHoldsFile(in, *no)) {
        throw Error(fmt::format("{} {}: is a hard link to a file inside {}, {}; {}", flag, out.string(), in.string(),
                                role, fix));
      }
    }
  }
}

}  // namespace

std::vector<fs::path> PathList(std::initializer_list<std::string_view> paths) {
  std::vector<fs::path> out;
  for (std::string_view p : paths) {
    if (!p.empty()) out.emplace_back(p);
  }
  return out;
}

bool HoldsOutputOf(const fs::path& path, OutputKind kind) {
  const What w = Classify(path);
  switch (kind) {
    case OutputKind::kFile:
      return w == What::kRegular;
    case OutputKind::kDatasetFolder:
      return w == What::kDataset;
    case OutputKind::kPartitionFolder:
      return w == What::kPartition;
    case OutputKind::kCheckpointFolder:
      return w == What::kCheckpoint;
  }
  return false;
}

std::string DescribePath(const fs::path& path) { return std::string(Describe(Classify(path))); }

void CheckOutputNotInput(const fs::path& out, std::string_view flag, std::span<const fs::path> inputs) {
  if (!out.empty()) CheckAgainst(out, flag, inputs, false);
}

void CheckOutputPath(const fs::path& out, OutputKind kind, bool force, std::string_view flag,
                     std::span<const fs::path> inputs, std::span<const fs::path> other_outputs) {
  if (out.empty()) return;
  CheckAgainst(out, flag, inputs, false);
  CheckAgainst(out, flag, other_outputs, true);
  const std::string name = out.string();
  // The files of a dataset, partition or checkpoint are written only by its own writer, as a whole: nothing is
  // written inside one (a metrics file, a model's sidecar, a new folder), even with force.
  for (fs::path up = Resolved(out).parent_path(); up.has_relative_path(); up = up.parent_path()) {
    const What a = Classify(up);
    if (a == What::kDataset || a == What::kPartition || a == What::kCheckpoint) {
      throw Error(
          fmt::format("{} {}: lies inside {}, which {}; its files are written only by the command that "
                      "makes it, so nothing is written inside it even with {}; choose a path outside it",
                      flag, name, up.string(), Describe(a), ForceHint(flag)));
    }
  }
  const What w = Classify(out);
  switch (w) {
    case What::kDevice:
    case What::kFifo:
    case What::kSocket:
    case What::kOther:
      throw Error(fmt::format("{} {}: {}, not a file; omit the option to write nothing, or give a file path", flag,
                              name, Describe(w)));
    default:
      break;
  }
  // A symbolic link to a device: the link would be replaced, but the user surely meant the device.
  struct stat st {};
  if (::stat(out.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
    throw Error(
        fmt::format("{} {}: leads to a device or pipe, not a file; omit the option to write nothing, or give "
                    "a file path",
                    flag, name));
  }
  if (w != What::kMissing && !Replaceable(w, kind)) {
    if (kind == OutputKind::kFile) {
      throw Error(
          fmt::format("{} {}: {}, not a file, so it is not replaced even with {}; give a file path (such as "
                      "{}/NAME) or another path",
                      flag, name, Describe(w), ForceHint(flag), name));
    }
    throw Error(
        fmt::format("{} {}: is not {} (it {}), so it is not replaced even with {}; remove it yourself or "
                    "choose another path",
                    flag, name, KindNoun(kind), Describe(w), ForceHint(flag)));
  }
  // The writers rename the path itself (written under a temporary name beside it): a name ending in "." or ".."
  // (the current folder, `--checkpoint .`) cannot be renamed, which would fail only after all the work.
  fs::path named = out;
  while (named.has_relative_path() && named.filename().empty()) named = named.parent_path();
  TESSEL_CHECK(named.filename() != "." && named.filename() != "..",
               "{} {}: a path ending in '.' or '..' cannot be replaced (the folder it names cannot be renamed); give "
               "the folder by its name, such as {}",
               flag, name, Resolved(out).string());
  if (w != What::kMissing && !force) {
    throw Error(fmt::format("{} {}: already exists; pass {} to replace it or choose another path", flag, name,
                            ForceHint(flag)));
  }
  // The folder must take the output (written under a temporary name and renamed), checked before any work. It is
  // taken as the system resolves it (not lexically: "missing/../ck" needs the folder "missing").
  fs::path parent = named.parent_path();
  if (parent.empty()) parent = ".";
  std::error_code ec;
  TESSEL_CHECK(fs::is_directory(parent, ec),
               "{} {}: the folder {} does not exist (or is not a folder); create it or choose another path", flag, name,
               parent.string());
  TESSEL_CHECK(::access(parent.c_str(), W_OK) == 0, "{} {}: the folder {} is not writable; choose another path", flag,
               name, parent.string());
}

}  // namespace tessel
