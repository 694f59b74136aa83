// Typed access to an event batch.
//
// The generated FlatBuffers types live in arbiter::fb (events_generated.h, made from
// abi/schema/events.fbs); a Batch is a thin view over one verified EventBatch. Read an
// event's body with the generated accessors:
//
//   for (const fb::Event* event : batch.events()) {
//       if (auto* update = event->body_as_PositionUpdate()) { ... }
//   }
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include <arbiter/arbiter_plugin.h>

// The event types are FlatBuffers-generated code, and generated code works only with the
// FlatBuffers release that generated it: this SDK's is FlatBuffers 2.0.8 (Debian 12),
// and its headers are part of the SDK's include path. A plugin that uses FlatBuffers of
// its own must use that same release in the translation units that include the SDK, or
// keep its own FlatBuffers code in translation units that do not (both define namespace
// flatbuffers, and one program cannot hold two releases of it). The check below says so
// by name instead of leaving the generated header's bare static_assert to do it.
// See docs/writing-a-plugin.md, "FlatBuffers".
#include <flatbuffers/base.h>
#if !defined(FLATBUFFERS_VERSION_MAJOR) || FLATBUFFERS_VERSION_MAJOR != 2 || \
    FLATBUFFERS_VERSION_MINOR != 0 || FLATBUFFERS_VERSION_REVISION != 8
#error "The Arbiter SDK's event types need FlatBuffers 2.0.8 headers, and another FlatBuffers release comes first on the include path: put the FlatBuffers 2.0.8 headers first, or keep your own FlatBuffers code in separate translation units (docs/writing-a-plugin.md, FlatBuffers)."
#endif
#include <arbiter/events_generated.h>

namespace arbiter {

static_assert(ARB_SCHEMA_VERSION_MAJOR == 1, "the SDK's schema helpers are written for schema 1");

// A flatbuffers string as a string_view; an absent string is empty.
inline std::string_view str(const flatbuffers::String* text) {
    return text ? std::string_view(text->c_str(), text->size()) : std::string_view();
}

// Identifies a match across relays.
struct MatchKey {
    std::string relay_id;
    uint64_t match_id = 0;
    bool operator==(const MatchKey&) const = default;
    auto operator<=>(const MatchKey&) const = default;
};

struct MatchKeyHash {
    size_t operator()(const MatchKey& key) const noexcept {
        return std::hash<std::string>()(key.relay_id) ^ (std::hash<uint64_t>()(key.match_id) * 31);
    }
};

// The events of a batch, as a range of const fb::Event*.
class EventRange {
  public:
    using Vector = flatbuffers::Vector<flatbuffers::Offset<fb::Event>>;

    class iterator {
      public:
        using value_type = const fb::Event*;
        using difference_type = std::ptrdiff_t;
        iterator() = default;
        iterator(const Vector* vector, flatbuffers::uoffset_t index)
            : vector_(vector), index_(index) {}
        const fb::Event* operator*() const { return vector_->Get(index_); }
        iterator& operator++() {
            ++index_;
            return *this;
        }
        iterator operator++(int) {
            auto copy = *this;
            ++index_;
            return copy;
        }
        bool operator==(const iterator& other) const { return index_ == other.index_; }

      private:
        const Vector* vector_ = nullptr;
        flatbuffers::uoffset_t index_ = 0;
    };

    explicit EventRange(const Vector* vector) : vector_(vector) {}
    iterator begin() const { return {vector_, 0}; }
    iterator end() const { return {vector_, static_cast<flatbuffers::uoffset_t>(size())}; }
    size_t size() const { return vector_ ? vector_->size() : 0; }
    bool empty() const { return size() == 0; }
    const fb::Event* operator[](size_t index) const {
        return vector_->Get(static_cast<flatbuffers::uoffset_t>(index));
    }

  private:
    const Vector* vector_;
};

class Batch {
  public:
    // Views bytes the host has verified (on_batch); no check is made here.
    static Batch trusted(std::span<const uint8_t> bytes) {
        return Batch(flatbuffers::GetRoot<fb::EventBatch>(bytes.data()), bytes);
    }

    // Verifies bytes from anywhere else; nullopt when they are not a valid EventBatch.
    static std::optional<Batch> verified(std::span<const uint8_t> bytes) {
        if (bytes.size() > ARB_MAX_BATCH_BYTES) return std::nullopt;
        flatbuffers::Verifier verifier(bytes.data(), bytes.size());
        if (!verifier.VerifyBuffer<fb::EventBatch>(ARB_SCHEMA_FILE_IDENTIFIER)) return std::nullopt;
        return trusted(bytes);
    }

    const fb::EventBatch& root() const { return *root_; }
    std::span<const uint8_t> bytes() const { return bytes_; }
    std::string_view relay_id() const { return str(root_->relay_id()); }
    uint64_t match_id() const { return root_->match_id(); }
    uint64_t sequence() const { return root_->sequence(); }
    MatchKey match() const { return {std::string(relay_id()), match_id()}; }
    EventRange events() const { return EventRange(root_->events()); }

  private:
    Batch(const fb::EventBatch* root, std::span<const uint8_t> bytes)
        : root_(root), bytes_(bytes) {}
    const fb::EventBatch* root_;
    std::span<const uint8_t> bytes_;
};

// Where the player of an event looks (3-D) or aims (2-D), schema 1.2: from a
// PositionUpdate, an Order or a HitClaim that carries it; nullopt for any other event and
// when the relay did not say (its game gives none, or it predates schema 1.2). A Look is
// yaw and pitch in radians; an AimPoint is a point in the game's units, relative() when
// measured from the player's own position (docs/aim.md).
inline std::optional<fb::Look> look_of(const fb::Event& event) {
    const fb::Look* look = nullptr;
    if (const auto* p = event.body_as_PositionUpdate())
        look = p->look();
    else if (const auto* o = event.body_as_Order())
        look = o->look();
    else if (const auto* h = event.body_as_HitClaim())
        look = h->look();
    if (look) return *look;
    return std::nullopt;
}
inline std::optional<fb::AimPoint> aim_of(const fb::Event& event) {
    const fb::AimPoint* aim = nullptr;
    if (const auto* p = event.body_as_PositionUpdate())
        aim = p->aim();
    else if (const auto* o = event.body_as_Order())
        aim = o->aim();
    else if (const auto* h = event.body_as_HitClaim())
        aim = h->aim();
    if (aim) return *aim;
    return std::nullopt;
}

// Optional scalars of the schema (e.g. claimed_tick) as std::optional.
template <class T>
std::optional<T> opt(flatbuffers::Optional<T> value) {
    if (value.has_value()) return *value;
    return std::nullopt;
}

}  // namespace arbiter
