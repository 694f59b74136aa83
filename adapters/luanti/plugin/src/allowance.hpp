// What the Luanti server allows a player, as the mod reports it in a "luanti.allowance"
// extension: the physics overrides (speed, jump, gravity), the privileges fast, fly and
// noclip, and whether the player is attached (riding: the engine moves them). Every
// check compares a player against their own allowance, never against a fixed rule.
#pragma once

#include <span>
#include <string>
#include <variant>

#include <arbiter/sdk/evidence.hpp>

namespace arbiter::luanti {

struct Allowance {
    double speed = 1.0;    // physics override: multiplies the walk and fast speeds
    double jump = 1.0;     // physics override: multiplies the jump speed
    double gravity = 1.0;  // physics override: multiplies gravity
    bool fast = false;     // the "fast" privilege
    bool fly = false;      // the "fly" privilege
    bool noclip = false;   // the "noclip" privilege
    bool attached = false;

    bool operator==(const Allowance&) const = default;
};

// Luanti's physics overrides are small factors; a value past this is no override a game
// sets but a broken line, and would make every limit meaningless.
inline constexpr double kLargestFactor = 1000.0;

// Reads the extension's data, a UTF-8 JSON object. A missing key takes its default (the
// mod may leave out what it does not know); an unknown key is ignored, so that a newer mod
// can add some. Returns the problem instead (not JSON, not an object, a wrong type, a
// number that is negative or absurdly large) for the caller to count and log; the caller
// then keeps the allowance it had.
std::variant<Allowance, std::string> parse_allowance(std::span<const uint8_t> data);

Evidence allowance_evidence(const Allowance& allowance);

}  // namespace arbiter::luanti
