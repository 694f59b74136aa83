#include "items_area.hpp"

#include <string>

#include "event_fields.hpp"

namespace arbiter::reference {

ItemsArea::ItemsArea(const ConfigTable& config) {
    ConfigTable items = config.table("items");
    ItemSettings& i = settings_;
    i.known_only = items.boolean("known_only", i.known_only);
    i.window_s = items.number("window_s", i.window_s, Range::between(1.0, 86400.0));
    i.max_lag_allowance_s =
        items.number("max_lag_allowance_s", i.max_lag_allowance_s, Range::between(0.0, 10.0));
    if (items.has("rate_sources")) i.rate_sources = items.strings("rate_sources");
    ConfigTable table = items.table("items");
    for (const std::string& id : table.keys()) {
        ConfigTable it = table.table(id);
        ItemLimits limits;
        limits.unique = it.boolean("unique", false);
        limits.stack = it.integer("stack", limits.unique ? 1 : 0, Range::between(1, 2147483647));
        if (limits.unique && limits.stack != 1)
            throw ConfigError(it.path() + ".stack",
                              "a unique item stacks to 1, got " + std::to_string(limits.stack));
        limits.respawn_s = it.number("respawn_s", 0.0, Range::between(0.0, 86400.0));
        i.items[id] = limits;
    }
}

void ItemsArea::on_inventory(const fb::Event& event, const LagSeen& lag, Player& player,
                             Reporter& out) const {
    const uint32_t id = event.player();
    const int64_t t_us = event.relay_time_us();
    const fb::InventoryChange& change = *event.body_as_InventoryChange();
    const std::string item_id = text(change.item_id());
    const Evidence what = Evidence()
                              .add("t_us", t_us)
                              .add("item_id", item_id)
                              .add("delta", change.delta())
                              .add("count_after", change.count_after())
                              .add("source", text(change.source()));
    if (is_unknown_item(item_id, settings_)) {
        out.report({.player = id,
                    .code = "items.unknown",
                    .score = 0.9,
                    .confidence = 0.9,
                    .evidence = Evidence().add("item_id", item_id).add("change", what)});
        return;
    }
    const ItemLimits* item = settings_.find(item_id);
    if (!item) return;
    if (auto stack = check_stack(change.count_after(), *item)) {
        out.report({.player = id,
                    .code = item->unique ? "items.unique" : "items.stack",
                    .score = stack->score,
                    .confidence = 1.0,
                    .evidence = Evidence()
                                    .add("count", stack->value)
                                    .add("limit", stack->limit)
                                    .add("unique", item->unique)
                                    .add("change", what)});
    }
    if (change.delta() > 0 && settings_.rate_limited(text(change.source())) &&
        item->respawn_s > 0) {
        auto& times = player.acquisitions[item_id];
        times.push_back(t_us);
        trim(times, micros(settings_.window_s));
        const double allowance =
            lag_allowance(lag, times.front(), t_us, settings_.max_lag_allowance_s,
                          settings_.max_lag_allowance_s)
                .used_s;
        if (auto rate = check_acquisition_rate(times, *item, allowance, settings_)) {
            out.report({.player = id,
                        .code = "items.rate",
                        .score = rate->score,
                        .confidence = 0.9,
                        .evidence = Evidence()
                                        .add("item_id", item_id)
                                        .add("acquisitions", rate->acquisitions)
                                        .add("allowed", rate->allowed)
                                        .add("respawn_s", item->respawn_s)
                                        .add("window_s", rate->window_s)
                                        .add("lag_allowance_s", rate->allowance_s)
                                        .add("first_t_us", rate->first_us)
                                        .add("last_t_us", rate->last_us)});
        }
    }
}

void ItemsArea::on_input_lost(Player& player) const {
    player.acquisitions.clear();
}

void ItemsArea::save_player(StateWriter& out, const Player& player) const {
    put_times_by_name(out, player.acquisitions);
}

void ItemsArea::restore_player(StateReader& in, Player& player) const {
    player.acquisitions = get_times_by_name(in);
}

}  // namespace arbiter::reference
