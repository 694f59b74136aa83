// Reading the optional fields of an event: a string or a vector the relay left out reads
// as empty (or the origin), so that a check sees a value either way.
#pragma once

#include <string>

#include <arbiter/sdk.hpp>

#include "movement.hpp"

namespace arbiter::reference {

inline std::string text(const flatbuffers::String* s) {
    return s ? s->str() : std::string();
}

inline Vec3 to_vec(const fb::Vec3* v) {
    return v ? Vec3{v->x(), v->y(), v->z()} : Vec3{};
}

// A PlayerJoin as the session checks give it in their evidence (the reference plugin's
// and the accounts plugin's alike, so that a reviewer reads one shape).
inline Evidence join_evidence(const fb::Event& event) {
    const fb::PlayerJoin& join = *event.body_as_PlayerJoin();
    return Evidence()
        .add("t_us", event.relay_time_us())
        .add("account_id", text(join.account_id()))
        .add("client_version", text(join.client_version()))
        .add("handshake", text(join.handshake()))
        .add("connection_id", join.connection_id())
        .add("address_hash", join.address_hash())
        .add("reconnect", join.reconnect());
}

}  // namespace arbiter::reference
