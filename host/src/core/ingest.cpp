#include "arbiter/host/ingest.hpp"

#include <cmath>
#include <initializer_list>
#include <utility>

#include <arbiter/arbiter_plugin.h>
#include <fmt/format.h>

#include "arbiter/host/untrusted_text.hpp"

namespace arbiter::host {

namespace {

using NamedString = std::pair<const char*, const flatbuffers::String*>;
using NamedFloat = std::pair<const char*, float>;

std::string string_problem(std::initializer_list<NamedString> fields) {
    for (const auto& [name, text] : fields) {
        if (!text) continue;
        if (const auto bad = first_invalid_utf8(text->string_view()))
            return fmt::format("{} is not UTF-8 (byte {} of {})", name, *bad, text->size());
    }
    return "";
}

std::string float_problem(std::initializer_list<NamedFloat> fields) {
    for (const auto& [name, value] : fields)
        if (!std::isfinite(value)) return fmt::format("{} is {}, not a finite number", name, value);
    return "";
}

std::string vec_problem(const char* name, const fb::Vec3* v) {
    if (!v) return "";
    if (!std::isfinite(v->x()) || !std::isfinite(v->y()) || !std::isfinite(v->z()))
        return fmt::format("{} ({}, {}, {}) is not finite", name, v->x(), v->y(), v->z());
    return "";
}

// Schema 1.2's look and aim: absent is fine, present must be finite.
std::string look_problem(const char* name, const fb::Look* look) {
    if (!look) return "";
    if (!std::isfinite(look->yaw()) || !std::isfinite(look->pitch()))
        return fmt::format("{} (yaw {}, pitch {}) is not finite", name, look->yaw(), look->pitch());
    return "";
}

std::string aim_problem(const char* name, const fb::AimPoint* aim) {
    if (!aim) return "";
    if (!std::isfinite(aim->x()) || !std::isfinite(aim->y()))
        return fmt::format("{} ({}, {}) is not finite", name, aim->x(), aim->y());
    return "";
}

std::string time_problem(const char* name, int64_t value) {
    if (value < -kMaxRelayTimeUs || value > kMaxRelayTimeUs)
        return fmt::format("{} {} us is outside +-2^53 us", name, value);
    return "";
}

// The first thing wrong with one event's body, naming the field, or "".
std::string body_problem(const fb::Event& event) {
    auto first = [&](std::initializer_list<std::string> problems) {
        for (const auto& p : problems)
            if (!p.empty()) return p;
        return std::string();
    };
    // The Verifier accepts a body type whose table is absent; every case below reads it.
    if (!event.body()) return "its body type is set but the body is missing";
    switch (event.body_type()) {
        case fb::EventBody::MatchStart: {
            const auto* b = event.body_as_MatchStart();
            return first({string_problem({{"MatchStart.game", b->game()},
                                          {"MatchStart.map", b->map()},
                                          {"MatchStart.rules", b->rules()}}),
                          float_problem({{"MatchStart.tick_rate_hz", b->tick_rate_hz()}}),
                          time_problem("MatchStart.started_unix_us", b->started_unix_us())});
        }
        case fb::EventBody::MatchEnd: {
            const auto* b = event.body_as_MatchEnd();
            return first({string_problem({{"MatchEnd.reason", b->reason()}}),
                          time_problem("MatchEnd.ended_unix_us", b->ended_unix_us())});
        }
        case fb::EventBody::PlayerJoin: {
            const auto* b = event.body_as_PlayerJoin();
            return first({string_problem({{"PlayerJoin.account_id", b->account_id()},
                                          {"PlayerJoin.client_version", b->client_version()},
                                          {"PlayerJoin.handshake", b->handshake()},
                                          {"PlayerJoin.rating_tier", b->rating_tier()}}),
                          float_problem({{"PlayerJoin.rating", b->rating()}})});
        }
        case fb::EventBody::PlayerLeave:
            return string_problem({{"PlayerLeave.reason", event.body_as_PlayerLeave()->reason()}});
        case fb::EventBody::Order: {
            const auto* b = event.body_as_Order();
            return first({string_problem({{"Order.kind", b->kind()}}),
                          vec_problem("Order.target", b->target()),
                          look_problem("Order.look", b->look()),
                          aim_problem("Order.aim", b->aim())});
        }
        case fb::EventBody::PositionUpdate: {
            const auto* b = event.body_as_PositionUpdate();
            return first({vec_problem("PositionUpdate.position", b->position()),
                          vec_problem("PositionUpdate.velocity", b->velocity()),
                          b->ground_height() ? float_problem({{"PositionUpdate.ground_height",
                                                               *b->ground_height()}})
                                             : std::string(),
                          look_problem("PositionUpdate.look", b->look()),
                          aim_problem("PositionUpdate.aim", b->aim())});
        }
        case fb::EventBody::HitClaim: {
            const auto* b = event.body_as_HitClaim();
            return first({string_problem({{"HitClaim.weapon", b->weapon()}}),
                          vec_problem("HitClaim.attacker_position", b->attacker_position()),
                          vec_problem("HitClaim.target_position", b->target_position()),
                          float_problem({{"HitClaim.range_m", b->range_m()},
                                         {"HitClaim.damage", b->damage()}}),
                          look_problem("HitClaim.look", b->look()),
                          aim_problem("HitClaim.aim", b->aim())});
        }
        case fb::EventBody::KillClaim: {
            const auto* b = event.body_as_KillClaim();
            return first({string_problem({{"KillClaim.weapon", b->weapon()}}),
                          vec_problem("KillClaim.attacker_position", b->attacker_position()),
                          vec_problem("KillClaim.target_position", b->target_position()),
                          float_problem({{"KillClaim.range_m", b->range_m()}})});
        }
        case fb::EventBody::InventoryChange: {
            const auto* b = event.body_as_InventoryChange();
            return string_problem({{"InventoryChange.item_id", b->item_id()},
                                   {"InventoryChange.source", b->source()}});
        }
        case fb::EventBody::StatChange: {
            const auto* b = event.body_as_StatChange();
            if (auto p = string_problem({{"StatChange.stat", b->stat()}}); !p.empty()) return p;
            for (const auto& [name, value] : {std::pair{"StatChange.delta", b->delta()},
                                              {"StatChange.value_after", b->value_after()}})
                if (!std::isfinite(value))
                    return fmt::format("{} is {}, not a finite number", name, value);
            return "";
        }
        case fb::EventBody::Stimulus:
            return string_problem({{"Stimulus.kind", event.body_as_Stimulus()->kind()}});
        case fb::EventBody::Extension:
            return string_problem(
                {{"Extension.type_name", event.body_as_Extension()->type_name()}});
        case fb::EventBody::InputLost:
            // Plugins reset their windows on it: from a relay it would let the relay
            // blind them at will, and what was lost is the host's to say (events.fbs).
            return "InputLost is written by the host, never by a relay";
        default:
            return "";  // no strings or numbers that need more than the Verifier
    }
}

}  // namespace

IngestResult ingest_batch(std::span<const uint8_t> bytes, uint64_t max_batch_bytes) {
    IngestResult result;
    auto refuse = [&](std::string problem) {
        result.problem = std::move(problem);
        result.batch = VerifiedBatch{};
        return result;
    };
    uint64_t cap = std::min<uint64_t>(max_batch_bytes, ARB_MAX_BATCH_BYTES);
    if (bytes.size() > cap)
        return refuse("batch of " + std::to_string(bytes.size()) + " bytes exceeds the cap of " +
                      std::to_string(cap));
    if (bytes.size() < 8)
        return refuse("batch of " + std::to_string(bytes.size()) + " bytes is too short");

    // Verified and read in our own copy: the caller's bytes may sit at any offset (a
    // record in a damaged file, a frame in a socket buffer), and FlatBuffers reads
    // scalars in place, so unaligned input would mean unaligned reads.
    VerifiedBatch& batch = result.batch;
    batch.bytes.assign(bytes.begin(), bytes.end());
    const uint8_t* data = batch.bytes.data();

    if (!flatbuffers::BufferHasIdentifier(data, ARB_SCHEMA_FILE_IDENTIFIER))
        return refuse("not an event batch: file identifier is not \"" ARB_SCHEMA_FILE_IDENTIFIER
                      "\"");
    flatbuffers::Verifier verifier(data, batch.bytes.size());
    if (!verifier.VerifyBuffer<fb::EventBatch>(ARB_SCHEMA_FILE_IDENTIFIER))
        return refuse(
            "event batch fails FlatBuffers verification (damaged or not written with the schema)");

    const auto* root = flatbuffers::GetRoot<fb::EventBatch>(data);
    if (root->schema_major() == 0) return refuse("event batch carries no schema version");
    if (root->schema_major() != ARB_SCHEMA_VERSION_MAJOR)
        return refuse("event batch has schema " + std::to_string(root->schema_major()) + "." +
                      std::to_string(root->schema_minor()) + ", this host reads schema " +
                      std::to_string(ARB_SCHEMA_VERSION_MAJOR) + ".x");
    if (!root->relay_id() || root->relay_id()->size() == 0)
        return refuse("event batch has no relay_id");
    if (auto problem = string_problem({{"relay_id", root->relay_id()}}); !problem.empty())
        return refuse("event batch " + problem);

    batch.relay_id = root->relay_id()->str();
    batch.match_id = root->match_id();
    batch.sequence = root->sequence();
    if (const auto* events = root->events()) {
        batch.event_count = events->size();
        int64_t previous = INT64_MIN;
        for (flatbuffers::uoffset_t i = 0; i < events->size(); ++i) {
            const fb::Event* event = events->Get(i);
            const int64_t time = event->relay_time_us();
            if (event->body_type() == fb::EventBody::NONE)
                return refuse(fmt::format("event {} has no body", i));
            if (auto problem = time_problem("relay time", time); !problem.empty())
                return refuse(fmt::format("event {} has {}", i, problem));
            if (time < previous)
                return refuse(fmt::format(
                    "event {} has relay time {} us, before the event before it ({} us): events "
                    "must be in relay-time order",
                    i, time, previous));
            if (auto problem = body_problem(*event); !problem.empty())
                return refuse(fmt::format("event {}: {}", i, problem));
            previous = time;
            if (event->body_type() == fb::EventBody::MatchEnd) batch.ends_match = true;
        }
        if (batch.event_count) {
            batch.first_relay_time_us = events->Get(0)->relay_time_us();
            batch.last_relay_time_us = previous;
        }
    }
    result.ok = true;
    return result;
}

}  // namespace arbiter::host
