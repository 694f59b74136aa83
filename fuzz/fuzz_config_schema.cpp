// A plugin's config schema (what describe_config answers: plugin-written, so untrusted)
// checked against an operator's table: any pair of JSON texts, a NUL between them, gives
// a verdict or nothing, never a crash. Both are parsed as the host parses them.
#include <cstring>

#include "arbiter/host/config_schema_check.hpp"
#include "arbiter/host/untrusted_text.hpp"
#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view input = arbiter::fuzz::as_text(data, size);
    const size_t split = input.find('\0');
    const std::string_view schema_text = input.substr(0, split);
    const std::string_view table_text =
        split == std::string_view::npos ? std::string_view("{}") : input.substr(split + 1);
    const auto schema = arbiter::host::parse_untrusted_json(schema_text, 1u << 20);
    const auto table = arbiter::host::parse_untrusted_json(table_text, 1u << 20);
    if (!schema.ok() || !table.ok()) return 0;
    (void)arbiter::host::unchecked_keywords(schema.value);
    (void)arbiter::host::check_against_schema(table.value, schema.value);
    return 0;
}
