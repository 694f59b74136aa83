#include "arbiter/tools/truth.hpp"

#include <fstream>
#include <set>

#include <nlohmann/json.hpp>

#include "arbiter/tools/match_writer.hpp"

namespace arbiter::tools {

namespace {
constexpr const char* kFormat = "arbiter-truth";
constexpr int kVersion = 1;

nlohmann::ordered_json player_json(const TruthPlayer& p) {
    nlohmann::ordered_json j;
    j["player"] = p.player;
    j["account"] = p.account;
    j["profile"] = p.profile;
    j["cheater"] = p.cheater;
    if (!p.params.empty()) {
        nlohmann::ordered_json params = nlohmann::ordered_json::object();
        for (const auto& [name, value] : p.params)
            params[name] = value;
        j["params"] = std::move(params);
    }
    return j;
}

// Names come from operators' files: bytes that are not UTF-8 are replaced, not refused.
template <class Json>
std::string dump(const Json& value) {
    return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string text(const std::string& value) {
    return dump(nlohmann::json(value));
}
}  // namespace

void write_truth(const std::filesystem::path& path, const Truth& truth) {
    StagedFile staged(path);
    {
        std::ofstream out(staged.temporary(), std::ios::binary | std::ios::trunc);
        if (!out) throw std::runtime_error(path.string() + ": cannot create the truth file");
        nlohmann::ordered_json generator = nlohmann::ordered_json::object();
        for (const auto& [key, value] : truth.generator)
            generator[key] = value;
        // One player per line: readable, and diffable, for matches of thousands of players.
        out << "{\"format\": " << text(kFormat) << ", \"version\": " << kVersion
            << ",\n \"generator\": " << dump(generator) << ",\n \"matches\": [";
        bool first_match = true;
        for (const auto& match : truth.matches) {
            out << (first_match ? "\n" : ",\n") << "  {\"relay_id\": " << text(match.relay_id)
                << ", \"match_id\": " << match.match_id;
            if (!match.source.empty()) out << ", \"source\": " << text(match.source);
            if (!match.game.empty()) out << ", \"game\": " << text(match.game);
            out << ", \"players\": [";
            bool first_player = true;
            for (const auto& player : match.players) {
                out << (first_player ? "\n" : ",\n") << "    " << dump(player_json(player));
                first_player = false;
            }
            out << "\n  ]}";
            first_match = false;
        }
        out << "\n]}\n";
        out.flush();
        if (!out) throw std::runtime_error(path.string() + ": cannot write the truth file");
    }
    staged.commit();
}

Truth read_truth(const std::filesystem::path& path) {
    const std::string name = path.string();
    auto fail = [&](const std::string& what) { return TruthError(name + ": " + what); };
    std::ifstream in(path, std::ios::binary);
    if (!in) throw fail("cannot read the truth file");
    nlohmann::json root;
    try {
        root = nlohmann::json::parse(in);
    } catch (const nlohmann::json::exception& error) {
        std::string what = error.what();
        if (auto tag_end = what.find("] "); tag_end != std::string::npos)
            what = what.substr(tag_end + 2);
        throw fail("not valid JSON: " + what);
    }
    if (!root.is_object()) throw fail("not a truth file: the top level is not an object");
    if (root.value("format", std::string()) != kFormat)
        throw fail(std::string("not a truth file: \"format\" is not \"") + kFormat + "\"");
    if (!root.contains("version") || !root["version"].is_number_integer() ||
        root["version"].get<int>() != kVersion)
        throw fail("truth file version is not " + std::to_string(kVersion));

    Truth truth;
    if (auto it = root.find("generator"); it != root.end() && it->is_object())
        for (const auto& [key, value] : it->items())
            truth.generator.emplace_back(
                key, value.is_string() ? value.get<std::string>() : value.dump());

    auto matches = root.find("matches");
    if (matches == root.end() || !matches->is_array()) throw fail("no \"matches\" array");
    std::set<std::pair<std::string, uint64_t>> seen_matches;
    for (size_t i = 0; i < matches->size(); ++i) {
        const auto& m = (*matches)[i];
        const std::string where = "matches[" + std::to_string(i) + "]";
        if (!m.is_object()) throw fail(where + " is not an object");
        TruthMatch match;
        if (!m.contains("relay_id") || !m["relay_id"].is_string() ||
            m["relay_id"].get<std::string>().empty())
            throw fail(where + ": no \"relay_id\" string");
        if (!m.contains("match_id") || !m["match_id"].is_number_unsigned())
            throw fail(where + ": no \"match_id\" non-negative integer");
        match.relay_id = m["relay_id"].get<std::string>();
        match.match_id = m["match_id"].get<uint64_t>();
        if (!seen_matches.emplace(match.relay_id, match.match_id).second)
            throw fail(where + ": match " + match.relay_id + "/" + std::to_string(match.match_id) +
                       " appears twice");
        match.source = m.value("source", std::string());
        match.game = m.value("game", std::string());
        if (!m.contains("players") || !m["players"].is_array())
            throw fail(where + ": no \"players\" array");
        std::set<uint32_t> seen_players;
        for (size_t j = 0; j < m["players"].size(); ++j) {
            const auto& p = m["players"][j];
            const std::string at = where + ".players[" + std::to_string(j) + "]";
            if (!p.is_object()) throw fail(at + " is not an object");
            if (!p.contains("player") || !p["player"].is_number_unsigned() ||
                p["player"].get<uint64_t>() == 0 || p["player"].get<uint64_t>() > UINT32_MAX)
                throw fail(at + ": \"player\" is not a player id (1 to 4294967295)");
            if (!p.contains("profile") || !p["profile"].is_string() ||
                p["profile"].get<std::string>().empty())
                throw fail(at + ": no \"profile\" string");
            if (!p.contains("cheater") || !p["cheater"].is_boolean())
                throw fail(at + ": no \"cheater\" true or false");
            TruthPlayer player;
            player.player = static_cast<uint32_t>(p["player"].get<uint64_t>());
            player.profile = p["profile"].get<std::string>();
            player.cheater = p["cheater"].get<bool>();
            if (auto a = p.find("account"); a != p.end() && a->is_string())
                player.account = a->get<std::string>();
            if (auto params = p.find("params"); params != p.end() && params->is_object())
                for (const auto& [key, value] : params->items())
                    if (value.is_number()) player.params.emplace_back(key, value.get<double>());
            if (!seen_players.insert(player.player).second)
                throw fail(at + ": player " + std::to_string(player.player) +
                           " appears twice in the match");
            match.players.push_back(std::move(player));
        }
        truth.matches.push_back(std::move(match));
    }
    return truth;
}

}  // namespace arbiter::tools
