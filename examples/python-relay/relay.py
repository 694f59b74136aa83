#!/usr/bin/env python3
"""A relay in Python that embeds the Arbiter host through its C API (arbiter/arbiter_host.h).

It loads libarbiter-host.so with ctypes, starts a host from a server_config.toml, then
plays a short match it makes up itself: two players walk in straight lines for ten
seconds of relay time, one at 5 m/s, one at 60 m/s (a speed hack). Each EventBatch is
built with the Python code that flatc generates from abi/schema/events.fbs, generated
afresh at every run (generated code is never committed).

    python3 relay.py --config samples/server_config.toml

Exit status: 0 when the speeder is FlagForReview and the walker Clear, with every batch
accepted; 1 when not; 2 when the host could not be run; 77 when a prerequisite is
missing (Debian's python3-flatbuffers, or flatc), which ctest counts as a skip.
"""
import argparse
import ctypes
import ctypes.util
import glob
import importlib
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE_ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
# False for a copy of this file taken out of the checkout: SOURCE_ROOT is then no place to
# look for the schema or the sample config.
IN_CHECKOUT = os.path.isfile(os.path.join(SOURCE_ROOT, "host", "include", "arbiter",
                                          "arbiter_host.h"))
# The prefix this file was installed into, when it stands where an install puts it
# (PREFIX/share/arbiter/examples/python-relay/relay.py: the arbiter-dev package, or
# `cmake --install`), else None.
INSTALLED_PREFIX = None
if HERE.split(os.sep)[-4:] == ["share", "arbiter", "examples", "python-relay"]:
    INSTALLED_PREFIX = os.path.normpath(os.path.join(HERE, "..", "..", "..", ".."))

EXIT_PASSED, EXIT_FAILED, EXIT_ERROR, EXIT_SKIPPED = 0, 1, 2, 77

# The schema version this relay writes: ARB_SCHEMA_VERSION_MAJOR/MINOR in
# abi/include/arbiter/arbiter_plugin.h, and the file identifier of abi/schema/events.fbs.
SCHEMA_MAJOR, SCHEMA_MINOR = 1, 1
FILE_IDENTIFIER = b"ARB1"

# ---------------------------------------------------------------------------------------
# The C API, as ctypes declarations (arbiter_host.h, version 3). This relay uses nothing
# that came after version 2, so it runs on a library of version 2 or later.
# ---------------------------------------------------------------------------------------

REQUIRED_API_VERSION = 2

STATUS_NAMES = {
    0: "ARBITER_OK",
    1: "ARBITER_ERR_INVALID_ARGUMENT",
    2: "ARBITER_ERR_CONFIG",
    3: "ARBITER_ERR_REFUSED",
    4: "ARBITER_ERR_INTERNAL",
    5: "ARBITER_ERR_PLUGIN_REFUSED",
}
OK, ERR_INVALID_ARGUMENT, ERR_CONFIG, ERR_REFUSED, ERR_INTERNAL, ERR_PLUGIN_REFUSED = range(6)

ACTION_NAMES = {0: "Clear", 1: "Monitor", 2: "FlagForReview", 3: "ShadowRestrict"}
LOG_LEVEL_NAMES = {0: "trace", 1: "debug", 2: "info", 3: "warn", 4: "error"}


def status_name(status):
    return STATUS_NAMES.get(status, "unknown status %d" % status)


class Assessment(ctypes.Structure):
    """struct arbiter_assessment."""
    _fields_ = [
        ("struct_size", ctypes.c_uint64),
        ("relay_id", ctypes.c_char_p),
        ("match_id", ctypes.c_uint64),
        ("player", ctypes.c_uint32),
        ("action", ctypes.c_uint32),
        ("combined_score", ctypes.c_double),
        ("account_id", ctypes.c_char_p),
        ("json", ctypes.c_char_p),
    ]


ACTION_CALLBACK = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.POINTER(Assessment))
LOG_CALLBACK = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int32, ctypes.c_char_p)


def declare(lib):
    """Gives each function its C signature, so that ctypes converts arguments right."""
    host_p, status = ctypes.c_void_p, ctypes.c_int32
    signatures = {
        "arbiter_host_api_version": (ctypes.c_uint32, []),
        "arbiter_host_set_log_callback": (status, [LOG_CALLBACK, ctypes.c_void_p]),
        "arbiter_host_create": (status, [ctypes.c_char_p, ctypes.POINTER(host_p)]),
        "arbiter_host_destroy": (None, [host_p]),
        "arbiter_host_last_error": (ctypes.c_char_p, [host_p]),
        "arbiter_host_plugin_errors": (ctypes.c_char_p, [host_p]),
        "arbiter_host_push": (status, [host_p, ctypes.POINTER(ctypes.c_uint8), ctypes.c_uint64]),
        "arbiter_host_end_match": (status, [host_p, ctypes.c_char_p, ctypes.c_uint64]),
        "arbiter_host_set_action_callback": (status, [host_p, ACTION_CALLBACK, ctypes.c_void_p]),
        "arbiter_host_assessments": (status, [host_p, ctypes.POINTER(ctypes.POINTER(Assessment)),
                                              ctypes.POINTER(ctypes.c_uint64)]),
    }
    for name, (restype, argtypes) in signatures.items():
        function = getattr(lib, name)  # AttributeError when the library lacks it
        function.restype, function.argtypes = restype, argtypes


def text(value):
    """A string the host returned (bytes or None) as str."""
    return value.decode("utf-8", "replace") if value else ""


def find_library(given):
    """--lib, else the library of a build tree of this checkout, else that of the install this
    file stands in (PREFIX/lib/TRIPLET or PREFIX/lib), else the system's."""
    if given:
        return given
    candidates = []
    if IN_CHECKOUT:
        build = os.path.join(SOURCE_ROOT, "build")
        candidates.append(os.path.join(build, "release", "lib", "libarbiter-host.so"))
        candidates += sorted(glob.glob(os.path.join(build, "*", "lib", "libarbiter-host.so")))
    if INSTALLED_PREFIX:
        candidates += sorted(glob.glob(os.path.join(INSTALLED_PREFIX, "lib", "*",
                                                    "libarbiter-host.so")))
        candidates.append(os.path.join(INSTALLED_PREFIX, "lib", "libarbiter-host.so"))
    for path in candidates:
        if os.path.isfile(path):
            return path
    return ctypes.util.find_library("arbiter-host")


def find_data(given, in_checkout, in_prefix, library):
    """A file the relay needs: the path given, else the first that exists of a copy next to
    this file (one copied out with its schema or config beside it), the copy in the install
    the library in use came from (PREFIX/lib, or a multiarch PREFIX/lib/TRIPLET), the copy in
    the install this file stands in (PREFIX/share/arbiter/examples/python-relay), this
    checkout's, and the install of the arbiter command on PATH, /usr/local and /usr.
    The library's install comes before this file's, for it holds the files that library was
    built with; a build tree holds none, so a run from a checkout takes the checkout's.
    Returns (the path or None, the places looked in)."""
    if given:
        return given, [given]
    library_prefixes = []
    if library and os.sep in library:  # a bare name came from the loader's search: no folder
        folder = os.path.dirname(os.path.realpath(library))
        library_prefixes.append(os.path.dirname(folder))
        if os.path.basename(os.path.dirname(folder)) == "lib":
            library_prefixes.append(os.path.dirname(os.path.dirname(folder)))
    other_prefixes = ["/usr/local", "/usr"]
    command = shutil.which("arbiter")
    if command:
        other_prefixes.insert(0, os.path.dirname(os.path.dirname(os.path.realpath(command))))
    places = [os.path.join(HERE, in_prefix[-1])]
    places += [os.path.join(prefix, *in_prefix) for prefix in library_prefixes]
    if INSTALLED_PREFIX:
        places.append(os.path.join(INSTALLED_PREFIX, *in_prefix))
    if IN_CHECKOUT:
        places.append(os.path.join(SOURCE_ROOT, *in_checkout))
    places += [os.path.join(prefix, *in_prefix) for prefix in other_prefixes]
    places = list(dict.fromkeys(places))
    for place in places:
        if os.path.isfile(place):
            return place, places
    return None, places


# ---------------------------------------------------------------------------------------
# The generated FlatBuffers code.
# ---------------------------------------------------------------------------------------

def load_generated(schema, looked_in, folder, flatc):
    """Runs flatc --python on the schema into folder and imports the package it writes.

    Returns the generated modules by name (fb.EventBatch, fb.Vec3, ...), or exits with
    EXIT_SKIPPED when a prerequisite is missing, and with EXIT_ERROR when there is no
    schema (None: none of looked_in holds one) or flatc refuses it.
    """
    try:
        import flatbuffers  # noqa: F401  (the runtime the generated code imports)
    except ImportError:
        print("SKIP: the FlatBuffers Python runtime is missing for %s: install Debian's "
              "python3-flatbuffers (apt-get install python3-flatbuffers), which serves "
              "/usr/bin/python3" % sys.executable, file=sys.stderr)
        sys.exit(EXIT_SKIPPED)
    flatc_path = shutil.which(flatc)
    if not flatc_path:
        print("SKIP: flatc not found (%s): install Debian's flatbuffers-compiler, or pass --flatc"
              % flatc, file=sys.stderr)
        sys.exit(EXIT_SKIPPED)
    if schema is None:
        print("events.fbs not found: pass --schema; looked in\n  %s" % "\n  ".join(looked_in),
              file=sys.stderr)
        sys.exit(EXIT_ERROR)
    if not os.path.isfile(schema):
        print("%s: no such schema file" % schema, file=sys.stderr)
        sys.exit(EXIT_ERROR)
    os.makedirs(folder, exist_ok=True)
    run = subprocess.run([flatc_path, "--python", "-o", folder, schema],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if run.returncode != 0:
        print("flatc --python failed on %s:\n%s" % (schema, run.stdout[-2000:]), file=sys.stderr)
        sys.exit(EXIT_ERROR)
    sys.path.insert(0, folder)
    importlib.invalidate_caches()
    names = ["Event", "EventBatch", "EventBody", "MatchEnd", "MatchStart", "PlayerJoin",
             "PlayerLeave", "PositionUpdate", "Vec3"]
    modules = {name: importlib.import_module("arbiter.fb." + name) for name in names}
    return argparse.Namespace(**modules)


class BatchBuilder:
    """Builds the EventBatches of one match, like sdk/include/arbiter/sdk/batch_builder.hpp:
    add events in relay-time order, then finish() returns one batch; sequences count from 0."""

    def __init__(self, fb, relay_id, match_id):
        self.kind = fb.EventBody.EventBody  # the union's type codes
        self.fb, self.relay_id, self.match_id = fb, relay_id, match_id
        self.sequence = 0
        self._begin()

    def _begin(self):
        import flatbuffers
        self.builder = flatbuffers.Builder(4096)  # one per batch: the runtime has no Clear()
        self.events = []

    def _event(self, t_us, tick, player, body_type, body):
        fb, b = self.fb, self.builder
        fb.Event.EventStart(b)
        fb.Event.EventAddRelayTimeUs(b, t_us)
        fb.Event.EventAddTick(b, tick)
        fb.Event.EventAddPlayer(b, player)
        fb.Event.EventAddBodyType(b, body_type)
        fb.Event.EventAddBody(b, body)
        self.events.append(fb.Event.EventEnd(b))

    def match_start(self, t_us, tick, game, map_name, rules, tick_rate_hz, started_unix_us):
        fb, b = self.fb, self.builder
        # Strings (and every table) first: nothing may be created while a table is open.
        game, map_name, rules = (b.CreateString(game), b.CreateString(map_name),
                                 b.CreateString(rules))
        fb.MatchStart.MatchStartStart(b)
        fb.MatchStart.MatchStartAddGame(b, game)
        fb.MatchStart.MatchStartAddMap(b, map_name)
        fb.MatchStart.MatchStartAddRules(b, rules)
        fb.MatchStart.MatchStartAddRated(b, True)
        fb.MatchStart.MatchStartAddTickRateHz(b, tick_rate_hz)
        fb.MatchStart.MatchStartAddStartedUnixUs(b, started_unix_us)
        self._event(t_us, tick, 0, self.kind.MatchStart, fb.MatchStart.MatchStartEnd(b))

    def player_join(self, t_us, tick, player, account_id, connection_id):
        fb, b = self.fb, self.builder
        account, version = b.CreateString(account_id), b.CreateString("python-relay/1")
        fb.PlayerJoin.PlayerJoinStart(b)
        fb.PlayerJoin.PlayerJoinAddAccountId(b, account)
        fb.PlayerJoin.PlayerJoinAddClientVersion(b, version)
        fb.PlayerJoin.PlayerJoinAddConnectionId(b, connection_id)
        self._event(t_us, tick, player, self.kind.PlayerJoin, fb.PlayerJoin.PlayerJoinEnd(b))

    def position(self, t_us, tick, player, position, velocity):
        fb, b = self.fb, self.builder
        fb.PositionUpdate.PositionUpdateStart(b)
        # Structs are written in place, inside the table being built.
        fb.PositionUpdate.PositionUpdateAddPosition(b, fb.Vec3.CreateVec3(b, *position))
        fb.PositionUpdate.PositionUpdateAddVelocity(b, fb.Vec3.CreateVec3(b, *velocity))
        self._event(t_us, tick, player, self.kind.PositionUpdate,
                    fb.PositionUpdate.PositionUpdateEnd(b))

    def player_leave(self, t_us, tick, player, reason):
        fb, b = self.fb, self.builder
        reason = b.CreateString(reason)
        fb.PlayerLeave.PlayerLeaveStart(b)
        fb.PlayerLeave.PlayerLeaveAddReason(b, reason)
        self._event(t_us, tick, player, self.kind.PlayerLeave, fb.PlayerLeave.PlayerLeaveEnd(b))

    def match_end(self, t_us, tick, reason, ended_unix_us):
        fb, b = self.fb, self.builder
        reason = b.CreateString(reason)
        fb.MatchEnd.MatchEndStart(b)
        fb.MatchEnd.MatchEndAddReason(b, reason)
        fb.MatchEnd.MatchEndAddEndedUnixUs(b, ended_unix_us)
        self._event(t_us, tick, 0, self.kind.MatchEnd, fb.MatchEnd.MatchEndEnd(b))

    def finish(self):
        """The batch of every event added since the last finish; the sequence then advances."""
        fb, b = self.fb, self.builder
        relay_id = b.CreateString(self.relay_id)
        fb.EventBatch.EventBatchStartEventsVector(b, len(self.events))
        for event in reversed(self.events):  # FlatBuffers builds back to front
            b.PrependUOffsetTRelative(event)
        events = b.EndVector()
        fb.EventBatch.EventBatchStart(b)
        fb.EventBatch.EventBatchAddSchemaMajor(b, SCHEMA_MAJOR)
        fb.EventBatch.EventBatchAddSchemaMinor(b, SCHEMA_MINOR)
        fb.EventBatch.EventBatchAddRelayId(b, relay_id)
        fb.EventBatch.EventBatchAddMatchId(b, self.match_id)
        fb.EventBatch.EventBatchAddSequence(b, self.sequence)
        fb.EventBatch.EventBatchAddEvents(b, events)
        b.Finish(fb.EventBatch.EventBatchEnd(b), file_identifier=FILE_IDENTIFIER)
        data = bytes(b.Output())
        self._begin()
        self.sequence += 1
        return data


# ---------------------------------------------------------------------------------------
# The match.
# ---------------------------------------------------------------------------------------

RELAY_ID = "python-relay"
MATCH_ID = 1
TICK_HZ = 20
TICK_US = 1_000_000 // TICK_HZ
SECONDS = 10
TICKS_PER_BATCH = 4
# player id -> (account, velocity in m/s; x and y horizontal, z up)
PLAYERS = {1: ("walker", (5.0, 0.0, 0.0)), 2: ("speeder", (0.0, 60.0, 0.0))}
HONEST, CHEATER = 1, 2


def synthetic_match(fb):
    """Yields the match's batches: the start and the joins, positions at 20 Hz for ten
    seconds of relay time a few ticks per batch, then the leaves and the end."""
    match = BatchBuilder(fb, RELAY_ID, MATCH_ID)
    started_unix_us = int(time.time() * 1e6)
    match.match_start(0, 0, "python-demo", "flatland", "two-walkers", float(TICK_HZ),
                      started_unix_us)
    for player, (account, _) in PLAYERS.items():
        match.player_join(0, 0, player, account, connection_id=100 + player)
    yield match.finish()

    last_tick = SECONDS * TICK_HZ
    for tick in range(1, last_tick + 1):
        t_us = tick * TICK_US
        t_s = t_us / 1e6
        for player, (_, velocity) in PLAYERS.items():
            start = (0.0, 10.0 * player, 0.0)
            position = tuple(p + v * t_s for p, v in zip(start, velocity))
            match.position(t_us, tick, player, position, velocity)
        if tick % TICKS_PER_BATCH == 0 or tick == last_tick:
            yield match.finish()

    end_tick = last_tick + 1
    end_us = end_tick * TICK_US
    for player in PLAYERS:
        match.player_leave(end_us, end_tick, player, "quit")
    match.match_end(end_us, end_tick, "finished", started_unix_us + end_us)
    yield match.finish()


# ---------------------------------------------------------------------------------------
# The relay.
# ---------------------------------------------------------------------------------------

def on_log(user_data, level, message):
    print("[arbiter %s] %s" % (LOG_LEVEL_NAMES.get(level, level), text(message)), file=sys.stderr)


def on_action(user_data, assessment):
    # Valid during the call only: copy what is needed. No other host call from here.
    a = assessment.contents
    print("action: %s/%d/%d (%s) reaches %s (score %.2f)"
          % (text(a.relay_id), a.match_id, a.player, text(a.account_id),
             ACTION_NAMES.get(a.action, "?"), a.combined_score), flush=True)


def read_assessments(lib, host):
    """Copies arbiter_host_assessments: a list of (player, account, action, score, json)."""
    first = ctypes.POINTER(Assessment)()
    count = ctypes.c_uint64(0)
    status = lib.arbiter_host_assessments(host, ctypes.byref(first), ctypes.byref(count))
    if status != OK:
        raise RuntimeError("arbiter_host_assessments: %s: %s"
                           % (status_name(status), text(lib.arbiter_host_last_error(host))))
    if count.value == 0:
        return []
    # Step by the struct_size the host reports, not by our own sizeof: a later library may
    # append fields, and the fields we know keep their places.
    stride = first[0].struct_size
    if stride < ctypes.sizeof(Assessment):
        raise RuntimeError("arbiter_assessment is %d bytes in the library, %d here"
                           % (stride, ctypes.sizeof(Assessment)))
    base = ctypes.addressof(first.contents)
    result = []
    for i in range(count.value):
        a = Assessment.from_address(base + i * stride)
        result.append((a.player, text(a.account_id), a.action, a.combined_score, text(a.json)))
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lib", help="libarbiter-host.so (default: build/*/lib of this "
                        "checkout, or the library of the install this file stands in, then "
                        "the system's)")
    parser.add_argument("--config", help="server_config.toml (default: one next to this "
                        "file, else the sample config, share/arbiter/samples/ of the "
                        "library's install or of this file's, or this checkout's)")
    parser.add_argument("--schema", help="events.fbs (default: one next to this file, else "
                        "share/arbiter/schema/ of the library's install or of this file's, or "
                        "this checkout's abi/schema/)")
    parser.add_argument("--generated",
                        help="folder for flatc's Python output (default: a temporary one)")
    parser.add_argument("--flatc", default="flatc", help="the flatc to run (default: on PATH)")
    parser.add_argument("--json", action="store_true", help="also print each assessment's JSON")
    args = parser.parse_args()

    # The library first: the schema and the sample config are looked for beside it.
    library = find_library(args.lib)
    schema, looked_in = find_data(args.schema, ["abi", "schema", "events.fbs"],
                                  ["share", "arbiter", "schema", "events.fbs"], library)
    with tempfile.TemporaryDirectory(prefix="arbiter-python-relay-") as scratch:
        fb = load_generated(schema, looked_in, args.generated or scratch, args.flatc)
        print("schema: %s" % schema)
        return relay(args, fb, library)


def relay(args, fb, path):
    if not path:
        print("libarbiter-host.so not found: pass --lib", file=sys.stderr)
        return EXIT_ERROR
    config, looked_in = find_data(args.config, ["samples", "server_config.toml"],
                                  ["share", "arbiter", "samples", "server_config.toml"], path)
    if not config:
        print("server_config.toml not found: pass --config; looked in\n  %s"
              % "\n  ".join(looked_in), file=sys.stderr)
        return EXIT_ERROR
    print("library: %s\nconfig: %s" % (path, config))
    try:
        lib = ctypes.CDLL(path)  # CDLL releases the GIL during each call
        version = lib.arbiter_host_api_version
        version.restype, version.argtypes = ctypes.c_uint32, []
        api_version = version()
    except OSError as error:
        print("cannot load %s: %s" % (path, error), file=sys.stderr)
        return EXIT_ERROR
    except AttributeError:
        api_version = 1  # arbiter_host_api_version came with version 2
    if api_version < REQUIRED_API_VERSION:
        print("%s has C API version %d; this relay needs %d or later"
              % (path, api_version, REQUIRED_API_VERSION), file=sys.stderr)
        return EXIT_ERROR
    declare(lib)

    # The callbacks are kept in variables for as long as the library may call them: ctypes
    # frees the C thunk with the Python object.
    log_callback = LOG_CALLBACK(on_log)
    action_callback = ACTION_CALLBACK(on_action)
    lib.arbiter_host_set_log_callback(log_callback, None)
    host = ctypes.c_void_p()
    try:
        status = lib.arbiter_host_create(config.encode(), ctypes.byref(host))
        if status != OK:
            detail = text(lib.arbiter_host_last_error(host)) if host else "(no detail)"
            if status == ERR_CONFIG:
                print("the config has errors:\n%s" % detail, file=sys.stderr)
            elif status == ERR_PLUGIN_REFUSED:
                print("a plugin was refused, or none is enabled:\n%s" % detail, file=sys.stderr)
            else:  # ERR_INVALID_ARGUMENT, ERR_INTERNAL, or a status from a later version
                print("cannot start the host: %s: %s" % (status_name(status), detail),
                      file=sys.stderr)
            return EXIT_ERROR
        refused_plugins = text(lib.arbiter_host_plugin_errors(host))
        if refused_plugins:  # only with [host] partial_start = true
            print("refused plugins (running without them):\n%s" % refused_plugins, file=sys.stderr)
        status = lib.arbiter_host_set_action_callback(host, action_callback, None)
        if status != OK:
            print("arbiter_host_set_action_callback: %s: %s"
                  % (status_name(status), text(lib.arbiter_host_last_error(host))), file=sys.stderr)
            return EXIT_ERROR

        pushed = refused = 0
        batches = list(synthetic_match(fb))
        for sequence, batch in enumerate(batches):
            data = (ctypes.c_uint8 * len(batch)).from_buffer_copy(batch)
            status = lib.arbiter_host_push(host, data, len(batch))
            if status == OK:
                pushed += 1
            elif status == ERR_REFUSED:  # ingest refused it; the host goes on
                refused += 1
                print("batch %d refused: %s" % (sequence, text(lib.arbiter_host_last_error(host))),
                      file=sys.stderr)
            else:  # ERR_INVALID_ARGUMENT, ERR_INTERNAL, or a status from a later version
                print("batch %d: %s: %s" % (sequence, status_name(status),
                                            text(lib.arbiter_host_last_error(host))),
                      file=sys.stderr)
                return EXIT_ERROR
        if status != OK:
            # The last batch, with the MatchEnd, did not get through: end the match the way a
            # relay does when a stream closes without one.
            status = lib.arbiter_host_end_match(host, RELAY_ID.encode(), MATCH_ID)
            if status != OK:
                print("arbiter_host_end_match: %s: %s" % (status_name(status),
                                                          text(lib.arbiter_host_last_error(host))),
                      file=sys.stderr)

        try:
            assessments = read_assessments(lib, host)
        except RuntimeError as error:
            print(error, file=sys.stderr)
            return EXIT_ERROR
        actions = {}
        for player, account, action, score, json_text in assessments:
            actions[player] = ACTION_NAMES.get(action, "?")
            print("player %d (%s): %s score %.2f" % (player, account, actions[player], score))
            if args.json:
                print(json_text)
        print("pushed %d batches, %d refused" % (pushed, refused))
    finally:
        if host:
            lib.arbiter_host_destroy(host)  # may still log, and raise actions as it ends matches
        lib.arbiter_host_set_log_callback(LOG_CALLBACK(), None)  # NULL: back to stderr

    if refused:
        print("FAIL: %d batch(es) refused" % refused)
        return EXIT_FAILED
    if actions.get(CHEATER) != "FlagForReview" or actions.get(HONEST) != "Clear":
        print("FAIL: expected player %d FlagForReview and player %d Clear" % (CHEATER, HONEST))
        return EXIT_FAILED
    print("PASS")
    return EXIT_PASSED


if __name__ == "__main__":
    sys.exit(main())
