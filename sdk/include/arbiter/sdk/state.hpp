// State helpers for hot reload (ABI rule 13): write a plugin's state into a sealed,
// versioned blob, and read one back only after checking it.
//
// Blob layout, little-endian:
//   "ARBS" | tag (4 bytes, the plugin's choice) | version u32 | payload size u64 |
//   FNV-1a-64 of the payload u64 | payload
// StateReader refuses a blob whose magic, tag, size or checksum is off, or whose version
// is newer than the reader knows, and every read past the payload's end throws. A plugin
// that keeps its state as a FlatBuffer instead uses read_flatbuffer_state, which runs
// the FlatBuffers Verifier. Either way a bad blob is a StateError, which the SDK turns
// into ARB_ERR_STATE: the host then starts the new instance fresh and says so.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <flatbuffers/flatbuffers.h>

namespace arbiter {

class StateError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

namespace detail {
inline uint64_t fnv1a64(std::span<const uint8_t> bytes) {
    uint64_t hash = 0xcbf29ce484222325ull;
    for (uint8_t byte : bytes) {
        hash ^= byte;
        hash *= 0x100000001b3ull;
    }
    return hash;
}
inline constexpr size_t kStateHeaderSize = 4 + 4 + 4 + 8 + 8;
}  // namespace detail

class StateWriter {
  public:
    // tag: four characters that name the plugin's state format, e.g. "REF1".
    StateWriter(std::string_view tag, uint32_t version) : tag_(tag), version_(version) {
        if (tag_.size() != 4) throw std::invalid_argument("a state tag has four characters");
    }

    template <class T>
    requires std::is_arithmetic_v<T>
    void put(T value) { append_raw(&value, sizeof(T)); }

    void put_string(std::string_view text) {
        put<uint64_t>(text.size());
        append_raw(text.data(), text.size());
    }

    void put_bytes(std::span<const uint8_t> bytes) {
        put<uint64_t>(bytes.size());
        append_raw(bytes.data(), bytes.size());
    }

    // The sealed blob.
    std::vector<uint8_t> finish() const {
        std::vector<uint8_t> blob;
        blob.reserve(detail::kStateHeaderSize + payload_.size());
        append(blob, "ARBS", 4);
        append(blob, tag_.data(), 4);
        append_value(blob, version_);
        append_value(blob, static_cast<uint64_t>(payload_.size()));
        append_value(blob, detail::fnv1a64(payload_));
        blob.insert(blob.end(), payload_.begin(), payload_.end());
        return blob;
    }

  private:
    void append_raw(const void* data, size_t size) {
        if (size == 0) return;
        size_t at = payload_.size();
        payload_.resize(at + size);
        std::memcpy(payload_.data() + at, data, size);
    }
    static void append(std::vector<uint8_t>& out, const void* data, size_t size) {
        auto bytes = static_cast<const uint8_t*>(data);
        out.insert(out.end(), bytes, bytes + size);
    }
    template <class T>
    static void append_value(std::vector<uint8_t>& out, T value) {
        append(out, &value, sizeof value);
    }

    std::string tag_;
    uint32_t version_;
    std::vector<uint8_t> payload_;
};

class StateReader {
  public:
    // Checks the seal. max_version: the newest version this plugin can read.
    StateReader(std::span<const uint8_t> blob, std::string_view tag, uint32_t max_version) {
        if (blob.size() < detail::kStateHeaderSize)
            throw StateError("state blob of " + std::to_string(blob.size()) +
                             " bytes is shorter than its header");
        if (std::memcmp(blob.data(), "ARBS", 4) != 0)
            throw StateError("state blob does not begin with ARBS");
        if (tag.size() != 4 || std::memcmp(blob.data() + 4, tag.data(), 4) != 0)
            throw StateError("state blob has tag '" +
                             std::string(reinterpret_cast<const char*>(blob.data() + 4), 4) +
                             "', expected '" + std::string(tag) + "'");
        std::memcpy(&version_, blob.data() + 8, 4);
        uint64_t size = 0, checksum = 0;
        std::memcpy(&size, blob.data() + 12, 8);
        std::memcpy(&checksum, blob.data() + 20, 8);
        if (version_ > max_version)
            throw StateError("state blob has version " + std::to_string(version_) +
                             ", this plugin reads up to " + std::to_string(max_version));
        if (size != blob.size() - detail::kStateHeaderSize)
            throw StateError("state blob says its payload has " + std::to_string(size) +
                             " bytes, it has " +
                             std::to_string(blob.size() - detail::kStateHeaderSize));
        payload_ = blob.subspan(detail::kStateHeaderSize);
        if (detail::fnv1a64(payload_) != checksum)
            throw StateError("state blob checksum does not match: the blob is damaged");
    }

    uint32_t version() const { return version_; }

    template <class T>
    requires std::is_arithmetic_v<T> T get() {
        need(sizeof(T));
        T value;
        std::memcpy(&value, payload_.data() + offset_, sizeof(T));
        offset_ += sizeof(T);
        return value;
    }

    // Relay times, and spans between two of them, lie within +-2^53 us (the host refuses
    // batches outside it: arbiter_plugin.h, on_batch), so a plugin subtracts them without
    // overflow checks. A restored blob must keep that promise too: a time or span read
    // here is refused outside +-2^54 us (a span of two bounded times, with room).
    static constexpr int64_t kMaxStoredTimeUs = int64_t{1} << 54;
    int64_t get_relay_time(const char* what) { return checked_relay_time(get<int64_t>(), what); }
    // The same check for a time a plugin decoded itself (a packed array, a delta).
    static int64_t checked_relay_time(int64_t value, const char* what) {
        if (value > kMaxStoredTimeUs || value < -kMaxStoredTimeUs)
            throw StateError(std::string("state blob has a ") + what + " of " +
                             std::to_string(value) + " us, beyond any relay time");
        return value;
    }

    // A count the plugin goes on incrementing: refused when negative or so large that
    // counting on could overflow.
    int64_t get_counter(const char* what) {
        const auto value = get<int64_t>();
        if (value < 0 || value > kMaxStoredTimeUs)
            throw StateError(std::string("state blob has a ") + what + " count of " +
                             std::to_string(value));
        return value;
    }

    // A double that must be finite: a NaN or infinity in a blob is damage, never state.
    double get_finite(const char* what) {
        const double value = get<double>();
        if (!std::isfinite(value))
            throw StateError(std::string("state blob has a non-finite ") + what);
        return value;
    }

    std::string get_string() {
        auto size = get<uint64_t>();
        need(size);
        std::string text(reinterpret_cast<const char*>(payload_.data() + offset_), size);
        offset_ += size;
        return text;
    }

    std::vector<uint8_t> get_bytes() {
        auto size = get<uint64_t>();
        need(size);
        std::vector<uint8_t> bytes(payload_.begin() + static_cast<std::ptrdiff_t>(offset_),
                                   payload_.begin() + static_cast<std::ptrdiff_t>(offset_ + size));
        offset_ += size;
        return bytes;
    }

    // A count of items still to read; refuses counts the remaining bytes cannot hold,
    // so that a damaged count cannot make the reader allocate without bound.
    uint64_t get_count(size_t min_item_size) {
        auto count = get<uint64_t>();
        if (min_item_size && count > (payload_.size() - offset_) / min_item_size)
            throw StateError("state blob claims " + std::to_string(count) +
                             " items, more than its remaining bytes hold");
        return count;
    }

    // Call after the last read: trailing bytes mean the writer and reader disagree.
    void finish() const {
        if (offset_ != payload_.size())
            throw StateError("state blob has " + std::to_string(payload_.size() - offset_) +
                             " unread bytes");
    }

  private:
    void need(uint64_t size) const {
        if (size > payload_.size() - offset_)
            throw StateError("state blob ends early (wanted " + std::to_string(size) +
                             " bytes at offset " + std::to_string(offset_) + ")");
    }

    std::span<const uint8_t> payload_;
    size_t offset_ = 0;
    uint32_t version_ = 0;
};

// For a state kept as a FlatBuffer with its own file identifier: verifies the buffer
// and returns its root, or throws StateError.
template <class Root>
const Root* read_flatbuffer_state(std::span<const uint8_t> blob, const char* identifier) {
    flatbuffers::Verifier verifier(blob.data(), blob.size());
    if (!flatbuffers::BufferHasIdentifier(blob.data(), identifier) && blob.size() >= 8)
        throw StateError(std::string("state blob does not have the identifier ") + identifier);
    if (!verifier.VerifyBuffer<Root>(identifier))
        throw StateError("state blob fails FlatBuffers verification");
    return flatbuffers::GetRoot<Root>(blob.data());
}

}  // namespace arbiter
