// Headless DDNet clients for the antibot module's run against a real DDNet 16.4 server
// (run.sh): honest bots that run, jump, hook, aim and fire at human-like, irregular
// intervals, and one macro bot that flips its direction every 200 ms exactly (10 ticks).
// Uses the npm package `teeworlds` (a 0.6 client); NODE_PATH must find it.
//
//   node bots.js PORT SECONDS HONEST_COUNT
'use strict';
const teeworlds = require('teeworlds');

const port = Number(process.argv[2] || 8303);
const seconds = Number(process.argv[3] || 60);
const honestCount = Number(process.argv[4] || 3);

// Deterministic randomness, so that a run can be repeated.
let seed = 12345;
function random() {
  seed = (seed * 1103515245 + 12345) & 0x7fffffff;
  return seed / 0x7fffffff;
}
// A human's pause between two decisions: log-normal, around 350 ms, rarely under 120.
function humanDelayMs() {
  const u = Math.max(random(), 1e-6), v = random();
  const normal = Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  return Math.max(90, Math.exp(Math.log(350) + 0.6 * normal));
}

const clients = [];
function start(name, behave) {
  const client = new teeworlds.Client('127.0.0.1', port, name, {timeout: 15000});
  client.on('connected', () => {
    console.log(`${name}: connected`);
    behave(client);
  });
  client.on('disconnect', reason => console.log(`${name}: disconnected: ${reason}`));
  client.connect();
  clients.push(client);
}

function honest(client) {
  const m = client.movement;
  let aimAngle = random() * 2 * Math.PI;
  const step = () => {
    const what = random();
    if (what < 0.35) {
      const d = random();
      if (d < 0.4) m.RunLeft(); else if (d < 0.8) m.RunRight(); else m.RunStop();
    } else if (what < 0.5) {
      m.Jump(true);
      setTimeout(() => { m.Jump(false); client.sendInput(); }, 60 + random() * 120);
    } else if (what < 0.6) {
      m.Hook(true);
      setTimeout(() => { m.Hook(false); client.sendInput(); }, 150 + random() * 400);
    } else if (what < 0.7) {
      m.Fire();
      setTimeout(() => { m.Fire(); client.sendInput(); }, 50 + random() * 80);
    }
    // The mouse drifts all the time.
    aimAngle += (random() - 0.5) * 1.2;
    const r = 100 + random() * 150;
    m.SetAim(Math.round(Math.cos(aimAngle) * r), Math.round(Math.sin(aimAngle) * r));
    client.sendInput();
    setTimeout(step, humanDelayMs());
  };
  setTimeout(step, humanDelayMs());
}

function macro(client) {
  const m = client.movement;
  let right = true;
  m.SetAim(100, 0);
  setInterval(() => {
    right = !right;
    if (right) m.RunRight(); else m.RunLeft();
    client.sendInput();
  }, 200);
}

for (let i = 0; i < honestCount; ++i) start(`honest${i + 1}`, honest);
start('macro', macro);

setTimeout(() => {
  for (const c of clients) c.Disconnect();
  setTimeout(() => process.exit(0), 500);
}, seconds * 1000);
