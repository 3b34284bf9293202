// write_tuning_table_file (libcomm/tuning.hpp): a table reaches its file whole or not at
// all. The text goes to a temporary file beside the target, is flushed to disk, and is
// renamed over the target; rename within one directory replaces the name in one step, so
// a reader (a later run's LIBCOMM_TUNING, another job) opens the old file or the new one.
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <string>
#include <system_error>

#include "libcomm/error.hpp"
#include "libcomm/tuning.hpp"

namespace libcomm {
namespace {

// Throws the error of `step` ("writing", ...) on the temporary file `tmp`, with its errno.
[[noreturn]] void fail(const std::string& path, const std::string& tmp, const char* step, int err,
                       const char* after = "") {
  throw Error("cannot write tuning table '" + path + "': " + step + " the temporary file '" + tmp + "'" + after +
              ": " + std::error_code(err, std::generic_category()).message());
}

// The same after closing `fd` (when open) and removing the temporary.
[[noreturn]] void fail_and_remove(const std::string& path, const std::string& tmp, int fd, const char* step, int err,
                                  const char* after = "") {
  if (fd >= 0) ::close(fd);
  ::unlink(tmp.c_str());
  fail(path, tmp, step, err, after);
}

}  // namespace

void write_tuning_table_file(const std::string& path, const std::string& text) {
  require(!path.empty(), "write_tuning_table_file: the path is empty");
  static std::atomic<unsigned> counter{0};
  // Same directory as the target (rename does not cross file systems); O_EXCL: never
  // another process's temporary, nor a file that happens to have the name. Mode 0666 less
  // the umask, as for any new file.
  std::string tmp;
  int fd = -1;
  for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
    tmp = path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter.fetch_add(1));
    fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 && errno != EEXIST) break;
  }
  // (Each failure below passes errno as it stands after the step: nothing else in the call
  // can change it.)
  if (fd < 0) fail(path, tmp, "creating", errno);
  const char* p = text.data();
  std::size_t left = text.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail_and_remove(path, tmp, fd, "writing", n < 0 ? errno : EIO);
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  // On disk before the name points at it: after a crash the name holds the old table or the
  // whole new one. (EINVAL: a file that cannot be synced; nothing to wait for.)
  if (::fsync(fd) != 0 && errno != EINVAL) fail_and_remove(path, tmp, fd, "flushing", errno);
  if (::close(fd) != 0) fail_and_remove(path, tmp, -1, "closing", errno);
  if (::rename(tmp.c_str(), path.c_str()) != 0) fail_and_remove(path, tmp, -1, "renaming", errno, " over it");
}

}  // namespace libcomm
