// A plugin's minisign signature file and a [signing] key, on any text: a SignatureError
// saying what is wrong, never a crash, and never a signature accepted that the key did not
// make. The seeds are minisign's own signatures of the library below (the default and the
// legacy kind) and the key that made them, so mutations reach every check after the format.
#include <string>
#include <vector>

#include "arbiter/host/plugin_signature.hpp"
#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace arbiter::host;
    static const std::vector<SigningKey> keys = {
        parse_signing_key("author", "RWTe6hBAfIk27z+5RivFGC4V8Snr4t+DSQhdPx5QmLoBpXmFc0wjTTfP")};
    static const std::string library = "arbiter: a signed library\n";
    const std::string_view text = arbiter::fuzz::as_text(data, size);
    try {
        (void)parse_signing_key("fuzzed", text);
    } catch (const SignatureError&) {
    }
    try {
        const auto verified = verify_signature(
            {reinterpret_cast<const uint8_t*>(library.data()), library.size()}, text, keys);
        // Only the author's own two signatures verify; any other text that does is a forgery.
        if (verified.signer != "author") __builtin_trap();
    } catch (const SignatureError&) {
    }
    return 0;
}
