#include "arbiter/host/plugin_library.hpp"

#include "arbiter/host/file_trust.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <vector>

#include <fmt/format.h>
#include <zlib.h>

#include <spdlog/spdlog.h>
#include "arbiter/host/config_schema_check.hpp"
#include "arbiter/host/elf_symbols.hpp"
#include "arbiter/host/negotiation.hpp"
#include "arbiter/host/sha256.hpp"
#include "arbiter/host/untrusted_text.hpp"

namespace arbiter::host {

namespace {

// A 64-bit fingerprint of a library's bytes for its private copy's name (which build is
// loaded, at a glance): zlib's CRC-32 and Adler-32 side by side. It names, it does not
// guard; a byte-at-a-time hash of the bundled plugins' 15 MB cost more than loading them.
uint64_t content_fingerprint(const std::vector<char>& bytes) {
    const auto* data = reinterpret_cast<const Bytef*>(bytes.data());
    uLong crc = crc32_z(0L, Z_NULL, 0), adler = adler32_z(0L, Z_NULL, 0);
    crc = crc32_z(crc, data, bytes.size());
    adler = adler32_z(adler, data, bytes.size());
    return (static_cast<uint64_t>(adler) << 32) | static_cast<uint64_t>(crc & 0xffffffffu);
}

// Larger than any schema a config table needs; a plugin that returns more is refused
// the check, not the load.
constexpr size_t kMaxConfigSchemaBytes = 1u << 20;

// Asks a plugin with ARB_CAP_DESCRIBE_CONFIG for its config schema. A failure costs the
// early check only: the plugin still checks its table in create.
void read_config_schema(const arb_plugin_api& api, const std::string& label, PluginIdentity& id) {
    if (!api.describe_config) {
        id.config_schema_problem = "the plugin does not describe its config (no describe_config)";
        return;
    }
    arb_string text{};
    const arb_status status = api.describe_config(&text);
    const std::string_view view =
        text.data
            ? std::string_view(text.data, std::min<uint64_t>(text.size, kMaxConfigSchemaBytes))
            : std::string_view();
    if (status != ARB_OK) {
        id.config_schema_problem =
            fmt::format("describe_config failed with {}{}{}", status_name(status),
                        view.empty() ? "" : ": ", escape_for_message(view, 200));
        return;
    }
    if (text.size > kMaxConfigSchemaBytes) {
        id.config_schema_problem =
            fmt::format("describe_config returned {} bytes, more than the {} allowed", text.size,
                        kMaxConfigSchemaBytes);
        return;
    }
    const UntrustedJson parsed = parse_untrusted_json(view, kMaxConfigSchemaBytes);
    if (!parsed.ok() || !parsed.value.is_object()) {
        id.config_schema_problem = "describe_config returned no JSON object: " +
                                   (parsed.ok() ? "another JSON value" : parsed.problem);
        return;
    }
    id.config_schema = parsed.value;
    // Said once, here, rather than at every create: the schema does not change.
    if (const auto unchecked = unchecked_keywords(id.config_schema); !unchecked.empty()) {
        std::string names;
        for (const auto& keyword : unchecked)
            names += (names.empty() ? "" : ", ") + escape_for_message(keyword, 40);
        spdlog::warn(
            "plugin '{}': its config schema uses keywords this host does not check ({}); the "
            "plugin checks them itself in create",
            label, names);
    }
}

}  // namespace

namespace {

constexpr const char* kStoreLock = ".owner.lock";

// Private folders left by processes that were killed (SIGKILL, a crash, a power cut)
// are removed, so that copies of refused or replaced plugins do not pile up. A live
// PluginCopies holds an exclusive flock on its lock file for its whole life and the kernel
// drops it when the process ends, however it ends: a folder whose lock can be taken
// is abandoned. A folder without a lock file is left alone for a minute (one may
// be between mkdtemp and taking its lock), then removed.
void sweep_abandoned_stores(const std::filesystem::path& parent) {
    std::error_code error;
    for (const auto& entry : std::filesystem::directory_iterator(parent, error)) {
        const std::string name = entry.path().filename().string();
        if (!name.starts_with("arbiter-") || name.size() != 14) continue;
        struct stat info {};
        if (::lstat(entry.path().c_str(), &info) != 0 || !S_ISDIR(info.st_mode) ||
            info.st_uid != ::geteuid())
            continue;
        const auto lock_path = entry.path() / kStoreLock;
        const int fd = ::open(lock_path.c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW);
        bool abandoned = false;
        if (fd >= 0) {
            abandoned = ::flock(fd, LOCK_EX | LOCK_NB) == 0;
            ::close(fd);
        } else {
            abandoned = ::time(nullptr) - info.st_mtime > 60;
        }
        if (!abandoned) continue;
        std::error_code ignored;
        const auto removed = std::filesystem::remove_all(entry.path(), ignored);
        spdlog::info(
            "removed {}, the plugin folder of a process that ended without cleaning up "
            "({} files)",
            entry.path().string(), removed > 0 ? removed - 1 : 0);
    }
}

}  // namespace

PluginCopies::PluginCopies(const std::string& dir) {
    // Every PluginCopies makes a folder of its own, inside the configured work folder if there
    // is one: two hosts sharing a work folder must never name a copy alike, or the second
    // would get the first one's library (and its statics) from dlopen, and the first
    // would delete the second's file on release.
    std::filesystem::path parent = dir;
    if (parent.empty()) {
        const char* tmp = std::getenv("TMPDIR");
        parent = tmp && *tmp ? tmp : "/tmp";
    } else {
        if (auto problem = untrusted_own_folder(parent))
            throw PluginError("host.work_dir: " + *problem);
        std::error_code error;
        std::filesystem::create_directories(parent, error);
        if (error)
            throw PluginError("cannot create the plugin work folder " + dir + ": " +
                              error.message());
        // Whoever may write the work folder may rename our private folder inside it.
        if (::chmod(parent.c_str(), 0700) != 0)
            throw PluginError("cannot make the plugin work folder " + dir +
                              " private (mode 0700): " + std::strerror(errno));
    }
    std::string pattern = (parent / "arbiter-XXXXXX").string();
    std::vector<char> buffer(pattern.begin(), pattern.end());
    buffer.push_back('\0');
    // mkdtemp makes the folder with mode 0700: only this user may read or replace the
    // copies that get loaded.
    sweep_abandoned_stores(parent);
    if (!::mkdtemp(buffer.data()))
        throw PluginError("cannot create a private plugin folder from " + pattern + ": " +
                          std::strerror(errno));
    dir_ = buffer.data();
    // The lock file is locked under another name and then renamed into place: another
    // process's sweep that finds a lock file can never take it in the moment between its
    // creation and our flock, and think this folder abandoned.
    const auto lock_path = dir_ / kStoreLock;
    const auto unlocked_path = dir_ / ".lock.new";
    lock_fd_ =
        ::open(unlocked_path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (lock_fd_ < 0 || ::flock(lock_fd_, LOCK_EX | LOCK_NB) != 0 ||
        ::rename(unlocked_path.c_str(), lock_path.c_str()) != 0) {
        const std::string why = std::strerror(errno);
        if (lock_fd_ >= 0) ::close(lock_fd_);
        std::error_code ignored;
        std::filesystem::remove_all(dir_, ignored);
        throw PluginError("cannot lock the private plugin folder " + dir_.string() + ": " + why);
    }
}

PluginCopies::~PluginCopies() {
    if (lock_fd_ >= 0) ::close(lock_fd_);
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
}

namespace {

// The library's bytes against its minisign signature and the keys that may have signed it.
void check_signature(std::span<const uint8_t> bytes, const std::filesystem::path& source,
                     const std::string& label, const LibraryPin& pin) {
    const std::string where = fmt::format("plugin '{}' ({})", label, source.string());
    // Held to the rules of every file the host reads: a regular file (a FIFO would hang
    // the load), small, and written by nobody else.
    std::string minisig;
    try {
        const std::vector<uint8_t> text = read_trusted_file(pin.signature, kSignatureRules);
        minisig.assign(text.begin(), text.end());
    } catch (const std::exception& error) {
        throw PluginError(fmt::format(
            "{}: the config asks for a signature, and it cannot be read: {} (sign the library "
            "with `minisign -S -m {}`)",
            where, error.what(), source.string()));
    }
    try {
        const VerifiedSignature verified = verify_signature(bytes, minisig, pin.signers);
        spdlog::info("{}: signed by '{}' ({})", where, verified.signer, verified.trusted_comment);
    } catch (const SignatureError& error) {
        throw PluginError(fmt::format("{}: {}: {}: refused unloaded", where,
                                      pin.signature.string(), error.what()));
    }
}

}  // namespace

std::filesystem::path PluginCopies::add_copy(const std::filesystem::path& source,
                                            const std::string& label,
                                            const LibraryPin& pin) {
    // Whoever can write the library runs code here: its owner and mode are checked, and
    // its size capped, before a byte of it is copied (file_trust.hpp).
    std::vector<uint8_t> read;
    try {
        read = read_trusted_file(source, kPluginLibraryRules);
    } catch (const std::exception& error) {
        throw PluginError(fmt::format("plugin '{}': {}", label, error.what()));
    }
    if (!pin.sha256.empty()) {
        const std::string actual = sha256_hex(read);
        if (actual != pin.sha256)
            throw PluginError(
                fmt::format("plugin '{}' ({}): its SHA-256 is {}, not the {} the config pins "
                            "(sha256): refused unloaded; if this build is the one to run, pin "
                            "its hash",
                            label, source.string(), actual, pin.sha256));
    }
    if (!pin.signers.empty()) check_signature(read, source, label, pin);
    std::vector<char> bytes(read.begin(), read.end());

    uint64_t generation;
    {
        std::lock_guard lock(mutex_);
        generation = ++generation_;
    }
    std::string stem = source.stem().string();
    auto final_path =
        dir_ / fmt::format("{}-{:016x}-g{}.so", stem, content_fingerprint(bytes), generation);
    auto temporary = dir_ / fmt::format(".{}-g{}.tmp", stem, generation);
    {
        std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
        out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
        out.close();
        if (!out)
            throw PluginError(fmt::format("plugin '{}': cannot write its private copy {}: {}",
                                          label, temporary.string(), std::strerror(errno)));
    }
    ::chmod(temporary.c_str(), 0500);
    std::error_code error;
    std::filesystem::rename(temporary, final_path, error);
    if (error)
        throw PluginError(fmt::format("plugin '{}': cannot rename its private copy into place: {}",
                                      label, error.message()));
    return final_path;
}

std::shared_ptr<PluginLibrary> PluginLibrary::load(const std::filesystem::path& source,
                                                   const std::string& label, PluginCopies& copies,
                                                   Metrics* metrics,
                                                   const LibraryPin& pin) {
    std::shared_ptr<PluginLibrary> plugin = copy_for_isolation(source, label, copies, pin);
    plugin->open(metrics);
    return plugin;
}

std::shared_ptr<PluginLibrary> PluginLibrary::copy_for_isolation(
    const std::filesystem::path& source, const std::string& label, PluginCopies& copies,
    const LibraryPin& pin) {
    std::shared_ptr<PluginLibrary> plugin(new PluginLibrary());
    plugin->label_ = label;
    plugin->source_ = source;
    std::error_code exists_error;
    if (!std::filesystem::is_regular_file(source, exists_error))
        throw PluginError(fmt::format("plugin '{}' ({}): {}", label, source.string(),
                                      std::filesystem::exists(source, exists_error)
                                          ? "not a regular file"
                                          : "file not found"));
    plugin->copy_ = copies.add_copy(source, label, pin);
    plugin->owns_copy_ = true;
    return plugin;
}

std::shared_ptr<PluginLibrary> PluginLibrary::open_copy(const std::filesystem::path& copy,
                                                        const std::filesystem::path& source,
                                                        const std::string& label,
                                                        Metrics* metrics) {
    std::shared_ptr<PluginLibrary> plugin(new PluginLibrary());
    plugin->label_ = label;
    plugin->source_ = source;
    plugin->copy_ = copy;
    plugin->owns_copy_ = false;
    plugin->open(metrics);
    return plugin;
}

void PluginLibrary::open(Metrics* metrics) {
    const std::string where = fmt::format("plugin '{}' ({})", label_, source_.string());
    auto refuse = [&](const std::string& reason) { return PluginError(where + ": " + reason); };

    boost::dll::fs::error_code load_error;
    library_.load(copy_, load_error,
                  boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local);
    if (load_error) {
        // Boost.DLL keeps dlerror()'s text to itself; ask the loader once more for it.
        std::string detail = load_error.message();
        if (void* handle = ::dlopen(copy_.c_str(), RTLD_NOW | RTLD_LOCAL)) {
            ::dlclose(handle);
        } else if (const char* text = ::dlerror()) {
            detail = text;
        }
        std::error_code ignored;
        if (owns_copy_) std::filesystem::remove(copy_, ignored);
        // dlerror() names the private copy; the operator knows the file by its own name.
        for (auto at = detail.find(copy_.string()); at != std::string::npos;
             at = detail.find(copy_.string(), at + source_.string().size()))
            detail.replace(at, copy_.string().size(), source_.string());
        throw refuse("not a loadable shared library: " + detail);
    }
    if (!library_.has(ARB_ENTRY_SYMBOL))
        throw refuse("no entry symbol " ARB_ENTRY_SYMBOL
                     " (not an Arbiter plugin, or built without ARBITER_PLUGIN)");
    auto& entry = library_.get<arb_status(arb_negotiation*)>(ARB_ENTRY_SYMBOL);

    library_context_.plugin_name = label_;
    library_context_.metrics = metrics;
    NegotiatedPlugin negotiated;
    try {
        negotiated = negotiate(&entry, host_services_table(), library_context_.handle());
    } catch (const NegotiationError& error) {
        throw refuse(error.what());
    }
    identity_ = std::move(negotiated.identity);
    api_ = negotiated.api;
    read_config_schema(api_, label_, identity_);
}

std::string PluginLibrary::sha256() const {
    return sha256_hex(read_trusted_file(copy_, kPluginLibraryRules));
}

PluginLibrary::~PluginLibrary() {
    library_.unload();
    // docs/abi-rules.md, rule 14: a library that stays mapped after release (GNU unique symbols, a
    // thread_local with a destructor) would hand its old statics to a later load.
    if (owns_copy_ && !copy_.empty()) {
        if (library_still_resident(copy_)) {
            spdlog::warn(
                "plugin '{}': {} is still resident after release (unique symbols or thread_local "
                "destructors keep it loaded; `arbiter check-plugin` names them)",
                label_, copy_.string());
        }
        std::error_code ignored;
        std::filesystem::remove(copy_, ignored);
    }
}

}  // namespace arbiter::host
