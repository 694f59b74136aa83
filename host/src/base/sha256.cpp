#include "arbiter/host/sha256.hpp"

#include <sodium.h>

#include <stdexcept>

namespace arbiter::host {

std::string sha256_hex(std::span<const uint8_t> bytes) {
    // sodium_init is idempotent and thread-safe; -1 only when it cannot start at all.
    static const bool ready = sodium_init() >= 0;
    if (!ready) throw std::runtime_error("libsodium could not be initialised");
    unsigned char digest[crypto_hash_sha256_BYTES];
    crypto_hash_sha256(digest, bytes.data(), bytes.size());
    char hex[crypto_hash_sha256_BYTES * 2 + 1];
    sodium_bin2hex(hex, sizeof hex, digest, sizeof digest);
    return std::string(hex, crypto_hash_sha256_BYTES * 2);
}

}  // namespace arbiter::host
