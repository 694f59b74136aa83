#!/usr/bin/env python3
"""Arbiter on a real Luanti server, end to end.

Starts Debian's minetestserver on a fresh world with the arbiter mod (and the test-only
arbiter_cheats mod), `arbiter serve` with samples/luanti/server_config.toml,
`arbiter luanti-bridge` following the world live, and real `minetest --random-input` clients
under xvfb-run, for --seconds (60 by default). Honest clients must end Clear; each emulated
cheater (the server allows it something the mod reports it may not have) must reach
FlagForReview through its own check. Prints each player's outcome beside what the engine's
own anti-cheat reported for it.

A part that cannot run is a failure with its reason, never a skip: CI installs them
(scripts/install-deps.sh).

  real_server_test.py --arbiter build/release/bin/arbiter --source .            # the CI test
  real_server_test.py --arbiter ... --source . --seconds 1800 --honest 4 --no-cheats   # the long run
"""
import argparse
import collections
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

SERVER = "/usr/games/minetestserver"
CLIENT = "/usr/games/minetest"

# role -> the check that must catch it
CHEATS = {
    "speed": "luanti.speed",
    "fly": "luanti.fly",
    "noclip": "luanti.noclip",
    "dig": "dig_time.overdraw",  # LagPool's dig budget
}
CHEATERS = {"speedy": "speed", "flyer": "fly", "burrower": "noclip", "digger": "dig"}


def fail(message):
    print(f"FAILED: {message}", file=sys.stderr)
    sys.exit(1)


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def write(path, text):
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def client_conf(path, role):
    # A small window and a low frame rate: the clients render on the CPU.
    lines = [
        "screen_w = 320", "screen_h = 240", "fps_max = 10", "viewing_range = 20",
        "enable_sound = false", "enable_shaders = false", "enable_clouds = false",
        "enable_particles = false", "smooth_lighting = false", "enable_minimap = false",
    ]
    # What a modified client switches on for itself: the server lets it through.
    if role in ("fly", "noclip"):
        lines.append("free_move = true")
    if role == "noclip":
        lines.append("noclip = true")
    write(path, "\n".join(lines) + "\n")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--arbiter", required=True)
    parser.add_argument("--source", required=True)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--honest", type=int, default=2)
    parser.add_argument("--no-cheats", action="store_true")
    parser.add_argument("--config", help="another server_config.toml than samples/luanti's")
    parser.add_argument("--lose-steps", action="store_true",
                        help="start the bridge halfway, with segments so small that the mod "
                             "drops steps before it comes, and the last client joining then")
    parser.add_argument("--seed", type=int, default=20261128,
                        help="the world's map seed: fixed, so that a failure can be run again "
                             "on the same ground")
    parser.add_argument("--keep", action="store_true", help="keep the work folder")
    args = parser.parse_args()

    for tool in (SERVER, CLIENT, shutil.which("xvfb-run") or "/usr/bin/xvfb-run"):
        if not os.access(tool, os.X_OK):
            fail(f"{tool} is missing: run scripts/install-deps.sh (minetest-server, minetest, xvfb)")
    source = os.path.abspath(args.source)
    arbiter = os.path.abspath(args.arbiter)
    profile = os.path.abspath(args.config) if args.config else os.path.join(
        source, "samples", "luanti", "server_config.toml")

    work = tempfile.mkdtemp(prefix="arbiter-luanti-")
    world = os.path.join(work, "world")
    os.makedirs(os.path.join(world, "worldmods"))
    shutil.copytree(os.path.join(source, "adapters/luanti/mod/arbiter"),
                    os.path.join(world, "worldmods/arbiter"))
    shutil.copytree(os.path.join(source, "adapters/luanti/tests/mods/arbiter_cheats"),
                    os.path.join(world, "worldmods/arbiter_cheats"))
    write(os.path.join(world, "world.mt"), "gameid = minetest\nbackend = sqlite3\n")

    players = {f"honest{i + 1}": None for i in range(args.honest)}
    if not args.no_cheats:
        players.update(CHEATERS)
    roles = ",".join(f"{n}={r}" for n, r in players.items() if r)
    port = free_port()
    write(os.path.join(work, "server.conf"), "\n".join([
        "bind_address = 127.0.0.1", "ipv6_server = false", "server_announce = false",
        # Everyone is staff here, so that a flag's chat line has somebody to reach.
        "disallow_empty_password = false", "default_privs = interact, shout, arbiter_staff",
        "enable_damage = true", f"fixed_map_seed = {args.seed}", f"port = {port}", f"arbiter_cheats.roles = {roles}",
        "debug_log_level = action"] +
        # Two segments of 8 KiB fill in a few seconds: the mod drops steps until the bridge,
        # started halfway, deletes what it has sent.
        (["arbiter.segment_bytes = 8192", "arbiter.max_segments = 2"] if args.lose_steps else []) +
        [""]))

    # The profile, with the bundled plugins found beside this build's arbiter.
    config = os.path.join(work, "server_config.toml")
    shutil.copy(profile, config)
    sock = os.path.join(work, "relays.sock")
    processes = []

    def start(name, command, **kw):
        log = open(os.path.join(work, f"{name}.log"), "w")
        p = subprocess.Popen(command, stdout=kw.pop("stdout", log), stderr=log, cwd=work,
                             start_new_session=True, **kw)
        processes.append((name, p))
        return p

    def stop(p, sig=signal.SIGTERM, wait=20):
        if p.poll() is None:
            try:
                os.killpg(p.pid, sig)
            except ProcessLookupError:
                pass
            try:
                p.wait(wait)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()

    try:
        serve = start("serve", [arbiter, "serve", config, "--unix", sock, "--log-level", "warn"])
        server = start("server", [SERVER, "--config", os.path.join(work, "server.conf"),
                                  "--world", world, "--gameid", "minetest",
                                  "--logfile", os.path.join(work, "server-debug.txt")])
        deadline = time.time() + 30
        while time.time() < deadline and not (
                os.path.exists(sock) and os.path.isdir(os.path.join(world, "arbiter/events"))):
            if serve.poll() is not None or server.poll() is not None:
                break
            time.sleep(0.2)
        if serve.poll() is not None:
            fail("arbiter serve ended at once: " + open(os.path.join(work, "serve.log")).read())
        if server.poll() is not None or not os.path.isdir(os.path.join(world, "arbiter/events")):
            fail("minetestserver did not start with the arbiter mod: " +
                 open(os.path.join(work, "server.log")).read()[-2000:])
        assessments_path = os.path.join(work, "assessments.jsonl")

        def start_bridge():
            return start("bridge", [arbiter, "luanti-bridge", world, sock, "--json"],
                         stdout=open(assessments_path, "w"))

        bridge = None if args.lose_steps else start_bridge()
        clients = {}
        for index, (name, role) in enumerate(players.items()):
            if args.lose_steps and index == len(players) - 1:
                time.sleep(10.0)  # this one joins while the mod drops steps
            conf = os.path.join(work, f"client-{name}.conf")
            client_conf(conf, role)
            clients[name] = start(f"client-{name}", [
                "xvfb-run", "-a", "-s", "-screen 0 320x240x24", CLIENT, "--config", conf,
                "--go", "--address", "127.0.0.1", "--port", str(port), "--name", name,
                "--password", "", "--random-input"])
            time.sleep(1.0)  # xvfb-run -a picks displays one at a time
        def rss_kib(p):
            try:
                for line in open(f"/proc/{p.pid}/status"):
                    if line.startswith("VmRSS:"):
                        return int(line.split()[1])
            except OSError:
                return None
            return None

        started = time.time()
        bridge_rss = []
        while time.time() - started < args.seconds:
            if bridge is None and time.time() - started >= args.seconds / 2:
                bridge = start_bridge()
                bridge_started = time.time()
            if bridge is not None and len(bridge_rss) == 0 and time.time() - (
                    bridge_started if args.lose_steps else started) >= 5:
                bridge_rss.append(rss_kib(bridge))
            for name, p in clients.items():
                if p.poll() is not None:
                    fail(f"client {name} ended early (status {p.returncode}): " +
                         open(os.path.join(work, f"client-{name}.log")).read()[-2000:])
            time.sleep(1.0)
        bridge_rss.append(rss_kib(bridge))
        for p in clients.values():
            stop(p)
        stop(server)  # its last line ends the match
        # The bridge sends the rest within a poll; the match's last assessments follow.
        time.sleep(3.0)
        stop(bridge)
        stop(serve)
        bridge_log = open(os.path.join(work, "bridge.log")).read()
        if bridge.returncode not in (0,):
            fail(f"the bridge ended with {bridge.returncode}: {bridge_log[-2000:]}")

        final = {}
        for line in open(assessments_path):
            a = json.loads(line)
            final[a["account_id"]] = a
        engine = collections.defaultdict(collections.Counter)
        debug = open(os.path.join(work, "server-debug.txt"), errors="replace").read()
        for m in re.finditer(r"\[arbiter_cheats\] engine reports (\S+) for (\S+)", debug):
            engine[m.group(1)][m.group(2)] += 1
        lines_sent = re.search(r"(\d+) lines, (\d+) refused, (\d+) batches sent", bridge_log)
        delay = re.search(r"(\d+) steps sent live, ([\d.]+) ms after the server wrote them on "
                          r"average, ([\d.]+) ms at most", bridge_log)
        cost = re.search(r"\[arbiter\] reported (\d+) player-steps in (\d+) steps, ([\d.]+) us "
                         r"per player-step", debug)

        print(f"{len(players)} players, {args.seconds:.0f} s; bridge: "
              f"{lines_sent.group(0) if lines_sent else bridge_log.strip()[-200:]}")
        if len(bridge_rss) == 2 and None not in bridge_rss:
            print(f"the bridge's memory: {bridge_rss[0] / 1024:.1f} MiB 5 s in, "
                  f"{bridge_rss[1] / 1024:.1f} MiB at the end")
        if delay:
            print(f"live: {delay.group(1)} steps reached the server {delay.group(2)} ms after the "
                  f"game wrote them on average, {delay.group(3)} ms at most")
        if cost:
            print(f"the mod: {cost.group(1)} player-steps in {cost.group(2)} steps, "
                  f"{cost.group(3)} us of server time per player-step")
        print(f"{'player':<10} {'plays':<8} {'Arbiter':<14} {'checks':<48} engine's own reports")
        problems = []
        if args.lose_steps:
            # The steps the mod dropped are a gap the assessments carry; the player who
            # joined in it is told again (join and allowance), so no line of it is refused.
            lost = [a["account_id"] for a in final.values() if a.get("lost_input")]
            print(f"input lost, on the assessments of: {', '.join(sorted(lost)) or 'nobody'}")
            if not lost:
                problems.append("the mod dropped steps, yet no assessment says input was lost")
            if not lines_sent or lines_sent.group(2) != "0":
                problems.append("the bridge refused lines after the steps the mod dropped")
        for name, role in players.items():
            a = final.get(name)
            if a is None:
                problems.append(f"{name}: no assessment")
                continue
            codes = sorted({s["code"] for s in a.get("signals", [])})
            reports = ", ".join(f"{k} x{v}" for k, v in sorted(engine[name].items())) or "none"
            print(f"{name:<10} {role or 'honest':<8} {a['action']:<14} {','.join(codes)[:48]:<48} {reports}")
            if role is None and a["action"] != "Clear":
                problems.append(f"{name} plays honestly but is {a['action']}: {a['reasons']}")
            if role is not None:
                check = CHEATS[role]
                if a["action"] != "FlagForReview":
                    problems.append(f"{name} ({role}) is only {a['action']}")
                elif not any(c.startswith(check) for c in codes):
                    problems.append(f"{name} ({role}) was flagged, but not by {check}: {codes}")
                elif not re.search(rf"\[arbiter\] told [1-9]\d* staff: {name} is at FlagForReview",
                                   debug):
                    problems.append(f"{name}'s flag never reached the game's staff in chat")
        if problems:
            # What a reviewer would look at: every signal of the players judged wrongly.
            for name, role in players.items():
                a = final.get(name)
                wrong = a is not None and ((role is None) != (a["action"] == "Clear"))
                for shown in (a or {}).get("signals", []) if wrong else []:
                    print(f"  {name}: {shown['code']} {json.dumps(shown.get('evidence'))}")
            args.keep = True
            fail("; ".join(problems) + f" (work folder kept: {work})")
        print("ok")
    finally:
        for name, p in reversed(processes):
            stop(p, signal.SIGKILL, 5)
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
