// minisign signatures of plugin libraries (plugin_signature.hpp), on signatures minisign
// 0.11 made: the default (BLAKE2b-prehashed, "ED") and the legacy one (-l, "Ed"); every
// way a signature can fail says which; keys are read from their line or their file.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "arbiter/host/plugin_signature.hpp"

using arbiter::host::parse_signing_key;
using arbiter::host::SignatureError;
using arbiter::host::SigningKey;
using arbiter::host::verify_signature;

namespace {

// minisign -G -W, twice: the author's key, and somebody else's.
constexpr const char* kAuthor = "RWTe6hBAfIk27z+5RivFGC4V8Snr4t+DSQhdPx5QmLoBpXmFc0wjTTfP";
constexpr const char* kOther = "RWRlZgGKomM35SzfuKmEyKkymwNZIEOmIRxzLhdPmj9ap+Y8ayl6HVHA";

// minisign -S -m lib.bin -t "counter 1.0.0" (prehashed), and -l -t legacy.
constexpr const char* kSigned =
    "untrusted comment: signature from minisign secret key\n"
    "RUTe6hBAfIk270ygboNyldEz5+LnEo5fu4f25vvzmB4a4bK1ygOK+XjluKN+3WMFx6Qw5l5FeFLinoRxeFzY3hQlwAzTu2"
    "DqEA8=\n"
    "trusted comment: counter 1.0.0\n"
    "rAUlNF9oyF82EoLuhdRmpqpDh2SFAAgiHZ18pZvTTcRdEGTxtWCk1hETdiKFRZxmk28YREH/o9uRPNC03l3vCA==\n";
constexpr const char* kLegacy =
    "untrusted comment: signature from minisign secret key\n"
    "RWTe6hBAfIk271jK6msFZE551PgxZoHY3e04WvZKQDy33+GULOJa2rJTNlZayLKNyXdCkjL3ZDW8cEBXqo7ZidjUpmdbhM"
    "DVfws=\n"
    "trusted comment: legacy\n"
    "81FvP3YB0sFATVXiRdbOwGfR1gig2p78gb35T+HrkwoxMIVF6ysQ7wW4lx4MNRcda1X2H3fOQndH+jVd6ljiDg==\n";

std::vector<uint8_t> library() {
    const std::string text = "arbiter: a signed library\n";
    return {text.begin(), text.end()};
}

std::vector<SigningKey> keys(std::initializer_list<std::pair<const char*, const char*>> list) {
    std::vector<SigningKey> out;
    for (const auto& [name, key] : list)
        out.push_back(parse_signing_key(name, key));
    return out;
}

std::string failure(const std::vector<uint8_t>& bytes, const std::string& minisig,
                    const std::vector<SigningKey>& accepted) {
    try {
        verify_signature(bytes, minisig, accepted);
    } catch (const SignatureError& error) {
        return error.what();
    }
    return "";
}

bool mentions(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

}  // namespace

TEST(PluginSignature, MinisignsOwnSignaturesVerify) {
    const auto accepted = keys({{"other", kOther}, {"author", kAuthor}});
    const auto verified = verify_signature(library(), kSigned, accepted);
    EXPECT_EQ(verified.signer, "author");
    EXPECT_EQ(verified.trusted_comment, "counter 1.0.0");
    EXPECT_EQ(verify_signature(library(), kLegacy, accepted).trusted_comment, "legacy");
    // Written on Windows: \r\n line endings.
    std::string crlf;
    for (char c : std::string(kSigned)) crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
    EXPECT_EQ(verify_signature(library(), crlf, accepted).signer, "author");
}

TEST(PluginSignature, KeysReadFromTheirLineOrTheirFile) {
    const SigningKey key = parse_signing_key("author", kAuthor);
    EXPECT_EQ(arbiter::host::key_id_text(key.id), "EF36897C4010EADE");
    const SigningKey from_file = parse_signing_key(
        "author", std::string("untrusted comment: minisign public key EF36897C4010EADE\n") +
                      kAuthor + "\n");
    EXPECT_EQ(from_file, key);
}

TEST(PluginSignature, ABadKeyIsRefusedWithTheReason) {
    auto refused = [](const std::string& text) {
        try {
            parse_signing_key("k", text);
        } catch (const SignatureError& error) {
            return std::string(error.what());
        }
        return std::string("accepted");
    };
    EXPECT_TRUE(mentions(refused(""), "one base64 line")) << refused("");
    EXPECT_TRUE(mentions(refused("RWTe6hBAfIk27z+5"), "56 base64 characters"));
    EXPECT_TRUE(mentions(refused(std::string(kAuthor) + "AA"), "56 base64 characters"));
    EXPECT_TRUE(mentions(refused("not base64 at all, not at all, no, not at all, not it!!!"),
                         "56 base64 characters"));
    // A valid base64 of 42 bytes that is not an Ed25519 key ("RX": 'E', 'w').
    std::string wrong_algorithm = kAuthor;
    wrong_algorithm[1] = 'X';
    EXPECT_TRUE(mentions(refused(wrong_algorithm), "not an Ed25519")) << refused(wrong_algorithm);
    EXPECT_TRUE(mentions(refused(std::string(kAuthor) + "\n" + kOther), "one base64 line"));
}

TEST(PluginSignature, EveryFailureSaysWhich) {
    const auto accepted = keys({{"author", kAuthor}});
    // One byte of the library changed.
    auto changed = library();
    changed[3] ^= 0x01;
    EXPECT_TRUE(mentions(failure(changed, kSigned, accepted),
                         "the signature by 'author' (key EF36897C4010EADE) does not match"));
    EXPECT_TRUE(mentions(failure(changed, kLegacy, accepted), "does not match"));
    // A key the config does not accept for this plugin.
    EXPECT_TRUE(mentions(failure(library(), kSigned, keys({{"other", kOther}})),
                         "signed by key EF36897C4010EADE, which is not one the config accepts "
                         "here (other)"));
    // The trusted comment rewritten (to pass an old build off as a new one).
    std::string comment = kSigned;
    comment.replace(comment.find("counter 1.0.0"), 13, "counter 9.9.9");
    EXPECT_TRUE(mentions(failure(library(), comment, accepted), "the comment was changed"));
    // Not a signature at all, cut short, or huge.
    EXPECT_TRUE(mentions(failure(library(), "hello\n", accepted), "not a minisign signature"));
    std::string cut = kSigned;
    cut.resize(cut.find("trusted comment:"));
    EXPECT_TRUE(mentions(failure(library(), cut, accepted), "not a minisign signature"));
    EXPECT_TRUE(mentions(failure(library(), std::string(5000, 'A'), accepted), "5000 bytes"));
    std::string short_line = kSigned;
    short_line.replace(short_line.find("RUTe"), 8, "RUTe====");
    EXPECT_TRUE(mentions(failure(library(), short_line, accepted), "74 bytes of base64"));
    // Signature bytes turned into another algorithm's tag ("Eq").
    std::string algorithm = kSigned;
    algorithm.replace(algorithm.find("RUTe"), 4, "RXFe");
    EXPECT_FALSE(failure(library(), algorithm, accepted).empty());
}
