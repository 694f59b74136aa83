// Negotiation with a plugin's entry function and every check of its answers (ABI rules
// 4 to 6): versions compiled against and required, capability bits of the minor in use,
// the function table read within its declared size. Kept apart from the loading of the
// library so that the rules can be tested against any entry function.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include <arbiter/arbiter_plugin.h>

namespace arbiter::host {

// A plugin's answers broke a rule; what() says which, without the plugin's name or file
// (the caller adds them).
class NegotiationError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

enum class ModelClass : uint32_t;

struct NegotiatedPlugin {
    std::string name, version, contact, description;
    uint32_t abi_major = 0;
    uint32_t abi_minor = 0;           // compiled against
    uint32_t abi_minor_required = 0;  // the oldest host minor it works with
    uint32_t abi_minor_in_use = 0;    // min(host, plugin): the slots and fields both use
    uint32_t schema_major = 0;
    uint32_t schema_minor = 0;           // compiled against
    uint32_t schema_minor_required = 0;  // the oldest stream it can read
    uint64_t capabilities = 0;
    uint32_t model_class = 0;
    // The plugin's table copied up to the size it declared and the minor in use: every
    // slot past either reads as NULL.
    arb_plugin_api api{};
};

// Calls entry with this host's versions and checks everything it answers; throws
// NegotiationError naming the broken rule and, for a version refusal, both versions.
NegotiatedPlugin negotiate(arb_entry_fn entry, const arb_host_services* services, arb_host* host);

}  // namespace arbiter::host
