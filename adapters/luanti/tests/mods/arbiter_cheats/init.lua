-- Test only (adapters/luanti/tests/real_server_test.py). For the players named in the
-- setting `arbiter_cheats.roles` ("name=role,..."; roles speed, fly, noclip, dig), the
-- server allows what a modified client would take for itself, and the arbiter mod is made
-- to report the allowance an unmodified client has. Honest players are left alone.

local roles = {}
for entry in (minetest.settings:get("arbiter_cheats.roles") or ""):gmatch("[^,]+") do
	local name, role = entry:match("^%s*([%w_-]+)=(%a+)%s*$")
	if name then roles[name] = role end
end

-- A pick that digs anything diggable at once: the dig cheat's tool.
minetest.register_tool("arbiter_cheats:instant_pick", {
	description = "Instant pick (test only)",
	inventory_image = "default_tool_steelpick.png",
	tool_capabilities = {
		full_punch_interval = 0.2,
		max_drop_level = 3,
		groupcaps = {
			cracky = { times = { [1] = 0.05, [2] = 0.05, [3] = 0.05 }, uses = 0, maxlevel = 3 },
			crumbly = { times = { [1] = 0.05, [2] = 0.05, [3] = 0.05 }, uses = 0, maxlevel = 3 },
			choppy = { times = { [1] = 0.05, [2] = 0.05, [3] = 0.05 }, uses = 0, maxlevel = 3 },
			snappy = { times = { [1] = 0.05, [2] = 0.05, [3] = 0.05 }, uses = 0, maxlevel = 3 },
			oddly_breakable_by_hand = { times = { [1] = 0.05, [2] = 0.05, [3] = 0.05 }, uses = 0 },
		},
	},
})

local reported_allowance = arbiter.allowance_of
function arbiter.allowance_of(player)
	local allowance = reported_allowance(player)
	local role = roles[player:get_player_name()]
	if role then
		-- What an unmodified client is allowed: nothing the server granted for the cheat.
		allowance.speed, allowance.fast, allowance.fly, allowance.noclip = 1.0, false, false, false
	end
	return allowance
end

-- The dig time an unmodified client needs: with the hand, or a steel pick where the hand
-- cannot dig (stone), never the instant pick the server let the cheater hold.
local reported_dig_time = arbiter.dig_time_of
function arbiter.dig_time_of(digger, node)
	if roles[digger:get_player_name()] ~= "dig" then return reported_dig_time(digger, node) end
	local def = minetest.registered_nodes[node.name]
	if not def then return nil end
	for _, tool in ipairs({ "", "default:pick_steel" }) do
		local caps = ItemStack(tool):get_tool_capabilities()
		local params = minetest.get_dig_params(def.groups or {}, caps)
		if params and params.diggable then return params.time end
	end
	return 1.0
end

minetest.register_on_joinplayer(function(player)
	local name = player:get_player_name()
	local role = roles[name]
	if not role then return end
	local privs = minetest.get_player_privs(name)
	if role == "speed" then
		player:set_physics_override({ speed = 3.0 })
	elseif role == "fly" then
		privs.fly = true
	elseif role == "noclip" then
		privs.fly, privs.noclip = true, true
	elseif role == "dig" then
		player:get_inventory():set_stack("main", 1, ItemStack("arbiter_cheats:instant_pick"))
		player:set_wielded_item(ItemStack("arbiter_cheats:instant_pick"))
	end
	if role == "noclip" or role == "dig" then
		-- Out of harm's way: 30 m down may be a cave over lava, or water, and a dead
		-- player's digs never reach a mod (the engine reports interacted_while_dead).
		player:set_armor_groups({ immortal = 1 })
		-- Into the rock under the spawn: passing through nodes, or digging, is all there is.
		minetest.after(1.0, function()
			local p = player:get_pos()
			if p then player:set_pos({ x = p.x, y = p.y - 30, z = p.z }) end
		end)
	end
	minetest.set_player_privs(name, privs)
	minetest.log("action", "[arbiter_cheats] " .. name .. " plays the " .. role .. " cheat")
end)

-- The engine's own anti-cheat, logged so that the test can print it beside Arbiter's view.
minetest.register_on_cheat(function(player, cheat)
	if player and player:is_player() then
		minetest.log("action", "[arbiter_cheats] engine reports " .. player:get_player_name() ..
			" for " .. tostring(cheat and cheat.type))
	end
end)
