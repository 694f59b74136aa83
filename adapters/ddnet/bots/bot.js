// A headless DDNet client (the npm package `teeworlds`, a 0.6-protocol client) that plays
// as one of three kinds of player, for the end-to-end test (adapters/ddnet/tests/
// real_server_test.py):
//
//   honest  runs, jumps, hooks, aims and fires at random, with human-like, irregular
//           timing: each decision comes after a pause drawn from a skewed distribution
//           (mostly 150-600 ms, now and then over a second), and the aim moves in strokes;
//   macro   the same kinds of input, at a fixed period (a macro's metronome);
//   aimbot  aim snapped to the nearest other tee on every snapshot, hooking and firing at
//           it, while running about like the honest ones.
//
// usage: node bot.js HOST PORT NAME honest|macro|aimbot SECONDS SEED
// It prints one JSON line when it has entered the game and one when it leaves, with the
// inputs it changed, so that the test can tell a bot that never played from one that did.
'use strict';

const teeworlds = require('teeworlds');

const [host, portText, name, kind, secondsText, seedText] = process.argv.slice(2);
if (!host || !portText || !name || !['honest', 'macro', 'aimbot'].includes(kind)) {
  console.error('usage: node bot.js HOST PORT NAME honest|macro|aimbot SECONDS SEED');
  process.exit(1);
}
const seconds = Number(secondsText || 60);

// A small seeded generator (mulberry32), so that a run can be repeated.
let seed = (Number(seedText || 1) >>> 0) || 1;
function random() {
  seed = (seed + 0x6d2b79f5) >>> 0;
  let t = seed;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
// A human pause: log-normal around 300 ms (people's inter-action times are skewed).
function humanPause() {
  const u = Math.max(random(), 1e-9), v = random();
  const normal = Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  return Math.min(2500, Math.max(60, Math.exp(Math.log(300) + 0.6 * normal)));
}

const client = new teeworlds.Client(host, Number(portText), name, { timeout: 15000 });
const input = client.movement;
let changes = 0;
let entered = false;
let finished = false;
let aim = { x: 100, y: 0 };
const timers = [];

function send() {
  changes++;
  client.sendInput();
}

function setAim(x, y) {
  aim = { x: Math.round(x), y: Math.round(y) };
  input.SetAim(aim.x, aim.y);
}

// One random decision of a player: what to do next.
function decide() {
  const r = random();
  if (r < 0.3) {
    const d = random();
    if (d < 0.4) input.RunLeft(); else if (d < 0.8) input.RunRight(); else input.RunStop();
  } else if (r < 0.5) {
    input.Jump(true);
    timers.push(setTimeout(() => { input.Jump(false); send(); }, 60 + random() * 200));
  } else if (r < 0.65) {
    input.Hook(true);
    timers.push(setTimeout(() => { input.Hook(false); send(); }, 150 + random() * 700));
  } else if (r < 0.8) {
    input.Fire();
    timers.push(setTimeout(() => { input.Fire(); send(); }, 50 + random() * 120));
  } else {
    // An aim stroke: the mouse moves to a new angle over a few steps.
    const angle = random() * 2 * Math.PI;
    const length = 80 + random() * 250;
    const steps = 2 + Math.floor(random() * 4);
    const from = { ...aim };
    for (let i = 1; i <= steps; i++) {
      timers.push(setTimeout(() => {
        const f = i / steps;
        setAim(from.x + (Math.cos(angle) * length - from.x) * f,
               from.y + (Math.sin(angle) * length - from.y) * f);
        send();
      }, i * (30 + random() * 40)));
    }
  }
  send();
}

function honestLoop() {
  if (finished) return;
  decide();
  timers.push(setTimeout(honestLoop, humanPause()));
}

// The macro: the same cycle of inputs, every 200 ms exactly.
function macroLoop() {
  let step = 0;
  timers.push(setInterval(() => {
    if (finished) return;
    switch (step++ % 4) {
      case 0: input.RunRight(); input.Jump(true); break;
      case 1: input.Jump(false); input.Fire(); break;
      case 2: input.RunLeft(); input.Fire(); break;
      case 3: input.RunStop(); break;
    }
    send();
  }, 200));
}

// The aim bot: every snapshot, the aim on the nearest other tee, hooking and firing at it.
function onSnapshot(items) {
  if (finished || kind !== 'aimbot') return;
  let own;
  for (const item of items)
    if (item.type_id === 10 && item.parsed && item.parsed.local) own = item.parsed.client_id;
  if (own === undefined) return;
  const characters = items.filter(i => i.type_id === 9 && i.parsed && i.parsed.character_core);
  const me = characters.find(c => c.id === own);
  if (!me) return;
  let best, bestDistance = Infinity;
  for (const c of characters) {
    if (c.id === own) continue;
    const dx = c.parsed.character_core.x - me.parsed.character_core.x;
    const dy = c.parsed.character_core.y - me.parsed.character_core.y;
    const distance = Math.hypot(dx, dy);
    if (distance < bestDistance) { bestDistance = distance; best = { dx, dy }; }
  }
  if (!best) return;
  setAim(best.dx, best.dy);
  input.Hook(bestDistance < 380);
  input.Fire();
  send();
}

client.on('connected', () => {
  entered = true;
  console.log(JSON.stringify({ bot: name, kind, event: 'entered' }));
  input.FlagPlaying(true);
  if (kind === 'macro') macroLoop(); else honestLoop();
  timers.push(setTimeout(finish, seconds * 1000));
});
client.on('snapshot', onSnapshot);
client.on('disconnect', reason => {
  if (!finished) {
    console.log(JSON.stringify({ bot: name, kind, event: 'dropped', reason }));
    process.exit(2);
  }
});

function finish() {
  finished = true;
  for (const t of timers) { clearTimeout(t); clearInterval(t); }
  console.log(JSON.stringify({ bot: name, kind, event: 'left', input_changes: changes }));
  client.Disconnect().then(() => process.exit(0), () => process.exit(0));
  setTimeout(() => process.exit(0), 2000);
}

// Not in the game in time: a failure the test reports with this line.
setTimeout(() => {
  if (!entered) {
    console.log(JSON.stringify({ bot: name, kind, event: 'never entered' }));
    process.exit(3);
  }
}, 30000);
client.connect();
