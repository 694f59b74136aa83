#include "arbiter/host/file_trust.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

namespace arbiter::host {

namespace {

bool owner_is_trusted(uid_t owner) {
    return owner == ::geteuid() || owner == 0;
}

std::string mode_text(mode_t mode) {
    return fmt::format("{:04o}", mode & 07777);
}

// Others than the owner may write it: the world write bit, or the group's for a group
// other than this process's own (with user-private groups, umask 002 makes every file
// group-writable by its owner's own group, which is no one else). A folder with the
// sticky bit (/tmp) lets no one replace another's file, so its write bits are no threat.
bool others_may_write(const struct stat& info) {
    if (S_ISDIR(info.st_mode) && (info.st_mode & S_ISVTX)) return false;
    if (info.st_mode & S_IWOTH) return true;
    return (info.st_mode & S_IWGRP) && info.st_gid != ::getegid();
}

// The checks on the file itself and its folder, given what stat (or fstat) said of it.
std::optional<std::string> untrusted_file_info(const std::filesystem::path& path,
                                               const struct stat& info, const FileRules& rules) {
    if (!S_ISREG(info.st_mode))
        return fmt::format("{} {}: not a regular file", rules.what, path.string());
    if (!owner_is_trusted(info.st_uid))
        return fmt::format(
            "{} {}: owned by uid {}, not by this user (uid {}) or root: whoever owns it "
            "decides what it holds",
            rules.what, path.string(), info.st_uid, ::geteuid());
    if (others_may_write(info))
        return fmt::format(
            "{} {}: others may write it (mode {}); make it writable by its owner alone "
            "(chmod go-w)",
            rules.what, path.string(), mode_text(info.st_mode));
    if (rules.secret && (info.st_mode & (S_IRGRP | S_IROTH)))
        return fmt::format(
            "{} {}: others may read it (mode {}); a secret is for its owner alone "
            "(chmod 600)",
            rules.what, path.string(), mode_text(info.st_mode));
    if (static_cast<uint64_t>(info.st_size) > rules.max_bytes)
        return fmt::format("{} {}: {} bytes, over the {} bytes a {} may have", rules.what,
                           path.string(), info.st_size, rules.max_bytes, rules.what);
    // Whoever may write the folder may put another file in its place.
    std::error_code error;
    const auto real = std::filesystem::canonical(path, error);
    const auto folder = (error ? path : real).parent_path();
    struct stat folder_info {};
    if (!folder.empty() && ::stat(folder.c_str(), &folder_info) == 0) {
        if (!owner_is_trusted(folder_info.st_uid))
            return fmt::format("{} {}: its folder {} is owned by uid {}, not by this user or root",
                               rules.what, path.string(), folder.string(), folder_info.st_uid);
        if (others_may_write(folder_info))
            return fmt::format("{} {}: others may write its folder {} (mode {}) and replace it",
                               rules.what, path.string(), folder.string(),
                               mode_text(folder_info.st_mode));
    }
    return std::nullopt;
}

}  // namespace

std::optional<std::string> untrusted_file(const std::filesystem::path& path,
                                          const FileRules& rules) {
    struct stat info {};
    if (::stat(path.c_str(), &info) != 0)
        return fmt::format("{} {}: cannot read it: {}", rules.what, path.string(),
                           std::strerror(errno));
    return untrusted_file_info(path, info, rules);
}

std::vector<uint8_t> read_trusted_file(const std::filesystem::path& path, const FileRules& rules) {
    // Opened first, then checked through the descriptor: the file read is the file checked,
    // whatever is renamed over the path meanwhile.
    // O_NONBLOCK: a FIFO put in its place must not hang the open (it is refused below).
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        throw std::runtime_error(fmt::format("{} {}: cannot read it: {}", rules.what, path.string(),
                                             std::strerror(errno)));
    struct stat info {};
    std::optional<std::string> problem = ::fstat(fd, &info) == 0
                                             ? untrusted_file_info(path, info, rules)
                                             : fmt::format("{} {}: cannot read it: {}", rules.what,
                                                           path.string(), std::strerror(errno));
    if (problem) {
        ::close(fd);
        throw std::runtime_error(*problem);
    }
    // Read to the cap and one byte past it: a file that grew since the check is refused too.
    std::vector<uint8_t> bytes;
    uint8_t chunk[65536];
    while (true) {
        const ssize_t got = ::read(fd, chunk, sizeof chunk);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) {
            const std::string why = std::strerror(errno);
            ::close(fd);
            throw std::runtime_error(
                fmt::format("{} {}: cannot read it: {}", rules.what, path.string(), why));
        }
        if (got == 0) break;
        bytes.insert(bytes.end(), chunk, chunk + got);
        if (bytes.size() > rules.max_bytes) {
            ::close(fd);
            throw std::runtime_error(fmt::format("{} {}: over the {} bytes a {} may have",
                                                 rules.what, path.string(), rules.max_bytes,
                                                 rules.what));
        }
    }
    ::close(fd);
    return bytes;
}

std::optional<std::string> untrusted_own_folder(const std::filesystem::path& path) {
    struct stat info {};
    if (::lstat(path.c_str(), &info) != 0) return std::nullopt;  // absent: it will be made
    if (S_ISLNK(info.st_mode))
        return fmt::format(
            "{} is a symbolic link; the plugin work folder must be a folder of its own",
            path.string());
    if (!S_ISDIR(info.st_mode)) return fmt::format("{} exists and is not a folder", path.string());
    if (info.st_uid != ::geteuid())
        return fmt::format(
            "{} is owned by uid {}, not by this user (uid {}): it could not be kept private",
            path.string(), info.st_uid, ::geteuid());
    return std::nullopt;
}

}  // namespace arbiter::host
