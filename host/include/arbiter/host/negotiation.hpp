// Negotiation with a plugin's entry function and every check of its answers (ABI rules
// 4 to 6): versions compiled against and required, capability bits of the minor in use,
// the function table read within its declared size. Kept apart from the loading of the
// library so that the rules can be tested against any entry function.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include <arbiter/arbiter_plugin.h>
#include "arbiter/host/config.hpp"

namespace arbiter::host {

// A plugin's answers broke a rule; what() says which, without the plugin's name or file
// (the caller adds them).
class NegotiationError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

// What negotiation told us about a plugin.
struct PluginIdentity {
    std::string name;
    std::string version;
    std::string contact;
    std::string description;
    uint32_t abi_major = 0, abi_minor = 0;  // compiled against
    uint32_t abi_minor_required = 0;        // the oldest host minor it works with
    uint32_t abi_minor_in_use = 0;          // what this host and the plugin both speak
    uint32_t schema_major = 0, schema_minor = 0;
    uint32_t schema_minor_required = 0;
    uint64_t capabilities = 0;
    ModelClass declared_class = ModelClass::validation;
    // The JSON Schema of the plugin's config table (describe_config), parsed once when
    // the library is loaded: an object, or null with config_schema_problem saying why
    // there is none to check against.
    nlohmann::json config_schema;
    std::string config_schema_problem;
};

struct NegotiatedPlugin {
    PluginIdentity identity;
    // The plugin's table copied up to the size it declared and the minor in use: every
    // slot past either reads as NULL.
    arb_plugin_api api{};
};

// Calls entry with this host's versions and checks everything it answers; throws
// NegotiationError naming the broken rule and, for a version refusal, both versions.
NegotiatedPlugin negotiate(arb_entry_fn entry, const arb_host_services* services, arb_host* host);

// "1.1", or "1.1 (requires 1.0)" when the plugin works with older ones too.
std::string describe_version(uint32_t major, uint32_t minor, uint32_t required);
// "state,reconfigure", or "-" for none.
std::string describe_capabilities(uint64_t bits);
// "ARB_ERR_CONFIG" and so on.
const char* status_name(arb_status status);

}  // namespace arbiter::host
