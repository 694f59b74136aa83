// Loading a plugin library: the private copy (docs/abi-rules.md, rule 12), Boost.DLL,
// negotiation and every check of the plugin's answers. A refusal names the file and the
// reason.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>

#include <boost/dll/shared_library.hpp>

#include <arbiter/arbiter_plugin.h>
#include "arbiter/host/plugin_signature.hpp"
#include "arbiter/host/config.hpp"
#include "arbiter/host/host_services.hpp"
#include "arbiter/host/negotiation.hpp"

namespace arbiter::host {

class PluginError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

// The private folder that holds the copies of loaded plugins (mode 0700), and the
// generation counter that names them. (Not the store reviewers work from: store/.)
class PluginCopies {
  public:
    // Makes a new private folder (mode 0700) under dir, or under $TMPDIR when dir is "";
    // it is removed again on destruction. The folder is locked while this lives;
    // folders of earlier processes that died holding theirs are removed first.
    explicit PluginCopies(const std::string& dir = "");
    ~PluginCopies();
    PluginCopies(const PluginCopies&) = delete;
    PluginCopies& operator=(const PluginCopies&) = delete;

    // Copies a library in under a name made from its content hash and a new generation
    // number (written to a temporary name, then renamed). Throws PluginError.
    // `pin` says what the bytes must satisfy: the SHA-256 the operator pinned, and a
    // signature by one of the keys it names; bytes that fail either are refused before any
    // copy is written. (The hash is taken only for a pin: it costs more than the copy's own
    // name, a CRC, for every load.)
    std::filesystem::path add_copy(const std::filesystem::path& source, const std::string& label,
                                   const LibraryPin& pin = {});
    const std::filesystem::path& dir() const { return dir_; }

  private:
    std::filesystem::path dir_;
    int lock_fd_ = -1;  // flock held for this object's life
    std::mutex mutex_;
    uint64_t generation_ = 0;
};

// One loaded copy of a plugin. Instances hold it by shared_ptr, so the library is
// released only after its last instance is destroyed.
class PluginLibrary {
  public:
    // label names the plugin in messages (its key in server_config.toml).
    // `pin`: the SHA-256 the operator pinned and the keys one of which must have signed the
    // library (plugin_signature.hpp); a library that fails either is refused. The bytes
    // checked are those written to the private copy, in a folder of the host's own, so
    // nothing can swap them before the load.
    static std::shared_ptr<PluginLibrary> load(const std::filesystem::path& source,
                                               const std::string& label, PluginCopies& copies,
                                               Metrics* metrics, const LibraryPin& pin = {});
    // The copy alone, checked against `pin`, for a plugin that runs in a child process
    // (isolation = "process"): nothing of it is loaded here. The child loads the copy
    // (open_copy) and negotiates; adopt_identity then records what it answered.
    static std::shared_ptr<PluginLibrary> copy_for_isolation(const std::filesystem::path& source,
                                                             const std::string& label,
                                                             PluginCopies& copies,
                                                             const LibraryPin& pin = {});
    // The runner's side: loads a copy the host made (and keeps; it is not removed here).
    static std::shared_ptr<PluginLibrary> open_copy(const std::filesystem::path& copy,
                                                    const std::filesystem::path& source,
                                                    const std::string& label, Metrics* metrics);
    void adopt_identity(PluginIdentity identity) { identity_ = std::move(identity); }
    // Whether the library is loaded in this process (false for an isolated plugin's).
    bool in_process() const { return library_.is_loaded(); }
    ~PluginLibrary();
    PluginLibrary(const PluginLibrary&) = delete;
    PluginLibrary& operator=(const PluginLibrary&) = delete;

    const PluginIdentity& identity() const { return identity_; }
    // The plugin's table, copied up to the size the plugin declared: slots the plugin
    // does not have read as NULL.
    const arb_plugin_api& api() const { return api_; }
    bool has(uint64_t capability) const { return (identity_.capabilities & capability) != 0; }
    const std::filesystem::path& source() const { return source_; }
    const std::filesystem::path& private_copy() const { return copy_; }
    // The SHA-256 of what was loaded (64 lower-case hex digits), read from the private
    // copy when asked (check-plugin shows it; a pinned load has checked it already).
    std::string sha256() const;
    const std::string& label() const { return label_; }

  private:
    PluginLibrary() = default;
    // dlopen of the copy, negotiation and the config schema; throws PluginError.
    void open(Metrics* metrics);

    std::string label_;
    std::filesystem::path source_;
    std::filesystem::path copy_;
    bool owns_copy_ = false;  // removed with this object (the host's copies)
    boost::dll::shared_library library_;
    PluginIdentity identity_;
    arb_plugin_api api_{};
    ServiceContext library_context_;
};

}  // namespace arbiter::host
