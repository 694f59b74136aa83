// A signal's evidence, any bytes: the rule the host and the SDK's harness share
// (arbiter_signal_rules.hpp, a reader of its own) must agree with the JSON reader the host
// reads evidence with later (parse_untrusted_json, nlohmann). Evidence the rule keeps and
// the reader cannot read would break the store and the review page; evidence the reader
// takes and the rule refuses would drop an honest plugin's signal. Two differences are
// allowed, both where nlohmann is the lax one: it skips a UTF-8 byte order mark, and it
// ends the text at a NUL byte (so that "{}\0junk" reads as "{}"); the rule refuses both.
#include <string_view>

#include <arbiter/arbiter_signal_rules.hpp>

#include "arbiter/host/untrusted_text.hpp"
#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view text = arbiter::fuzz::as_text(data, size);
    const bool rule_keeps = arbiter::signal_rules::evidence_problem(text).empty();
    const auto parsed = arbiter::host::parse_untrusted_json(
        text, arbiter::signal_rules::kMaxEvidenceBytes, arbiter::signal_rules::kMaxEvidenceDepth);
    const bool reader_takes = parsed.ok() && parsed.value.is_object();
    if (rule_keeps && !reader_takes) __builtin_trap();
    const bool lax_only =
        text.starts_with("\xEF\xBB\xBF") || text.find('\0') != std::string_view::npos;
    if (reader_takes && !rule_keeps && !lax_only) __builtin_trap();
    return 0;
}
