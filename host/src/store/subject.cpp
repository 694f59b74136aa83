// The keys players have in the store (store.hpp, review_subject): accounts and unnamed
// players in namespaces of their own, so that no account a relay gives can name another
// relay's unnamed player.
#include <fmt/format.h>

#include "store/store.hpp"

namespace arbiter::host {

namespace {

constexpr std::string_view kAccountPrefix = "account:";
constexpr std::string_view kUnnamedPrefix = "player:";

}  // namespace

std::string account_subject(std::string_view account) {
    if (account.starts_with(kAccountPrefix) || account.starts_with(kUnnamedPrefix))
        return std::string(kAccountPrefix) + std::string(account);
    return std::string(account);
}

std::string review_subject(const PlayerKey& player, const std::string& account) {
    if (!account.empty()) return account_subject(account);
    return fmt::format("{}{}/{}/{}", kUnnamedPrefix, player.relay_id, player.match_id,
                       player.player);
}

std::string canonical_subject(std::string_view typed) {
    if (typed.starts_with(kAccountPrefix))
        return account_subject(typed.substr(kAccountPrefix.size()));
    return std::string(typed);
}

}  // namespace arbiter::host
