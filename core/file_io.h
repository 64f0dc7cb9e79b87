// Files: read-only/copy-on-write memory maps, whole-file reads, and atomic outputs (write to a temporary
// name in the same folder, then rename), so a crash or an error never leaves a half-written result.
#pragma once

#include <cstddef>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>

namespace tessel {

// A private (copy-on-write) mapping of a whole file; writes through it never reach the file.
class MappedFile {
 public:
  // Maps the file; on a thread inside a ScopedCopyInsteadOfMap, reads a private copy into anonymous memory
  // instead, so later changes to the file on disk (truncation included) never reach the returned bytes.
  static std::shared_ptr<MappedFile> Open(const std::filesystem::path& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  std::byte* data() { return data_; }
  const std::byte* data() const { return data_; }
  size_t size() const { return size_; }
  const std::filesystem::path& path() const { return path_; }

 private:
  MappedFile() = default;
  std::filesystem::path path_;
  std::byte* data_ = nullptr;
  size_t size_ = 0;
};

// While one is alive, MappedFile::Open on this thread copies files instead of mapping them (Python's
// `tessel.load(path, mmap=False)`: a mapped file truncated on disk while a view of it is alive raises SIGBUS).
class ScopedCopyInsteadOfMap {
 public:
  ScopedCopyInsteadOfMap();
  ~ScopedCopyInsteadOfMap();
  ScopedCopyInsteadOfMap(const ScopedCopyInsteadOfMap&) = delete;
  ScopedCopyInsteadOfMap& operator=(const ScopedCopyInsteadOfMap&) = delete;

 private:
  bool before_;
};

std::string ReadFileToString(const std::filesystem::path& path);

// Refuses an input that must be a regular file before any work: "OPTION 'PATH': no such file", or what it is
// instead (a folder, a device, a named pipe, a socket) and to give a file. Decided here for every file input, so a
// character device is never reported as missing.
void CheckInputIsFile(const std::filesystem::path& path, std::string_view option);

// Temporaries are named `.NAME.tmp.HOST.PID.RANDOM` (and `.NAME.old.…` while a folder is replaced). Writing NAME
// first removes such entries left by a process of this host that no longer exists (a killed run); live runs', other
// hosts' and other names' entries are left alone.

// Writes `bytes` to `path` atomically (temporary file + fsync + rename).
void WriteFileAtomic(const std::filesystem::path& path, std::span<const std::byte> bytes);
void WriteFileAtomic(const std::filesystem::path& path, std::string_view text);

// An exclusive flock(2) on the folder `dir` while it lives (closing the descriptor releases it): writers of a
// checkpoint folder (a rank's just-in-time state and its peers') take turns. `what` names the folder in errors.
class FolderLock {
 public:
  FolderLock(const std::filesystem::path& dir, std::string_view what);
  ~FolderLock();
  FolderLock(const FolderLock&) = delete;
  FolderLock& operator=(const FolderLock&) = delete;

 private:
  int fd_;
};

// An output folder built under a temporary name beside `final_path` and renamed into place by Commit().
// Destroyed without Commit(), it removes the temporary folder. With overwrite=false an existing
// final_path is an error ("exists; pass --force to replace it") raised by the constructor.
class AtomicDirectory {
 public:
  AtomicDirectory(std::filesystem::path final_path, bool overwrite);
  ~AtomicDirectory();
  AtomicDirectory(const AtomicDirectory&) = delete;
  AtomicDirectory& operator=(const AtomicDirectory&) = delete;

  // Where to write files now.
  const std::filesystem::path& path() const { return temp_path_; }
  const std::filesystem::path& final_path() const { return final_path_; }
  void Commit();

 private:
  std::filesystem::path final_path_;
  std::filesystem::path temp_path_;
  bool overwrite_;
  bool committed_ = false;
};

}  // namespace tessel
