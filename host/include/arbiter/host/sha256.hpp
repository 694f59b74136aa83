// SHA-256 of a plugin library's bytes, as `sha256sum` prints it: what an operator pins in
// `[plugins.NAME] sha256` and what `arbiter check-plugin` shows. libsodium computes it
// (Debian's libsodium, chosen for this and for the Ed25519 signatures that pinned files
// will also take: one well-kept crypto library rather than code of ours).
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace arbiter::host {

// 64 lower-case hexadecimal digits.
std::string sha256_hex(std::span<const uint8_t> bytes);

}  // namespace arbiter::host
