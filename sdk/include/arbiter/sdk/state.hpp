// State helpers for hot reload (docs/abi-rules.md, rule 13): write a plugin's state into
// a sealed, versioned blob, and read one back only after checking it.
//
// Blob layout, little-endian:
//   magic (4 bytes) | tag (4 bytes, the plugin's choice) | version u32 |
//   payload size u64 | checksum of the payload u64 | payload
// The magic names the seal (the checksum's function):
//   "ARBX"  XXH3-64 (xxHash, Debian's libxxhash-dev), eight bytes at a time: what this
//           SDK writes. A reload seals the whole state while the stream waits, so the
//           seal's speed is part of every pause (docs/performance.md).
//   "ARBS"  FNV-1a-64, one byte at a time: what earlier SDKs wrote. Still read, so that
//           state saved by a plugin built against an older SDK (or a kaladin baseline
//           file written by one) carries over. Reading it is kept for one release more;
//           a plugin built with ARBITER_STATE_SEAL_FNV1A defined still writes it, for an
//           operator who must be able to swap back to a build of an older SDK (whose
//           reader knows only "ARBS").
// StateReader refuses a blob whose magic, tag, size or checksum is off, or whose version
// is newer than the reader knows, and every read past the payload's end throws. A plugin
// that keeps its state as a FlatBuffer instead uses read_flatbuffer_state, which runs
// the FlatBuffers Verifier. Either way a bad blob is a StateError, which the SDK turns
// into ARB_ERR_STATE: the host then starts the new instance fresh and says so.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <flatbuffers/flatbuffers.h>

// Inlined and renamed by xxHash itself (XXH_INLINE_ALL), so a plugin links nothing more
// and its own use of xxhash.h, inlined or not, does not collide with the SDK's.
#ifndef XXH_INLINE_ALL
#define XXH_INLINE_ALL
#define ARBITER_SDK_DEFINED_XXH_INLINE_ALL
#endif
#include <xxhash.h>
// XXH3's output is fixed from xxHash 0.8.0 on (earlier releases called it experimental
// and changed it): a blob sealed by one build must check out in another.
#if XXH_VERSION_NUMBER < 800
#error "the Arbiter SDK's state seal needs xxHash 0.8.0 or later (Debian 12: libxxhash-dev)"
#endif
#ifdef ARBITER_SDK_DEFINED_XXH_INLINE_ALL
#undef XXH_INLINE_ALL
#undef ARBITER_SDK_DEFINED_XXH_INLINE_ALL
#endif

namespace arbiter {

class StateError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

namespace detail {
// The seal of blobs written by SDKs before "ARBX". Kept to read them.
inline uint64_t fnv1a64(std::span<const uint8_t> bytes) {
    uint64_t hash = 0xcbf29ce484222325ull;
    for (uint8_t byte : bytes) {
        hash ^= byte;
        hash *= 0x100000001b3ull;
    }
    return hash;
}
inline uint64_t xxh3_64(std::span<const uint8_t> bytes) {
    return XXH3_64bits(bytes.data(), bytes.size());
}

inline constexpr char kWordSealMagic[4] = {'A', 'R', 'B', 'X'};  // XXH3-64
inline constexpr char kByteSealMagic[4] = {'A', 'R', 'B', 'S'};  // FNV-1a-64, older SDKs

// The checksum a blob with this magic carries; false for a magic that is no seal of ours.
inline bool seal_checksum(const uint8_t* magic, std::span<const uint8_t> payload,
                          uint64_t& checksum) {
    if (std::memcmp(magic, kWordSealMagic, 4) == 0) {
        checksum = xxh3_64(payload);
        return true;
    }
    if (std::memcmp(magic, kByteSealMagic, 4) == 0) {
        checksum = fnv1a64(payload);
        return true;
    }
    return false;
}

#ifdef ARBITER_STATE_SEAL_FNV1A
inline constexpr const char* kWrittenSealMagic = kByteSealMagic;
#else
inline constexpr const char* kWrittenSealMagic = kWordSealMagic;
#endif

inline constexpr size_t kStateHeaderSize = 4 + 4 + 4 + 8 + 8;
}  // namespace detail

class StateWriter {
  public:
    // tag: four characters that name the plugin's state format, e.g. "REF1".
    StateWriter(std::string_view tag, uint32_t version) : tag_(tag), version_(version) {
        if (tag_.size() != 4) throw std::invalid_argument("a state tag has four characters");
        // The header's room is kept in front, so finish() seals in place, with no copy of
        // what may be hundreds of megabytes while the stream waits.
        blob_.resize(kFirstSize);
    }
    StateWriter(const StateWriter&) = default;
    StateWriter& operator=(const StateWriter&) = default;
    // A writer moved from is spent, like one finished.
    StateWriter(StateWriter&& other) noexcept
        : tag_(std::move(other.tag_)),
          version_(other.version_),
          blob_(std::move(other.blob_)),
          used_(std::exchange(other.used_, 0)) {}
    StateWriter& operator=(StateWriter&& other) noexcept {
        tag_ = std::move(other.tag_);
        version_ = other.version_;
        blob_ = std::move(other.blob_);
        used_ = std::exchange(other.used_, 0);
        return *this;
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

    // put_bytes for bytes the plugin writes in place: the size goes in, and the room
    // returned is filled by the caller before its next put. The blob is the one put_bytes
    // of the same bytes writes, without a buffer of the plugin's own and its copy (a
    // reload holds the stream while a plugin saves).
    std::span<uint8_t> put_bytes_in_place(size_t size) {
        put<uint64_t>(size);
        if (size == 0) return {};
        if (size > blob_.size() - used_) {
            if (size > blob_.max_size() - used_)
                throw std::length_error("StateWriter: more bytes than a blob can hold");
            blob_.resize(std::max(blob_.size() * 2, used_ + size));
        }
        const std::span<uint8_t> room(blob_.data() + used_, size);
        used_ += size;
        return room;
    }

    // Room for about this many more payload bytes, when the plugin knows its size ahead.
    void reserve(size_t payload_bytes) {
        check_live();
        if (payload_bytes > blob_.max_size() - used_)
            throw std::length_error("StateWriter::reserve: more bytes than a blob can hold");
        if (used_ + payload_bytes > blob_.size()) blob_.resize(used_ + payload_bytes);
    }

    // The sealed blob. The writer hands its bytes over and is spent: a put, a reserve or
    // a finish after it throws std::logic_error.
    std::vector<uint8_t> finish() {
        check_live();
        blob_.resize(used_);  // shrinks: no copy
        used_ = 0;
        const std::span<const uint8_t> payload(blob_.data() + detail::kStateHeaderSize,
                                               blob_.size() - detail::kStateHeaderSize);
        const uint64_t size = payload.size();
        uint64_t checksum = 0;
        detail::seal_checksum(reinterpret_cast<const uint8_t*>(detail::kWrittenSealMagic), payload,
                              checksum);
        uint8_t* header = blob_.data();
        std::memcpy(header, detail::kWrittenSealMagic, 4);
        std::memcpy(header + 4, tag_.data(), 4);
        std::memcpy(header + 8, &version_, 4);
        std::memcpy(header + 12, &size, 8);
        std::memcpy(header + 20, &checksum, 8);
        return std::move(blob_);
    }

  private:
    // used_ is 0 once the writer is spent (finished or moved from), else at least the
    // header's room, and never past blob_.size().
    void check_live() const {
        if (used_ < detail::kStateHeaderSize)
            throw std::logic_error("StateWriter used after finish() or after a move");
    }
    // A state is written a few bytes at a time, hundreds of times per player, while the
    // stream waits: a put is a bounds check and a copy, and the buffer grows by doubling.
    void append_raw(const void* data, size_t size) {
        if (size == 0) return;
        if (size > blob_.size() - used_) {
            check_live();
            if (size > blob_.max_size() - used_)
                throw std::length_error("StateWriter: more bytes than a blob can hold");
            blob_.resize(std::max(blob_.size() * 2, used_ + size));
        }
        std::memcpy(blob_.data() + used_, data, size);
        used_ += size;
    }

    std::string tag_;
    uint32_t version_;
    static constexpr size_t kFirstSize = 4096;
    std::vector<uint8_t> blob_;               // header's room, the payload, spare room
    size_t used_ = detail::kStateHeaderSize;  // header's room and the payload so far
};

class StateReader {
  public:
    // Checks the seal. max_version: the newest version this plugin can read.
    StateReader(std::span<const uint8_t> blob, std::string_view tag, uint32_t max_version) {
        if (blob.size() < detail::kStateHeaderSize)
            throw StateError("state blob of " + std::to_string(blob.size()) +
                             " bytes is shorter than its header");
        if (std::memcmp(blob.data(), detail::kWordSealMagic, 4) != 0 &&
            std::memcmp(blob.data(), detail::kByteSealMagic, 4) != 0)
            throw StateError("state blob does not begin with ARBX or ARBS");
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
        uint64_t expected = 0;
        detail::seal_checksum(blob.data(), payload_, expected);
        if (expected != checksum)
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

    // get_bytes without the copy: a view into the blob, valid as long as the blob is.
    std::span<const uint8_t> view_bytes() {
        auto size = get<uint64_t>();
        need(size);
        const std::span<const uint8_t> bytes = payload_.subspan(offset_, size);
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
