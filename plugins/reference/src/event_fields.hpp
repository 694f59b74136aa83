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

}  // namespace arbiter::reference
