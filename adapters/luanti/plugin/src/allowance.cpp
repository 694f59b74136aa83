#include "allowance.hpp"

#include <cmath>

#include <nlohmann/json.hpp>

namespace arbiter::luanti {

namespace {

struct Factor {
    const char* key;
    double Allowance::*field;
};
constexpr Factor kFactors[] = {
    {"speed", &Allowance::speed}, {"jump", &Allowance::jump}, {"gravity", &Allowance::gravity}};

struct Flag {
    const char* key;
    bool Allowance::*field;
};
constexpr Flag kFlags[] = {{"fast", &Allowance::fast},
                           {"fly", &Allowance::fly},
                           {"noclip", &Allowance::noclip},
                           {"attached", &Allowance::attached}};

}  // namespace

std::variant<Allowance, std::string> parse_allowance(std::span<const uint8_t> data) {
    // No exceptions: a hostile line costs a parse, never an unwinding through the glue.
    const nlohmann::json json = nlohmann::json::parse(data.begin(), data.end(), nullptr, false);
    if (json.is_discarded()) return std::string("not JSON");
    if (!json.is_object()) return std::string("not a JSON object");

    Allowance allowance;
    for (const auto& [key, field] : kFactors) {
        const auto it = json.find(key);
        if (it == json.end()) continue;
        if (!it->is_number()) return std::string("\"") + key + "\" is not a number";
        const double value = it->get<double>();
        if (!std::isfinite(value) || value < 0 || value > kLargestFactor)
            return std::string("\"") + key + "\" is outside 0 to 1000";
        allowance.*field = value;
    }
    for (const auto& [key, field] : kFlags) {
        const auto it = json.find(key);
        if (it == json.end()) continue;
        if (!it->is_boolean()) return std::string("\"") + key + "\" is not true or false";
        allowance.*field = it->get<bool>();
    }
    return allowance;
}

Evidence allowance_evidence(const Allowance& a) {
    return Evidence()
        .add("speed", a.speed)
        .add("jump", a.jump)
        .add("gravity", a.gravity)
        .add("fast", a.fast)
        .add("fly", a.fly)
        .add("noclip", a.noclip)
        .add("attached", a.attached);
}

}  // namespace arbiter::luanti
