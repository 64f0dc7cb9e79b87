// POSIX implementation of core/file_io.h: mmap(MAP_PRIVATE), fsync'd temporary files, rename(2), and the removal
// of a dead run's temporaries at the next write to the same place.
// Every failure names the path and the system's reason.
#include "core/file_io.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>  // renameat2
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <random>
#include <system_error>

#include <fmt/format.h>

#include "core/error.h"
#include "core/fault_inject.h"
#include "core/memory_budget.h"

namespace tessel {
namespace fs = std::filesystem;
namespace {

std::string SysError() { return std::strerror(errno); }

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

std::string HostName() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof(buf) - 1) != 0) return "unknown";
  return buf;
}

// HOST.PID.RANDOM: who made a temporary name, so a later write can tell a dead run's leftovers from a live one's.
std::string UniqueSuffix() {
  static thread_local std::mt19937_64 gen(std::random_device{}());
  return fmt::format("{}.{}.{:x}", HostName(), ::getpid(), gen());
}

// Removes `.NAME.tmp.HOST.PID.RANDOM` and `.NAME.old.HOST.PID.RANDOM` entries beside `path` left by a run that
// died before renaming or cleaning up: only entries of this host whose process no longer exists (a live or
// unknown owner, another host's run on a shared file system and any other name are left alone). Best effort:
// failures are ignored.
void RemoveStaleTemporaries(const fs::path& path) {
  fs::path parent = path.parent_path();
  if (parent.empty()) parent = ".";
  const std::string name = path.filename().string();
  const std::string host = HostName();
  std::error_code ec;
  fs::directory_iterator it(parent, ec);
  if (ec) return;
  for (const fs::directory_entry& e : it) {
    const std::string entry = e.path().filename().string();
    std::string rest;
    for (const char* kind : {".tmp.", ".old."}) {
      const std::string prefix = "." + name + kind;
      if (entry.size() > prefix.size() && entry.compare(0, prefix.size(), prefix) == 0)
        rest = entry.substr(prefix.size());
    }
    if (rest.empty()) continue;
    // rest = HOST.PID.RANDOM, where HOST may itself contain dots.
    const size_t r = rest.rfind('.');
    if (r == std::string::npos || r == 0) continue;
    const size_t q = rest.rfind('.', r - 1);
    if (q == std::string::npos || rest.compare(0, q, host) != 0 || q != host.size()) continue;
    const std::string pid_text = rest.substr(q + 1, r - q - 1);
    if (pid_text.empty() || pid_text.find_first_not_of("0123456789") != std::string::npos || pid_text.size() > 9) {
      continue;
    }
    const auto pid = static_cast<pid_t>(std::stol(pid_text));
    if (pid <= 0 || pid == ::getpid()) continue;
    if (::kill(pid, 0) == 0 || errno != ESRCH) continue;  // alive, or not ours to judge
    std::error_code rm;
    fs::remove_all(e.path(), rm);
  }
}

// Set on a thread while a ScopedCopyInsteadOfMap is alive (MappedFile::Open copies instead of mapping).
thread_local bool copy_instead_of_map = false;

// Why `st` (of `path`) cannot be read as a file, or "" when it is a regular file.
std::string NotRegularReason(const struct stat& st) {
  if (S_ISREG(st.st_mode)) return "";
  if (S_ISDIR(st.st_mode)) return "is a folder; give the file inside it";
  if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) return "is a device, not a regular file; give a file";
  if (S_ISFIFO(st.st_mode)) return "is a named pipe, not a regular file; give a file";
  if (S_ISSOCK(st.st_mode)) return "is a socket, not a regular file; give a file";
  return "is not a regular file; give a file";
}

// Why `path` cannot be read as a file, or an empty `why` when it is a regular file: `missing` when it cannot be
// stat'ed ("no such file", "cannot open: ..."), else NotRegularReason. Checked before opening: a folder would read as
// a huge size, a device such as /dev/zero never ends, and open(2) blocks on a named pipe.
struct InputProblem {
  bool missing = false;
  std::string why;
};
InputProblem InputFileProblem(const fs::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return {true, errno == ENOENT ? "no such file" : "cannot open: " + SysError()};
  return {false, NotRegularReason(st)};
}

// Refuses to rename over `path` when it exists and is not a regular file (a folder, a device such as /dev/null, a
// pipe): rename(2) would replace the device node or fail late. A symbolic link is judged by its target (only the
// link is replaced); a link to nothing may be replaced.
void CheckRenameTargetIsFile(const fs::path& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return;
  if (S_ISLNK(st.st_mode) && ::stat(path.c_str(), &st) != 0) return;
  if (S_ISREG(st.st_mode)) return;
  if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) {
    throw Error::InFile(path.string(),
                        "is a device, not a file; it is never replaced (omit the option to write "
                        "nothing)");
  }
  throw Error::InFile(path.string(),
                      std::string(S_ISDIR(st.st_mode) ? "is a folder" : "is not a regular file") +
                          ", so it is not replaced by a file; remove it yourself or choose another path");
}

// Refuses to replace `path` by a folder when it exists and is not a folder (a file, a device, a pipe). A symbolic
// link is judged by its target; a link to nothing may be replaced.
void CheckRenameTargetIsFolder(const fs::path& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return;
  if (S_ISLNK(st.st_mode) && ::stat(path.c_str(), &st) != 0) return;
  if (S_ISDIR(st.st_mode)) return;
  const std::string what = S_ISREG(st.st_mode)                            ? "is a file"
                           : (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) ? "is a device"
                                                                          : "is not a folder";
  throw Error::InFile(path.string(),
                      what + ", so it is not replaced by an output folder; remove it yourself or choose another path");
}

}  // namespace

std::shared_ptr<MappedFile> MappedFile::Open(const fs::path& path) {
  struct stat pre {};
  // Checked before open(2), which would block on a named pipe.
  if (::stat(path.c_str(), &pre) == 0) {
    if (const std::string why = NotRegularReason(pre); !why.empty()) throw Error::InFile(path.string(), why);
  }
  Fd f;
  f.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (f.fd < 0) throw Error::InFile(path.string(), "cannot open: " + SysError());
  struct stat st {};
  if (::fstat(f.fd, &st) != 0) throw Error::InFile(path.string(), "cannot stat: " + SysError());
  if (const std::string why = NotRegularReason(st); !why.empty()) throw Error::InFile(path.string(), why);
  std::shared_ptr<MappedFile> m(new MappedFile());
  m->path_ = path;
  m->size_ = static_cast<size_t>(st.st_size);
  if (m->size_ == 0) return m;
  if (!copy_instead_of_map) {
    void* p = ::mmap(nullptr, m->size_, PROT_READ | PROT_WRITE, MAP_PRIVATE, f.fd, 0);
    if (p == MAP_FAILED) throw Error::InFile(path.string(), "cannot mmap: " + SysError());
    m->data_ = static_cast<std::byte*>(p);
    return m;
  }
  // A copy in anonymous memory (released by the same munmap): nothing done to the file later reaches it.
  const auto bytes = static_cast<int64_t>(m->size_);
  memory::Check(bytes, fmt::format("copying {} ({} bytes) into memory", path.string(), bytes),
                "load it memory-mapped (mmap=True) or free memory");
  void* p = ::mmap(nullptr, m->size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw Error::InFile(path.string(), "cannot allocate a copy: " + SysError());
  m->data_ = static_cast<std::byte*>(p);
  size_t done = 0;
  while (done < m->size_) {
    const ssize_t n = ::pread(f.fd, m->data_ + done, m->size_ - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      throw Error::InFile(path.string(), n == 0 ? std::string("ended early while it was read (changed on disk?)")
                                                : "read failed: " + SysError());
    }
    done += static_cast<size_t>(n);
  }
  return m;
}

ScopedCopyInsteadOfMap::ScopedCopyInsteadOfMap() : before_(copy_instead_of_map) { copy_instead_of_map = true; }
ScopedCopyInsteadOfMap::~ScopedCopyInsteadOfMap() { copy_instead_of_map = before_; }

void CheckInputIsFile(const fs::path& path, std::string_view option) {
  const InputProblem p = InputFileProblem(path);
  if (p.why.empty()) return;
  throw Error(fmt::format("{} '{}'{} {}", option, path.string(), p.missing ? ":" : "", p.why));
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) ::munmap(data_, size_);
}

std::string ReadFileToString(const fs::path& path) {
  if (const InputProblem p = InputFileProblem(path); !p.why.empty()) throw Error::InFile(path.string(), p.why);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error::InFile(path.string(), "cannot open: " + SysError());
  std::string s;
  in.seekg(0, std::ios::end);
  const auto size = in.tellg();
  if (size < 0) throw Error::InFile(path.string(), "cannot read: " + SysError());
  // A huge file (100 GiB of holes where a small JSON file belongs) is refused naming it, not as a bare out of memory.
  const auto bytes = static_cast<int64_t>(size);
  memory::Check(bytes, fmt::format("reading {} ({} bytes)", path.string(), bytes), "check that this is the right file");
  s.resize(static_cast<size_t>(size));
  in.seekg(0);
  in.read(s.data(), static_cast<std::streamsize>(s.size()));
  if (!in) throw Error::InFile(path.string(), "read failed: " + SysError());
  return s;
}

void WriteFileAtomic(const fs::path& path, std::span<const std::byte> bytes) {
  CheckRenameTargetIsFile(path);
  RemoveStaleTemporaries(path);
  const fs::path tmp = path.parent_path() / fmt::format(".{}.tmp.{}", path.filename().string(), UniqueSuffix());
  {
    Fd f;
    f.fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (f.fd < 0) throw Error::InFile(path.string(), "cannot create: " + SysError());
    const fault::Action injected = fault::FaultPoint("write");  // TESSEL_FAULT tests: enospc, truncate
    const std::byte* p = bytes.data();
    size_t left = bytes.size();
    while (left > 0) {
      ssize_t n = -1;
      if (injected == fault::Action::kEnospc) {
        errno = ENOSPC;
      } else {
        n = ::write(f.fd, p, left);
      }
      if (n < 0) {
        if (errno == EINTR) continue;
        const std::string why = errno == ENOSPC
                                    ? SysError() + " (the file system is full: free space there or write elsewhere)"
                                    : SysError();
        ::unlink(tmp.c_str());
        throw Error::InFile(path.string(), "write failed: " + why);
      }
      p += n;
      left -= static_cast<size_t>(n);
    }
    // A short file renamed into place, as a lying disk or a copy cut short would leave it: readers must refuse it.
    if (injected == fault::Action::kTruncate && ::ftruncate(f.fd, static_cast<off_t>(bytes.size() / 2)) != 0) {
      throw Error::InFile(path.string(), "injected truncate failed: " + SysError());
    }
    if (::fsync(f.fd) != 0) {
      const std::string why = SysError();
      ::unlink(tmp.c_str());
      throw Error::InFile(path.string(), "fsync failed: " + why);
    }
  }
  try {
    CheckRenameTargetIsFile(path);  // again: something may have appeared there while the file was written
  } catch (const Error&) {
    ::unlink(tmp.c_str());
    throw;
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = SysError();
    ::unlink(tmp.c_str());
    throw Error::InFile(path.string(), "cannot rename into place: " + why);
  }
}

void WriteFileAtomic(const fs::path& path, std::string_view text) {
  WriteFileAtomic(path, std::as_bytes(std::span<const char>(text.data(), text.size())));
}

AtomicDirectory::AtomicDirectory(fs::path final_path, bool overwrite)
    : final_path_(std::move(final_path)), overwrite_(overwrite) {
  if (final_path_.filename().empty()) final_path_ = final_path_.parent_path();
  std::error_code ec;
  if (fs::exists(final_path_, ec) && !overwrite_) {
    throw Error::InFile(final_path_.string(), "already exists; pass --force to replace it");
  }
  CheckRenameTargetIsFolder(final_path_);
  fs::path parent = final_path_.parent_path();
  if (parent.empty()) parent = ".";
  if (!fs::is_directory(parent, ec)) {
    throw Error::InFile(final_path_.string(), "parent folder '" + parent.string() + "' does not exist");
  }
  RemoveStaleTemporaries(final_path_);
  temp_path_ = parent / fmt::format(".{}.tmp.{}", final_path_.filename().string(), UniqueSuffix());
  if (!fs::create_directory(temp_path_, ec)) {
    throw Error::InFile(temp_path_.string(), "cannot create temporary folder: " + ec.message());
  }
}

AtomicDirectory::~AtomicDirectory() {
  if (!committed_) {
    std::error_code ec;
    fs::remove_all(temp_path_, ec);
  }
}

void AtomicDirectory::Commit() {
  std::error_code ec;
  fs::path old;
  CheckRenameTargetIsFolder(final_path_);
  if (fs::exists(final_path_, ec)) {
    if (!overwrite_) throw Error::InFile(final_path_.string(), "already exists; pass --force to replace it");
    // One atomic swap where the file system has it (Linux renameat2): at every instant the path holds the old folder
    // or the new one, so a process killed here (a rank's just-in-time state while mpirun ends the job) never leaves
    // the path empty. The old folder, now at the temporary name, is removed after.
    if (::renameat2(AT_FDCWD, temp_path_.c_str(), AT_FDCWD, final_path_.c_str(), RENAME_EXCHANGE) == 0) {
      committed_ = true;
      fs::remove_all(temp_path_, ec);
      return;
    }
    old = final_path_.parent_path() / fmt::format(".{}.old.{}", final_path_.filename().string(), UniqueSuffix());
    fs::rename(final_path_, old, ec);
    if (ec) throw Error::InFile(final_path_.string(), "cannot move the old output aside: " + ec.message());
  }
  fs::rename(temp_path_, final_path_, ec);
  if (ec) {
    if (!old.empty()) fs::rename(old, final_path_, ec);
    throw Error::InFile(final_path_.string(), "cannot rename the new output into place: " + ec.message());
  }
  committed_ = true;
  if (!old.empty()) fs::remove_all(old, ec);
}

FolderLock::FolderLock(const std::filesystem::path& dir, std::string_view what)
    : fd_(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)) {
  TESSEL_CHECK(fd_ >= 0, "{}: cannot open the folder to lock it: {}", what, std::strerror(errno));
  while (::flock(fd_, LOCK_EX) != 0) {
    if (errno == EINTR) continue;
    const std::string why = std::strerror(errno);
    ::close(fd_);
    throw Error(fmt::format("{}: cannot lock the folder: {}", what, why));
  }
}
FolderLock::~FolderLock() { ::close(fd_); }

}  // namespace tessel
