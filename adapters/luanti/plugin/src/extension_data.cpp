#include "extension_data.hpp"

#include <nlohmann/json.hpp>

namespace arbiter::luanti {

std::optional<std::string> json_string_member(std::span<const uint8_t> data, std::string_view key) {
    const nlohmann::json json = nlohmann::json::parse(data.begin(), data.end(), nullptr, false);
    if (json.is_discarded() || !json.is_object()) return std::nullopt;
    const auto it = json.find(key);
    if (it == json.end() || !it->is_string()) return std::nullopt;
    std::string value = it->get<std::string>();
    if (value.size() > kLongestName) {
        // Cut between two characters: a cut inside one is invalid UTF-8, and the host would
        // drop the evidence that holds it.
        size_t cut = kLongestName;
        while (cut > 0 && (static_cast<unsigned char>(value[cut]) & 0xC0) == 0x80) --cut;
        value.resize(cut);
    }
    return value;
}

std::string metric_part(std::string_view name) {
    std::string out;
    for (char c : name) {
        if (out.size() == 32) break;
        if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')
            out += c;
        else if (c >= 'A' && c <= 'Z')
            out += static_cast<char>(c - 'A' + 'a');
        else
            out += '_';
    }
    if (out.find_first_not_of('_') == std::string::npos) return "other";
    return out;
}

}  // namespace arbiter::luanti
