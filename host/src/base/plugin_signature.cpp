#include "arbiter/host/plugin_signature.hpp"

#include <sodium.h>

#include <algorithm>

namespace arbiter::host {

namespace {

void start_sodium() {
    // sodium_init is idempotent and thread-safe; -1 only when it cannot start at all.
    static const bool ready = sodium_init() >= 0;
    if (!ready) throw SignatureError("libsodium could not be initialised");
}

std::string_view trim(std::string_view text) {
    while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
    while (!text.empty() &&
           (text.back() == ' ' || text.back() == '\t' || text.back() == '\r'))
        text.remove_suffix(1);
    return text;
}

// The lines of a file, each without its line ending (\n or \r\n), empty ones at the end
// left out. Nothing else is trimmed: a trusted comment is signed byte for byte.
std::vector<std::string_view> lines_of(std::string_view text) {
    std::vector<std::string_view> lines;
    while (!text.empty()) {
        const size_t end = text.find('\n');
        std::string_view line = text.substr(0, end);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        lines.push_back(line);
        if (end == std::string_view::npos) break;
        text.remove_prefix(end + 1);
    }
    while (!lines.empty() && trim(lines.back()).empty()) lines.pop_back();
    return lines;
}

// Standard base64 of exactly `size` bytes (nothing more, nothing less).
bool decode_exactly(std::string_view text, uint8_t* out, size_t size) {
    text = trim(text);
    size_t decoded = 0;
    const char* end = nullptr;
    if (sodium_base642bin(out, size, text.data(), text.size(), nullptr, &decoded, &end,
                          sodium_base64_VARIANT_ORIGINAL) != 0)
        return false;
    return decoded == size && end == text.data() + text.size();
}

}  // namespace

std::string key_id_text(const std::array<uint8_t, 8>& id) {
    // minisign prints the id as a little-endian 64-bit number in hex.
    static const char* digits = "0123456789ABCDEF";
    std::string text;
    for (size_t i = id.size(); i-- > 0;) {
        text += digits[id[i] >> 4];
        text += digits[id[i] & 0xF];
    }
    return text;
}

SigningKey parse_signing_key(const std::string& name, std::string_view text) {
    start_sodium();
    std::vector<std::string_view> lines = lines_of(text);
    if (!lines.empty() && lines.front().starts_with("untrusted comment:"))
        lines.erase(lines.begin());
    if (lines.size() != 1)
        throw SignatureError("expected a minisign public key: one base64 line (\"RW...\")");
    uint8_t raw[2 + 8 + 32];
    if (!decode_exactly(lines.front(), raw, sizeof raw))
        throw SignatureError("expected a minisign public key: 56 base64 characters (\"RW...\")");
    if (raw[0] != 'E' || raw[1] != 'd')
        throw SignatureError("not an Ed25519 minisign public key (it does not start \"RW\")");
    SigningKey key;
    key.name = name;
    std::copy(raw + 2, raw + 10, key.id.begin());
    std::copy(raw + 10, raw + 42, key.public_key.begin());
    return key;
}

VerifiedSignature verify_signature(std::span<const uint8_t> bytes, std::string_view minisig,
                                   std::span<const SigningKey> keys) {
    start_sodium();
    if (minisig.size() > kMaxSignatureFileBytes)
        throw SignatureError("the signature file is " + std::to_string(minisig.size()) +
                             " bytes; a minisign signature is four short lines");
    const std::vector<std::string_view> lines = lines_of(minisig);
    constexpr std::string_view kTrusted = "trusted comment:";
    if (lines.size() != 4 || !lines[0].starts_with("untrusted comment:") ||
        !lines[2].starts_with(kTrusted))
        throw SignatureError(
            "not a minisign signature (expected four lines: an untrusted comment, the "
            "signature, a trusted comment, the global signature)");
    uint8_t signature[2 + 8 + crypto_sign_BYTES];
    if (!decode_exactly(lines[1], signature, sizeof signature))
        throw SignatureError("the signature line is not 74 bytes of base64");
    const bool prehashed = signature[0] == 'E' && signature[1] == 'D';
    if (!prehashed && !(signature[0] == 'E' && signature[1] == 'd'))
        throw SignatureError("not an Ed25519 minisign signature");
    std::array<uint8_t, 8> id{};
    std::copy(signature + 2, signature + 10, id.begin());
    const auto key = std::find_if(keys.begin(), keys.end(),
                                  [&](const SigningKey& k) { return k.id == id; });
    if (key == keys.end()) {
        std::string names;
        for (const SigningKey& k : keys) names += (names.empty() ? "" : ", ") + k.name;
        throw SignatureError("signed by key " + key_id_text(id) +
                             ", which is not one the config accepts here (" + names + ")");
    }
    const uint8_t* ed25519 = signature + 10;
    bool valid;
    if (prehashed) {
        uint8_t digest[crypto_generichash_BYTES_MAX];
        crypto_generichash(digest, sizeof digest, bytes.data(), bytes.size(), nullptr, 0);
        valid = crypto_sign_verify_detached(ed25519, digest, sizeof digest,
                                            key->public_key.data()) == 0;
    } else {
        valid = crypto_sign_verify_detached(ed25519, bytes.data(), bytes.size(),
                                            key->public_key.data()) == 0;
    }
    if (!valid)
        throw SignatureError("the signature by '" + key->name + "' (key " + key_id_text(id) +
                             ") does not match the library's bytes");
    // The global signature covers the signature and the trusted comment.
    std::string_view comment = lines[2].substr(kTrusted.size());
    if (comment.starts_with(' ')) comment.remove_prefix(1);  // minisign writes one space
    uint8_t global[crypto_sign_BYTES];
    if (!decode_exactly(lines[3], global, sizeof global))
        throw SignatureError("the global signature line is not 64 bytes of base64");
    std::vector<uint8_t> covered(ed25519, ed25519 + crypto_sign_BYTES);
    covered.insert(covered.end(), comment.begin(), comment.end());
    if (crypto_sign_verify_detached(global, covered.data(), covered.size(),
                                    key->public_key.data()) != 0)
        throw SignatureError("the trusted comment's signature by '" + key->name +
                             "' does not match (the comment was changed)");
    return {key->name, std::string(comment)};
}

}  // namespace arbiter::host
