/*
 * Arbiter host, embedding C API, version 3.
 *
 * For relays written in C, Rust, C#, Go or anything else that can call C: the whole host
 * (plugin loading, ingest, dispatch, aggregation, sinks) behind opaque handles. The same
 * principles as the plugin ABI (abi/include/arbiter/arbiter_plugin.h): C99, fixed-width
 * types, status codes, a last error per host, borrowed inputs, nothing that throws.
 * Link libarbiter-host.so (or the static arbiter_host library from C++).
 *
 * Threads: a host is driven by one thread at a time (the relay's thread that pushes
 * batches); distinct hosts are independent. Callbacks, for actions and for log lines
 * alike, run on the thread of the call that raised them, inside that call (destroy
 * included: it ends open matches, which may raise actions and log). Keep a callback and
 * its user_data alive until the host is destroyed or the callback is replaced.
 * An embedded host runs its plugins on the calling thread unless its config sets
 * `[host] threads` above 1. Then plugins run on the host's worker threads: actions are
 * still raised on the calling thread (inside a later push, or any call that reads the
 * host), but a plugin's log lines reach the log callback from a worker thread, one line
 * at a time; a log callback must then not wait for anything the pushing thread holds
 * (a lock taken around arbiter_host_push, say), or both wait for ever. The same holds,
 * with any thread count, from arbiter_host_begin_reload until its outcome is known: the
 * new version is loaded and created on a thread of the host's own, and with one thread
 * its catch-up runs on another, so their log lines reach the callback from there.
 *
 * From inside the action callback, the calls that do not re-enter the pipeline may be
 * made on the same host: arbiter_host_set_action_callback (the new callback hears the
 * next action on), arbiter_host_set_log_callback, arbiter_host_last_error,
 * arbiter_host_plugin_errors and arbiter_host_api_version. Any other call on that host
 * fails with ARBITER_ERR_INVALID_ARGUMENT and says why in last_error, and
 * arbiter_host_destroy is ignored (and logged). From inside the log callback, call only
 * arbiter_host_set_log_callback and arbiter_host_api_version.
 *
 * Output: the library never writes to stdout. Its log lines go to stderr, or to the
 * callback set with arbiter_host_set_log_callback, at the `[host] log_level` of the host
 * created last.
 *
 * Plugins: a bundled plugin named in the config (`library = "reference"`) is looked up in
 * the plugin folder installed beside this library (<dir of libarbiter-host.so>/arbiter/
 * plugins), wherever the embedding program itself stands.
 *
 * Versions: 1 was the first release. 2 added arbiter_host_api_version, the log callback,
 * ARBITER_ERR_PLUGIN_REFUSED, and a create that fails when a plugin is refused or none is
 * configured, unless `[host] partial_start = true`. 3 added the reload that does not hold
 * the stream (arbiter_host_begin_reload, arbiter_host_reload_outcome, ARBITER_PENDING).
 *
 * Ownership: inputs are borrowed for the call. Strings and buffers the host returns stay
 * valid until the next call on the same host, or until it is destroyed.
 */
#ifndef ARBITER_HOST_H
#define ARBITER_HOST_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ARBITER_HOST_API_VERSION 3

typedef int32_t arbiter_status;
#define ARBITER_OK 0
/* An argument was NULL or unusable. */
#define ARBITER_ERR_INVALID_ARGUMENT 1
/* The config could not be read or has errors (last_error lists them with file:line:column). */
#define ARBITER_ERR_CONFIG 2
/* The input was refused (a batch failing ingest, a reload that failed); the host goes on. */
#define ARBITER_ERR_REFUSED 3
/* Something failed inside the host; last_error says what. */
#define ARBITER_ERR_INTERNAL 4
/* A configured plugin was refused (arbiter_host_plugin_errors says why), or the config
 * enables none. Added in 2. */
#define ARBITER_ERR_PLUGIN_REFUSED 5
/* Not an error: the reload begun last is still under way (arbiter_host_reload_outcome).
 * Added in 3. */
#define ARBITER_PENDING 6

/* Actions, ordered: a higher one includes the lower ones. */
#define ARBITER_ACTION_CLEAR 0
#define ARBITER_ACTION_MONITOR 1
#define ARBITER_ACTION_FLAG_FOR_REVIEW 2
#define ARBITER_ACTION_SHADOW_RESTRICT 3

typedef struct arbiter_host arbiter_host;

/* One player's assessment in one match. */
typedef struct arbiter_assessment {
    /* sizeof(arbiter_assessment) as the host compiled it. */
    uint64_t struct_size;
    const char* relay_id;     /* NUL-terminated */
    uint64_t match_id;
    uint32_t player;
    uint32_t action;          /* ARBITER_ACTION_* */
    double combined_score;    /* in [0, 1] */
    const char* account_id;   /* NUL-terminated; "" when the relay gave none */
    /* Everything, as one JSON object: class scores, reasons, every signal and its
     * evidence. NUL-terminated. */
    const char* json;
} arbiter_assessment;

/* Called when a player's action goes up. The assessment is valid during the call. */
typedef void (*arbiter_action_callback)(void* user_data, const arbiter_assessment* assessment);

/* The API version of the library actually loaded: compare it with the
 * ARBITER_HOST_API_VERSION the program was compiled with before using what a later
 * version added. Added in 2. */
uint32_t arbiter_host_api_version(void);

/* Log levels, as the callback receives them. */
#define ARBITER_LOG_TRACE 0
#define ARBITER_LOG_DEBUG 1
#define ARBITER_LOG_INFO 2
#define ARBITER_LOG_WARN 3
#define ARBITER_LOG_ERROR 4

/* Receives one log line (NUL-terminated, without a newline; valid during the call), on
 * the thread of the call that logged it. */
typedef void (*arbiter_log_callback)(void* user_data, int32_t level, const char* message);

/* Sends every host's log lines to callback instead of stderr (NULL: back to stderr).
 * Process-wide. Once it returns, the old callback is not called again. Safe to call from
 * inside the callback. Added in 2. */
arbiter_status arbiter_host_set_log_callback(arbiter_log_callback callback, void* user_data);

/* Creates a host from a server_config.toml file and loads every configured plugin.
 * Returns ARBITER_OK and *out_host; or an error, with *out_host set when its last_error
 * explains it (read it, then destroy it), NULL otherwise. ARBITER_ERR_PLUGIN_REFUSED when
 * a plugin could not be loaded (arbiter_host_plugin_errors lists each with the reason) or
 * the config enables no plugin: such a host would report every player Clear. With
 * `[host] partial_start = true` it starts with the plugins that loaded instead (and the
 * refusals are still listed). */
arbiter_status arbiter_host_create(const char* config_path, arbiter_host** out_host);

/* The same, from the text of a config held in memory; relative paths resolve against
 * base_dir (NULL: the current folder). */
arbiter_status arbiter_host_create_from_text(const char* config_text, uint64_t config_size, const char* base_dir,
                                             arbiter_host** out_host);

/* Ends every open match (which may call the action and log callbacks), flushes the
 * sinks, unloads the plugins and frees the host. */
void arbiter_host_destroy(arbiter_host* host);

/* The detail of the last failed call on this host (an invalid argument included), ""
 * after a successful one. */
const char* arbiter_host_last_error(arbiter_host* host);

/* The plugins the host refused at creation or on a reload, one per line; "" when none. */
const char* arbiter_host_plugin_errors(arbiter_host* host);

/* One EventBatch (abi/schema/events.fbs), as the relay built it. Verified before any
 * plugin sees it. ARBITER_ERR_REFUSED when ingest refused it (last_error says why). */
arbiter_status arbiter_host_push(arbiter_host* host, const uint8_t* batch, uint64_t size);

/* A match whose stream closed without a MatchEnd event. */
arbiter_status arbiter_host_end_match(arbiter_host* host, const char* relay_id, uint64_t match_id);

/* Registers the function called when a player's action goes up (NULL to stop). */
arbiter_status arbiter_host_set_action_callback(arbiter_host* host, arbiter_action_callback callback,
                                                void* user_data);

/* Every assessed player, ordered by relay, match and player. *out_assessments points at
 * host-owned memory, valid until the next call on the host. The elements stand
 * struct_size bytes apart: a caller compiled against an older, smaller arbiter_assessment
 * steps by struct_size, not by its own sizeof, and reads only the fields it knows. */
arbiter_status arbiter_host_assessments(arbiter_host* host, const arbiter_assessment** out_assessments,
                                        uint64_t* out_count);

/* Reloads a plugin from its file, carrying its state across (docs/abi-rules.md, rules 12 to
 * 14), within the call: the stream is held for the load, the save and the restore.
 * ARBITER_ERR_REFUSED when the new version fails; the old one keeps running. */
arbiter_status arbiter_host_reload_plugin(arbiter_host* host, const char* plugin_name);

/* Reloads a plugin as `arbiter serve` does, without holding the stream for it: the new
 * version is loaded and created on a thread of the host's own while the relay goes on
 * pushing; then, at a later push (or arbiter_host_reload_outcome), its state goes over.
 * With `[host] threads` above 1, shard by shard, each between two of its own batches (a
 * shard's matches wait for its save and restore, or, for a shard of many players, for a
 * fork of the host); with one thread, by a fork of the host, which holds the stream for
 * the fork alone while a copy saves and the new version catches up. A plugin that cannot
 * go over so (without ARB_CAP_STATE; on several threads, one not sharded by match; on one
 * thread, an isolated one or one built for another event schema) is swapped whole at
 * that push, as arbiter_host_reload_plugin swaps it. One such reload at a time per host.
 * Returns ARBITER_OK once the load has begun; ARBITER_ERR_INVALID_ARGUMENT when
 * plugin_name is NULL or the reload begun before is still under way; ARBITER_ERR_REFUSED
 * when the config names no such plugin. How it ended: arbiter_host_reload_outcome. A call
 * that changes the plugins (arbiter_host_reload_plugin, arbiter_host_apply_config) first
 * lets it finish; arbiter_host_destroy waits for its load and drops what was not swapped
 * in. Added in 3. */
arbiter_status arbiter_host_begin_reload(arbiter_host* host, const char* plugin_name);

/* The reload begun last by arbiter_host_begin_reload, moved on as a push moves it:
 * ARBITER_PENDING while it is under way; ARBITER_OK once it has ended and the new version
 * runs (its state carried, or started fresh when the new version refused the state: the
 * log says which); ARBITER_ERR_REFUSED when the new version failed (last_error says why;
 * the old one keeps running); ARBITER_ERR_INVALID_ARGUMENT when none was begun. Asked
 * again after it ended, it answers the same. Added in 3. */
arbiter_status arbiter_host_reload_outcome(arbiter_host* host);

/* Applies a changed server_config.toml. ARBITER_ERR_CONFIG when it has errors (the old
 * config stays); ARBITER_ERR_REFUSED when a plugin's change failed (that plugin keeps
 * running as it was; the rest is applied). */
arbiter_status arbiter_host_apply_config(arbiter_host* host, const char* config_path);

#ifdef __cplusplus
}
#endif

#endif /* ARBITER_HOST_H */
