-- Arbiter's Luanti mod: what the server sees of each player, written as JSON Lines into the
-- world folder for `arbiter luanti-bridge` to follow, and the bridge's flags told to staff.
--
-- Why files: a mod cannot open a socket unless the operator trusts it with the insecure
-- environment; the world folder needs no trust at all. docs/games/luanti.md has the design
-- and every line kind this file writes.
--
-- Coordinates are Luanti's (y up, one node = one metre); the bridge turns them into
-- Arbiter's (z up). Times are minetest.get_us_time(): the server's monotonic clock, the
-- relay clock of the match.

arbiter = {}

local settings = minetest.settings
local segment_bytes = tonumber(settings:get("arbiter.segment_bytes")) or 4194304
local max_segments = tonumber(settings:get("arbiter.max_segments")) or 64
local inventory_interval = tonumber(settings:get("arbiter.inventory_interval")) or 1.0
local flags_interval = tonumber(settings:get("arbiter.flags_interval")) or 2.0

local root = minetest.get_worldpath() .. "/arbiter"
local events_dir = root .. "/events"
minetest.mkdir(root)
minetest.mkdir(events_dir)

minetest.register_privilege("arbiter_staff", {
	description = "Hears Arbiter's flags in chat (a flag asks for review, never a kick)",
	give_to_singleplayer = false,
})

local storage = minetest.get_mod_storage()

-- Addresses are never written, only a salted hash: the salt is this world's own.
local salt = storage:get_string("address_salt")
if salt == "" then
	salt = tostring(math.random(1, 2 ^ 31)) .. tostring(os.time()) .. tostring(minetest.get_us_time())
	storage:set_string("address_salt", salt)
end

---------------------------------------------------------------------------------------------
-- Segments: numbered files, the next begun when one is full. The bridge deletes what it has
-- sent, so the segments on disk are the ones still owed; past max_segments the mod writes
-- nothing more and counts what it drops until the bridge catches up.

local function segment_path(index)
	return string.format("%s/%010d.jsonl", events_dir, index)
end

local function exists(path)
	local f = io.open(path, "rb")
	if f then f:close() return true end
	return false
end

-- A run begins a new segment: the old one may end in the middle of a line if the server
-- died while writing it (the bridge reports that line and skips it).
-- Carry on after the last segment a previous run wrote, by the storage and by the disk
-- both: mod storage is saved now and then, so after a crash it may be behind the files (and
-- a new run must never append to an old run's segment).
local segment_index = storage:get_int("segment_index")
for _, file in ipairs(minetest.get_dir_list(events_dir, false) or {}) do
	local number = tonumber(file:match("^(%d+)%.jsonl$"))
	if number and number > segment_index then segment_index = number end
end
segment_index = segment_index + 1
storage:set_int("segment_index", segment_index)
local oldest_owed = segment_index
for i = segment_index - 1, math.max(1, segment_index - max_segments - 1), -1 do
	if exists(segment_path(i)) then oldest_owed = i else break end
end

-- Per player: what was last reported, so that only changes are written.
local players = {}  -- name -> { allowance = line, server_move = bool, items = {}, ... }
local left_this_step = {}  -- name -> state of a player who left since the last step
local join_line, allowance_line  -- a player's lines, defined with the reports below

local out = io.open(segment_path(segment_index), "ab")
local written = 0
local pending = {}       -- lines of this step, written at its end
local lost_steps = 0     -- steps dropped while the bridge was behind
local lost_from_us = nil

local function room_for_another_segment()
	while oldest_owed < segment_index and not exists(segment_path(oldest_owed)) do
		oldest_owed = oldest_owed + 1
	end
	return segment_index - oldest_owed + 1 < max_segments
end

local function next_segment()
	if out then out:close() end
	segment_index = segment_index + 1
	storage:set_int("segment_index", segment_index)
	out = io.open(segment_path(segment_index), "ab")
	written = 0
end

local function emit(line)
	pending[#pending + 1] = line
end

local function json(value)
	return minetest.write_json(value)
end

-- A step that cannot be written is counted, for the `lost` line that goes ahead of the
-- next step written.
local function drop_step(now)
	lost_steps = lost_steps + 1
	lost_from_us = lost_from_us or now
	pending = {}
end

-- Writes the step's lines; a step is never split across segments, so the bridge cuts its
-- batches at step lines whatever it finds on disk.
local function write_lines(now)
	if #pending == 0 then return end
	if written >= segment_bytes then
		if room_for_another_segment() then
			next_segment()
		else
			drop_step(now)
			return
		end
	end
	if not out then
		minetest.log("error", "[arbiter] cannot write " .. segment_path(segment_index))
		drop_step(now)
		return
	end
	if lost_steps > 0 then
		local head = { json({ k = "lost", t = now, steps = lost_steps, from_t = lost_from_us }) }
		-- The dropped steps may have told of a join or an allowance that is never told
		-- again: every player's go again, ahead of this step's own lines (which may be of
		-- anyone, the player who joined in the gap among them).
		for _, state in pairs(players) do
			head[#head + 1] = join_line(state, now, true)
			local player = minetest.get_player_by_name(state.name)
			if player then
				state.allowance = nil
				head[#head + 1] = allowance_line(player, state, now)
			end
		end
		for _, state in pairs(left_this_step) do
			head[#head + 1] = join_line(state, now, true)
		end
		table.insert(pending, 1, table.concat(head, "\n"))
		minetest.log("warning", string.format(
			"[arbiter] %d steps were not written: the bridge fell %d segments behind",
			lost_steps, max_segments))
		lost_steps, lost_from_us = 0, nil
	end
	local text = table.concat(pending, "\n") .. "\n"
	out:write(text)
	out:flush()
	written = written + #text
	pending = {}
end

local function write_step(now)
	write_lines(now)
	left_this_step = {}
end

---------------------------------------------------------------------------------------------
-- What a player is allowed: physics overrides, the privileges that change movement, and
-- whether the engine moves the player (attached). Exposed so that a game or a test can
-- see what the mod reports.

function arbiter.allowance_of(player)
	local name = player:get_player_name()
	local physics = player:get_physics_override() or {}
	local privs = minetest.get_player_privs(name)
	return {
		speed = physics.speed or 1.0,
		jump = physics.jump or 1.0,
		gravity = physics.gravity or 1.0,
		fast = privs.fast == true,
		fly = privs.fly == true,
		noclip = privs.noclip == true,
		attached = player:get_attach() ~= nil,
	}
end

-- The seconds the server says a dig of `node` with what `digger` wields takes: the figure
-- the engine's own dig check (dug_too_fast) charges against its dig pool.
function arbiter.dig_time_of(digger, node)
	local def = minetest.registered_nodes[node.name]
	if not def then return nil end
	local caps = digger:get_wielded_item():get_tool_capabilities()
	local params = minetest.get_dig_params(def.groups or {}, caps)
	if not params or not params.diggable then return nil end
	return params.time
end

---------------------------------------------------------------------------------------------

local function fmt(x)
	return string.format("%.4f", x)
end

local function node_def_at(x, y, z)
	local node = minetest.get_node_or_nil({ x = x, y = y, z = z })
	if not node then return nil, nil end
	return minetest.registered_nodes[node.name], node.name
end

-- Whether the player stands on, swims in or climbs something. The engine's own collision
-- result is not open to mods in 5.6, so this is generous: any walkable node (of any shape:
-- slabs, snow, fences) in the cells under or beside the player's feet counts, as do
-- liquids and ladders at the body. Unloaded nodes count too: nothing is known there, and a
-- false "unsupported" would read as flying.
local feet_heights, footprint, body_heights = { -0.1, 0.4 }, { -0.35, 0.35 }, { 0.2, 1.0 }
local function supported(pos)
	for _, dy in ipairs(feet_heights) do
		for _, dx in ipairs(footprint) do
			for _, dz in ipairs(footprint) do
				local def = node_def_at(pos.x + dx, pos.y + dy, pos.z + dz)
				if def == nil or def.walkable ~= false then return true end
			end
		end
	end
	for _, dy in ipairs(body_heights) do
		local def = node_def_at(pos.x, pos.y + dy, pos.z)
		if def == nil or def.climbable or (def.liquidtype and def.liquidtype ~= "none") then
			return true
		end
	end
	return false
end

local full_cube = {
	normal = true, allfaces = true, allfaces_optional = true, glasslike = true,
	glasslike_framed = true, glasslike_framed_optional = true,
}

-- The full solid node the player's body is in, if any: feet or head inside one is more than
-- collision allows. Slabs, stairs and other shapes are left out (a player stands inside
-- their node's cell).
local body_points = { 0.3, 1.4 }
local function inside_node(pos)
	for _, dy in ipairs(body_points) do
		local def, name = node_def_at(pos.x, pos.y + dy, pos.z)
		if def and def.walkable ~= false and full_cube[def.drawtype or "normal"]
				and def.collision_box == nil and def.node_box == nil then
			return name
		end
	end
	return nil
end

local control_bits = { "up", "down", "left", "right", "jump", "aux1", "sneak", "dig", "place", "zoom" }

local function controls_of(player)
	local control = player:get_player_control()
	local bits = 0
	for i, key in ipairs(control_bits) do
		if control[key] then bits = bits + 2 ^ (i - 1) end
	end
	return bits
end

-- The allowance is looked at when something may have changed it (a privilege granted or
-- revoked, physics or attachment set: the wrappers below mark the player), and once a second
-- besides, for whatever changes it some other way: not every step, since reading a
-- player's privileges goes to the auth handler.
local allowance_interval = 1.0

-- The player's allowance line, or nil when it is the one last written.
allowance_line = function(player, state, now)
	state.allowance_due = allowance_interval
	state.allowance_dirty = false
	local a = arbiter.allowance_of(player)
	local body = string.format(
		'"p":"%s","speed":%s,"jump":%s,"gravity":%s,"fast":%s,"fly":%s,"noclip":%s,"attached":%s}',
		state.name, fmt(a.speed), fmt(a.jump), fmt(a.gravity), tostring(a.fast),
		tostring(a.fly), tostring(a.noclip), tostring(a.attached))
	if body == state.allowance then return nil end
	state.allowance = body
	return string.format('{"k":"allow","t":%d,', now) .. body
end

local function report_allowance(player, state, now)
	local line = allowance_line(player, state, now)
	if line then emit(line) end
end

local function mark_allowance(name)
	local state = players[name]
	if state then state.allowance_dirty = true end
end

local function report_position(player, state, now)
	local pos = player:get_pos()
	local vel = player:get_velocity() or { x = 0, y = 0, z = 0 }
	local inside = inside_node(pos)
	-- After the server set the position, the client has not yet taken it up (a joining
	-- client may load the map for seconds): until it moves, whether it stands is unknown,
	-- and an unknown is not reported as flying.
	if state.server_move then
		state.held_at = pos
	elseif state.held_at and vector.distance(pos, state.held_at) > 0.01 then
		state.held_at = nil
	end
	local ground = state.held_at and "null" or tostring(supported(pos))
	emit(string.format(
		'{"k":"pos","t":%d,"p":"%s","x":%s,"y":%s,"z":%s,"vx":%s,"vy":%s,"vz":%s,"yaw":%s,"pitch":%s,"ctl":%d,"ground":%s%s%s}',
		now, state.name, fmt(pos.x), fmt(pos.y), fmt(pos.z), fmt(vel.x), fmt(vel.y), fmt(vel.z),
		fmt(player:get_look_horizontal()), fmt(player:get_look_vertical()), controls_of(player),
		ground,
		inside and (',"inside":' .. json(inside)) or "",
		state.server_move and ',"server":true' or ""))
	state.server_move = false
end

local function item_counts(player)
	local counts = {}
	local inv = player:get_inventory()
	if not inv then return counts end
	for _, stack in ipairs(inv:get_list("main") or {}) do
		if not stack:is_empty() then
			local name = stack:get_name()
			counts[name] = (counts[name] or 0) + stack:get_count()
		end
	end
	return counts
end

local function report_items(player, state, now, source)
	local counts = item_counts(player)
	for name, count in pairs(counts) do
		local before = state.items[name] or 0
		if count ~= before then
			emit(json({ k = "item", t = now, p = state.name, item = name, delta = count - before,
				count = count, source = source }))
		end
	end
	for name, before in pairs(state.items) do
		if counts[name] == nil then
			emit(json({ k = "item", t = now, p = state.name, item = name, delta = -before,
				count = 0, source = source }))
		end
	end
	state.items = counts
end

---------------------------------------------------------------------------------------------
-- The match: one per server run.

local started_us = minetest.get_us_time()
emit(json({
	k = "start", t = started_us, unix = os.time(), session = string.format("%d-%d", os.time(), started_us),
	game = "minetest", world = minetest.get_worldpath():match("([^/]+)$") or "world",
	step_s = tonumber(settings:get("dedicated_server_step")) or 0.09,
	version = minetest.get_version().string,
}))

local function mark_server_move(object)
	if object and object.is_player and object:is_player() then
		local state = players[object:get_player_name()]
		if state then state.server_move = true end
	end
end

local function mark_allowance_of(object)
	if object and object.is_player and object:is_player() then
		mark_allowance(object:get_player_name())
	end
end

-- Every position the server sets itself goes through set_pos or move_to on the player's
-- object, and every change of physics or attachment through set_physics_override,
-- set_attach or set_detach: wrapped once, on the first join (the metatable is shared by
-- every player).
local wrapped = false
local function wrap_player_methods(player)
	if wrapped then return end
	wrapped = true
	local mt = getmetatable(player)
	local methods = mt and (mt.__index or mt)
	if type(methods) ~= "table" then return end
	local marks = {
		set_pos = mark_server_move, move_to = mark_server_move,
		set_physics_override = mark_allowance_of, set_attach = mark_allowance_of,
		set_detach = mark_allowance_of,
	}
	for method, mark in pairs(marks) do
		local original = methods[method]
		if original then
			methods[method] = function(self, ...)
				mark(self)
				return original(self, ...)
			end
		end
	end
end

-- Privileges: /grant and /revoke run these callbacks; a mod that calls set_player_privs
-- does not, so that is wrapped too.
minetest.register_on_priv_grant(function(name) mark_allowance(name) end)
minetest.register_on_priv_revoke(function(name) mark_allowance(name) end)
local set_player_privs = minetest.set_player_privs
function minetest.set_player_privs(name, ...)
	local result = set_player_privs(name, ...)
	mark_allowance(name)
	return result
end

join_line = function(state, now, reconnect)
	return json({ k = "join", t = now, p = state.name, addr = state.address_hash,
		proto = state.protocol, lang = state.lang, reconnect = reconnect })
end

minetest.register_on_joinplayer(function(player, last_login)
	wrap_player_methods(player)
	local name = player:get_player_name()
	local now = minetest.get_us_time()
	local info = minetest.get_player_information(name) or {}
	local state = {
		name = name, server_move = true, items = item_counts(player), inventory_due = 0,
		address_hash = minetest.sha1(salt .. (info.address or "")):sub(1, 16),
		protocol = info.protocol_version or 0, lang = info.lang_code or "",
	}
	players[name] = state
	emit(join_line(state, now, last_login ~= nil))
	report_allowance(player, state, now)
end)

minetest.register_on_leaveplayer(function(player, timed_out)
	local name = player:get_player_name()
	emit(json({ k = "leave", t = minetest.get_us_time(), p = name, timeout = timed_out == true }))
	left_this_step[name] = players[name]
	players[name] = nil
end)

minetest.register_on_punchnode(function(pos, node, puncher)
	if not puncher or not puncher:is_player() then return end
	emit(json({ k = "dig_start", t = minetest.get_us_time(), p = puncher:get_player_name(),
		node = node.name, x = pos.x, y = pos.y, z = pos.z,
		tool = puncher:get_wielded_item():get_name() }))
end)

minetest.register_on_dignode(function(pos, oldnode, digger)
	if not digger or not digger:is_player() then return end
	emit(json({ k = "dig", t = minetest.get_us_time(), p = digger:get_player_name(),
		node = oldnode.name, x = pos.x, y = pos.y, z = pos.z,
		tool = digger:get_wielded_item():get_name(),
		-- Left out when the server cannot time it: a time of 0 would make the dig free.
		time = arbiter.dig_time_of(digger, oldnode) }))
end)

minetest.register_on_placenode(function(pos, newnode, placer)
	if not placer or not placer:is_player() then return end
	emit(json({ k = "place", t = minetest.get_us_time(), p = placer:get_player_name(),
		node = newnode.name, x = pos.x, y = pos.y, z = pos.z }))
end)

minetest.register_on_punchplayer(function(player, hitter, time_from_last_punch, tool_capabilities, dir, damage)
	if not hitter or not hitter:is_player() then return end
	local a, b = hitter:get_pos(), player:get_pos()
	emit(json({ k = "punch", t = minetest.get_us_time(), p = hitter:get_player_name(),
		target = player:get_player_name(), tool = hitter:get_wielded_item():get_name(),
		range = vector.distance(a, b), damage = damage or 0,
		interval = time_from_last_punch or 0 }))
end)

minetest.register_on_dieplayer(function(player, reason)
	emit(json({ k = "die", t = minetest.get_us_time(), p = player:get_player_name(),
		reason = reason and reason.type or "unknown" }))
end)

minetest.register_on_respawnplayer(function(player)
	local state = players[player:get_player_name()]
	if state then state.server_move = true end
	emit(json({ k = "respawn", t = minetest.get_us_time(), p = player:get_player_name() }))
	return false
end)

minetest.register_on_cheat(function(player, cheat)
	if not player or not player:is_player() then return end
	emit(json({ k = "cheat", t = minetest.get_us_time(), p = player:get_player_name(),
		type = cheat and cheat.type or "unknown" }))
end)

---------------------------------------------------------------------------------------------
-- Flags from the bridge: <world>/arbiter/flags.jsonl, read from where the last read ended.

local flags_path = root .. "/flags.jsonl"
local flags_offset = storage:get_int("flags_offset")
local flags_due = 0

-- Returns how many were told: the server's log says so, so that an operator (and the
-- real-server test) can see a flag reached the game.
local function tell_staff(text)
	local told = 0
	for _, player in ipairs(minetest.get_connected_players()) do
		local name = player:get_player_name()
		if minetest.check_player_privs(name, { arbiter_staff = true }) then
			minetest.chat_send_player(name, text)
			told = told + 1
		end
	end
	return told
end

local function read_flags()
	local f = io.open(flags_path, "rb")
	if not f then return end
	local size = f:seek("end")
	if size < flags_offset then flags_offset = 0 end  -- the bridge began a new file
	f:seek("set", flags_offset)
	local text = f:read(math.min(size - flags_offset, 65536)) or ""
	f:close()
	local consumed = 0
	for line, ending in text:gmatch("([^\n]*)(\n)") do
		consumed = consumed + #line + #ending
		local flag = minetest.parse_json(line)
		if type(flag) == "table" and type(flag.player) == "string" then
			local told = tell_staff(minetest.colorize("#ff8800", string.format(
				"[arbiter] %s: %s (%s). Review it; Arbiter never kicks.",
				flag.player, tostring(flag.action), tostring(flag.reasons or ""))))
			minetest.log("action", string.format("[arbiter] told %d staff: %s is at %s",
				told, flag.player, tostring(flag.action)))
		end
	end
	flags_offset = flags_offset + consumed
	storage:set_int("flags_offset", flags_offset)
end

---------------------------------------------------------------------------------------------
-- Every step: each player's allowance (when it changed), position, and now and then the
-- inventory; then the step line that closes the step, and the lines go to disk at once.

local step_number = 0
local step_s = tonumber(settings:get("dedicated_server_step")) or 0.09

-- What reporting costs the server: time spent in the loop below, per player and step,
-- logged at shutdown (docs/games/luanti.md quotes it).
local cost_us, cost_player_steps = 0, 0

minetest.register_globalstep(function(dtime)
	local now = minetest.get_us_time()
	step_number = step_number + 1
	local connected = minetest.get_connected_players()
	cost_player_steps = cost_player_steps + #connected
	for _, player in ipairs(connected) do
		local state = players[player:get_player_name()]
		if state then
			state.allowance_due = (state.allowance_due or 0) - dtime
			if state.allowance == nil or state.allowance_dirty or state.allowance_due <= 0 then
				report_allowance(player, state, now)
			end
			report_position(player, state, now)
			state.inventory_due = state.inventory_due - dtime
			if state.inventory_due <= 0 then
				report_items(player, state, now, "step")
				state.inventory_due = inventory_interval
			end
		end
	end
	emit(string.format('{"k":"step","t":%d,"n":%d,"lag_us":%d}', now, step_number,
		math.max(0, math.floor((dtime - step_s) * 1e6))))
	write_step(now)
	cost_us = cost_us + (minetest.get_us_time() - now)
	flags_due = flags_due - dtime
	if flags_due <= 0 then
		read_flags()
		flags_due = flags_interval
	end
end)

minetest.register_on_shutdown(function()
	emit(json({ k = "end", t = minetest.get_us_time(), reason = "shutdown" }))
	write_step(minetest.get_us_time())
	if out then out:close() out = nil end
	if cost_player_steps > 0 then
		minetest.log("action", string.format(
			"[arbiter] reported %d player-steps in %d steps, %.1f us per player-step",
			cost_player_steps, step_number, cost_us / cost_player_steps))
	end
end)
