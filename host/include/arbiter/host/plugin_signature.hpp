// Detached Ed25519 signatures of plugin libraries, in minisign's format, so that a plugin's
// author signs with Debian's `minisign -S -m plugin.so` and the operator lists the author's
// public key (the "RW..." line of minisign.pub) in server_config.toml ([signing] keys).
// libsodium checks the signatures; this file only reads minisign's two small formats.
//
// minisign's formats (https://jedisct1.github.io/minisign/):
//   public key: base64 of "Ed" | key id (8 bytes) | Ed25519 public key (32 bytes)
//   .minisig:   "untrusted comment: ..." line
//               base64 of "Ed" or "ED" | key id (8) | signature (64) line
//               "trusted comment: ..." line
//               base64 of the global signature (64) line
// "ED" signs the BLAKE2b-512 of the file (minisign's default since 0.8), "Ed" the file
// itself; the global signature signs the signature and the trusted comment, so that the
// comment cannot be changed either.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace arbiter::host {

struct SigningKey {
    std::string name;  // the operator's name for it ([signing] keys)
    std::array<uint8_t, 8> id{};
    std::array<uint8_t, 32> public_key{};
    bool operator==(const SigningKey&) const = default;
};

struct SignatureError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// A minisign public key: its base64 line ("RW..."), or the whole minisign.pub with its
// comment line. Throws SignatureError saying what is wrong with it.
SigningKey parse_signing_key(const std::string& name, std::string_view text);

struct VerifiedSignature {
    std::string signer;           // the name of the key that signed
    std::string trusted_comment;  // as signed
};

// Checks the text of a .minisig file against a library's bytes and the keys that may have
// signed it. Throws SignatureError naming what failed: the format, a key nobody listed
// (with its id), or a signature that does not match the bytes.
VerifiedSignature verify_signature(std::span<const uint8_t> bytes, std::string_view minisig,
                                   std::span<const SigningKey> keys);

// The most a .minisig file may be: four short lines.
inline constexpr size_t kMaxSignatureFileBytes = 4096;

// What must hold of a library's bytes before a copy of it is loaded: its SHA-256 (when
// pinned) and a signature by one of `signers` in `signature` (when any is named).
struct LibraryPin {
    std::string sha256;                // 64 lower-case hex digits, or "" for none
    std::vector<SigningKey> signers;   // empty: no signature asked for
    std::filesystem::path signature;   // the .minisig file
    bool operator==(const LibraryPin&) const = default;
};

// The key id as minisign prints it ("5CFD1D86070CEB8B").
std::string key_id_text(const std::array<uint8_t, 8>& id);

}  // namespace arbiter::host
