/*
 * Arbiter plugin ABI, version 1.1.
 *
 * The whole contract between the Arbiter host and an analyzer plugin. A plugin is a
 * shared library that exports one function, arbiter_plugin_entry (ARB_ENTRY_SYMBOL).
 * The host calls it once to negotiate versions and to exchange function tables; every
 * other call goes through those tables.
 *
 * Rules that hold for every slot below (see docs/abi-rules.md for their reasons):
 *
 *  - C99, fixed-width integers only; flags and enumerations are uint32_t.
 *  - Every table and argument struct begins with its own size in bytes (struct_size).
 *    Slots are only ever added at the end. A reader never touches a field at or past
 *    the struct_size it was given; a changed signature is a new slot with a new name.
 *  - Inputs are borrowed for the length of the call. What a plugin returns stays valid
 *    until the next call of the same slot on the same instance, or until destroy.
 *    Neither side frees memory the other allocated. Bytes and strings cross as pointer
 *    plus length (arb_bytes, arb_string); strings are UTF-8 and need not end in NUL
 *    unless a slot says so.
 *  - Every call that can fail returns an arb_status. The detail is read with
 *    last_error on the same instance, valid until the next call on that instance.
 *  - No exception, longjmp or C++ object crosses this boundary.
 *  - Threads: the host never enters one instance from two threads at once. Distinct
 *    instances may be called in parallel. Host services are thread-safe. A plugin
 *    starts no threads of its own, or joins them all in destroy, and uses no
 *    thread_local object with a destructor (it would pin the library after unload).
 *
 * Versions. ARB_ABI_VERSION_* is this header's version. The event schema
 * (abi/schema/events.fbs, ARB_SCHEMA_VERSION_*) and the plugin's own version move
 * independently of the ABI version. Within one major, every minor is compatible both
 * ways, by these rules (each one a promise that later minors keep):
 *
 *  - Frozen prefix. The first ARB_NEGOTIATION_FROZEN_SIZE bytes of arb_negotiation
 *    (struct_size, host_abi_major, host_abi_minor, host_services, host,
 *    plugin_abi_major, plugin_abi_minor) keep their offsets and meaning in every major,
 *    so that hosts and plugins of different majors can always tell each other so.
 *  - Sizes per version. ARB_<STRUCT>_SIZE_<major>_<minor> is each struct's size as that
 *    release defined it. A reader accepts any struct_size from the first release of its
 *    major up, reads only the fields that lie within it, and treats a field past it as
 *    absent (its documented default). A struct_size below the 1.0 size is refused.
 *  - Compiled against, required. A plugin reports the minor it was compiled against
 *    (plugin_abi_minor) and, separately, the oldest minor it can work with
 *    (plugin_abi_minor_required, added in 1.1); the same for the event schema. A host
 *    accepts a plugin whose required minor is at most its own, and then both use
 *    min(host minor, plugin minor): the host calls only slots and reads only fields of
 *    that minor, the plugin uses only host services and capability bits of that minor.
 *    A host refuses a plugin whose required minor is newer than its own, naming both.
 *  - Hosts that predate a field. A 1.0 host has no plugin_abi_minor_required and reads
 *    plugin_abi_minor as the minor a plugin needs. Towards a host whose struct_size is
 *    below ARB_NEGOTIATION_SIZE_1_1, a plugin therefore reports its required minor in
 *    plugin_abi_minor, writes no field past that struct_size, and declares only the
 *    capability bits of ARB_CAP_ALL_1_0.
 *  - Capability bits are minor-aware: ARB_CAP_ALL_FOR_MINOR(m) is every bit that minor
 *    m of this major defines; a host refuses any other bit.
 *  - Event schema. A plugin built against an older schema minor receives events it does
 *    not know (a union type past its schema) and must skip them; the SDK's views do. A
 *    host never sends a plugin an event kind that it writes itself (see events.fbs) from
 *    a schema minor newer than the plugin was compiled against.
 *
 * docs/abi-changes.md lists what each minor added and what a plugin author must do.
 */
#ifndef ARBITER_PLUGIN_H
#define ARBITER_PLUGIN_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ABI version of this header. Added in 1.0. */
#define ARB_ABI_VERSION_MAJOR 1
#define ARB_ABI_VERSION_MINOR 1

/* Event schema version of abi/schema/events.fbs, carried in every EventBatch.
 * Added in 1.0. Schema 1.1 (InputLost, written by the host) ships with ABI 1.1. Schema
 * 1.2 (where a player looks and aims: Look and AimPoint on PositionUpdate, Order and
 * HitClaim, written by relays) needs no change of the ABI: it ships with ABI 1.1. */
#define ARB_SCHEMA_VERSION_MAJOR 1
#define ARB_SCHEMA_VERSION_MINOR 2

/* FlatBuffers file identifier of an EventBatch. Added in 1.0. */
#define ARB_SCHEMA_FILE_IDENTIFIER "ARB1"

/* Name of the one symbol a plugin exports. Added in 1.0. */
#define ARB_ENTRY_SYMBOL "arbiter_plugin_entry"

/* Largest batch the host passes to on_batch, in bytes. Added in 1.0. */
#define ARB_MAX_BATCH_BYTES (64u * 1024u * 1024u)

/* Each struct's size in bytes as each release defined it (the struct_size a plugin or
 * host of that release writes). Only ever added to; a test pins them against the frozen
 * headers in abi/released/. Added in 1.1 (the 1.0 values describe ABI 1.0). */
#define ARB_SIGNAL_SIZE_1_0 64u
#define ARB_SIGNAL_SINK_SIZE_1_0 24u
#define ARB_HOST_SERVICES_SIZE_1_0 40u
#define ARB_CREATE_ARGS_SIZE_1_0 64u
#define ARB_PLUGIN_API_SIZE_1_0 88u
#define ARB_PLUGIN_API_SIZE_1_1 96u
#define ARB_NEGOTIATION_SIZE_1_0 104u
#define ARB_NEGOTIATION_SIZE_1_1 120u
/* The leading bytes of arb_negotiation that no version, of any major, may change. */
#define ARB_NEGOTIATION_FROZEN_SIZE 40u

/* A host writes this into the negotiation's 1.1 "out" fields before it calls the entry
 * function; a field still holding it afterwards was not written (the plugin predates
 * it) and takes its documented default. Added in 1.1. */
#define ARB_MINOR_ABSENT 0xFFFFFFFFu

/* ----------------------------------------------------------------------------------
 * Status codes. Every fallible call returns one. Added in 1.0.
 * -------------------------------------------------------------------------------- */
typedef int32_t arb_status;

#define ARB_OK 0
/* An argument was NULL, too large or otherwise unusable. */
#define ARB_ERR_INVALID_ARGUMENT 1
/* The plugin's config table is invalid; last_error starts with the key path,
 * then ": ", then what was wrong (e.g. "max_speed: expected a number > 0"). */
#define ARB_ERR_CONFIG 2
/* restore_state refused a state blob (unknown format or version, damaged). */
#define ARB_ERR_STATE 3
/* The slot is not implemented, or this call is not allowed now. */
#define ARB_ERR_UNSUPPORTED 4
/* The plugin failed for a reason of its own (an exception, a broken invariant). */
#define ARB_ERR_INTERNAL 5
/* The plugin could not allocate memory. */
#define ARB_ERR_OUT_OF_MEMORY 6
/* Versions could not be agreed (returned by the entry function). */
#define ARB_ERR_VERSION 7

/* ----------------------------------------------------------------------------------
 * Model classes. A plugin declares its default class; the operator may change it.
 * Added in 1.0.
 * -------------------------------------------------------------------------------- */
/* The game state a player produced is impossible (a teleport, a hit through a wall). */
#define ARB_CLASS_VALIDATION 1
/* The way a player acts is unlike a human's (timing, rate). */
#define ARB_CLASS_BEHAVIOURAL 2
/* The player's decisions are better than a human's. */
#define ARB_CLASS_STATISTICAL 3

/* ----------------------------------------------------------------------------------
 * Capability bits (arb_negotiation.capabilities). For each bit tied to a slot, the
 * host refuses a plugin whose bit and slot disagree (bit set and slot NULL, or slot
 * set and bit clear). Added in 1.0.
 * -------------------------------------------------------------------------------- */
/* save_state and restore_state are implemented: state survives a hot reload. */
#define ARB_CAP_STATE (1ull << 0)
/* configure is implemented: a new config is accepted without a reload. */
#define ARB_CAP_RECONFIGURE (1ull << 1)
/* on_match_end is implemented. */
#define ARB_CAP_MATCH_END (1ull << 2)
/* baseline_begin and baseline_end are implemented: the plugin computes population
 * baselines over a corpus (`arbiter baseline`). */
#define ARB_CAP_BASELINE (1ull << 3)
/* No slot: the plugin keeps no state across matches, so the host may run several
 * instances, each owning a set of matches (all batches of a match go to one
 * instance). */
#define ARB_CAP_SHARD_BY_MATCH (1ull << 4)
/* describe_config is implemented: the plugin describes its config table as a JSON
 * Schema, which the host checks the table against before create. Added in 1.1. */
#define ARB_CAP_DESCRIBE_CONFIG (1ull << 5)
/* Every bit ABI 1.0 defines. */
#define ARB_CAP_ALL_1_0                                                           \
    (ARB_CAP_STATE | ARB_CAP_RECONFIGURE | ARB_CAP_MATCH_END | ARB_CAP_BASELINE | \
     ARB_CAP_SHARD_BY_MATCH)
/* Every bit ABI 1.1 defines. Added in 1.1. */
#define ARB_CAP_ALL_1_1 (ARB_CAP_ALL_1_0 | ARB_CAP_DESCRIBE_CONFIG)
/* Every bit that minor m of major 1 defines: what a host of minor m accepts, and what a
 * plugin may declare towards it. Added in 1.1. */
#define ARB_CAP_ALL_FOR_MINOR(m) ((m) >= 1u ? ARB_CAP_ALL_1_1 : ARB_CAP_ALL_1_0)

/* Log levels of arb_host_services.log. Added in 1.0. */
#define ARB_LOG_TRACE 0
#define ARB_LOG_DEBUG 1
#define ARB_LOG_INFO 2
#define ARB_LOG_WARN 3
#define ARB_LOG_ERROR 4

/* arb_signal.flags. Added in 1.0. */
/* The signal is a trip-wire: an extreme that no human reaches. It reaches
 * FlagForReview on its own if the operator allows this plugin to raise trip-wires. */
#define ARB_SIGNAL_TRIPWIRE (1u << 0)

/* ----------------------------------------------------------------------------------
 * Plain data. Added in 1.0.
 * -------------------------------------------------------------------------------- */

/* A run of bytes. data may be NULL only when size is 0. */
typedef struct arb_bytes {
    const uint8_t* data;
    uint64_t size;
} arb_bytes;

/* A UTF-8 string, not necessarily NUL-terminated. data may be NULL only when size is 0. */
typedef struct arb_string {
    const char* data;
    uint64_t size;
} arb_string;

/* Opaque handle the host gives the plugin; passed back to every host service. The
 * handle from negotiation serves the whole library; the one in arb_create_args serves
 * one instance (its clock follows that instance's batches). */
typedef struct arb_host arb_host;

/* Opaque plugin instance, created by create and released by destroy. */
typedef struct arb_instance arb_instance;

/* One suspicion signal about one player, reported through arb_signal_sink.emit.
 * The host copies everything during emit; the plugin may reuse the memory after. */
typedef struct arb_signal {
    /* sizeof(arb_signal) as the plugin compiled it: at least ARB_SIGNAL_SIZE_1_0. A host
     * takes a larger one from a newer plugin and reads only the fields it knows. */
    uint64_t struct_size;
    /* The player within the match of the batch in hand (or of on_match_end). Not 0. */
    uint32_t player;
    /* ARB_SIGNAL_* bits. */
    uint32_t flags;
    /* How far past the check's limit the player is: 0 is at the limit, 1 is far past.
     * Must be finite and within [0, 1]; otherwise the host drops the signal, counts
     * and logs it. */
    double score;
    /* How sure the check is of its measurement, within [0, 1], same rules as score. */
    double confidence;
    /* Names the check, e.g. "movement.speed". Not empty, at most 128 bytes,
     * characters [a-z0-9_.-]. */
    arb_string code;
    /* A JSON object a reviewer can read: the measured value, the limit, the events
     * that produced it. At most 64 KiB. Empty means "{}". */
    arb_string evidence_json;
} arb_signal;

/* Where a plugin reports signals: handed to on_batch and on_match_end, valid only
 * during that call. */
typedef struct arb_signal_sink {
    /* sizeof(arb_signal_sink) as the host compiled it. */
    uint64_t struct_size;
    /* Host data; pass it back to emit unchanged. */
    void* context;
    /* Reports one signal. Required (always set by the host).
     * Arguments: context from this struct; signal, borrowed for the call.
     * Return value: ARB_OK when taken; ARB_ERR_INVALID_ARGUMENT when the host dropped
     * it as malformed (the host has already counted and logged it; the plugin may go
     * on). Thread: the thread of the call that handed out the sink. */
    arb_status (*emit)(void* context, const arb_signal* signal);
} arb_signal_sink;

/* ----------------------------------------------------------------------------------
 * Host services: what the host offers a plugin. All thread-safe. Added in 1.0.
 * None of them unwinds into the plugin, whatever fails inside the host (since 1.1 the
 * header says so; the 1.0 host could let an allocation failure in log escape): a log
 * line or metric the host cannot record is dropped.
 * -------------------------------------------------------------------------------- */
typedef struct arb_host_services {
    /* sizeof(arb_host_services) as the host compiled it. */
    uint64_t struct_size;

    /* Writes one line to the host's log, tagged with the plugin's name.
     * Required (always set). Added in 1.0.
     * Arguments: host handle; level, one of ARB_LOG_*; message, borrowed.
     * Return value: none. */
    void (*log)(arb_host* host, uint32_t level, arb_string message);

    /* The relay time, in microseconds, of the batch in hand: the relay_time_us of the
     * last event of the batch the instance is processing, or of the last batch it
     * processed. Never the wall clock, so that a recorded match replays as it ran.
     * Required (always set). Added in 1.0.
     * Arguments: an instance's host handle (from arb_create_args).
     * Return value: the time; 0 before the instance's first batch, or for the
     * library-wide handle from negotiation. */
    int64_t (*relay_time_us)(arb_host* host);

    /* Adds value to a counter named by the plugin, e.g. "positions_checked". The host
     * publishes it as "<plugin>.<name>". Required (always set). Added in 1.0.
     * Arguments: host handle; name (at most 64 bytes, [a-z0-9_.]), borrowed; value.
     * Return value: none; an invalid name or a non-finite value is logged and ignored. */
    void (*metric_add)(arb_host* host, arb_string name, double value);

    /* Sets a gauge named by the plugin, e.g. "tracked_players". Same rules as
     * metric_add. Required (always set). Added in 1.0. */
    void (*metric_set)(arb_host* host, arb_string name, double value);
} arb_host_services;

/* ----------------------------------------------------------------------------------
 * Arguments of create and configure. Added in 1.0.
 * -------------------------------------------------------------------------------- */
typedef struct arb_create_args {
    /* sizeof(arb_create_args) as the host compiled it. */
    uint64_t struct_size;
    /* This instance's handle for host services; valid until destroy. */
    arb_host* host;
    /* The host's services (the same table as in negotiation), valid until the library
     * is unloaded. Passed here so that the entry function can stay free of side
     * effects: a plugin needs to keep no global. */
    const arb_host_services* services;
    /* The plugin's own table of server_config.toml ([plugins.NAME.config]) as a
     * FlexBuffers map (flatbuffers/flexbuffers.h): TOML integers become Int, floats
     * Float, booleans Bool, strings String, arrays Vector, tables Map, and dates and
     * times String in RFC 3339. An empty table is an empty map, never size 0. The
     * host has verified the buffer. Borrowed for the call. */
    arb_bytes config;
    /* The population baseline the operator configured for this plugin
     * ([plugins.NAME] baseline = "file"), as written by baseline_end; size 0 when
     * none is configured. Not verified by the host: the plugin must verify it.
     * Borrowed for the call. */
    arb_bytes baseline;
    /* The shard this instance serves, and how many there are; 0 of 1 unless the
     * plugin declared ARB_CAP_SHARD_BY_MATCH. */
    uint32_t shard_index;
    uint32_t shard_count;
} arb_create_args;

/* ----------------------------------------------------------------------------------
 * The plugin's table: what a plugin offers the host. Added in 1.0.
 * -------------------------------------------------------------------------------- */
typedef struct arb_plugin_api {
    /* sizeof(arb_plugin_api) as the plugin compiled it. */
    uint64_t struct_size;

    /* Creates an instance from its config.
     * Required. Added in 1.0.
     * Arguments: args, borrowed (see arb_create_args); out_instance, where to store
     * the instance.
     * Return value: ARB_OK and *out_instance set; or an error status. On error the
     * plugin may still set *out_instance to an instance whose last_error explains the
     * failure; the host reads it and then calls destroy on it. On error with
     * *out_instance left NULL the host reports the status alone.
     * Ownership: the instance belongs to the plugin until destroy.
     * Thread: any; never concurrently with another call on the same instance. */
    arb_status (*create)(const arb_create_args* args, arb_instance** out_instance);

    /* Destroys an instance and frees everything it holds. Joins any thread it started.
     * Required. Added in 1.0.
     * Arguments: instance from create (never NULL).
     * Return value: none. Cannot fail. */
    void (*destroy)(arb_instance* instance);

    /* The detail of the last failed call on this instance.
     * Required. Added in 1.0.
     * Arguments: instance.
     * Return value: a NUL-terminated UTF-8 string owned by the plugin, valid until the
     * next call on this instance; "" when the last call succeeded. Never NULL. */
    const char* (*last_error)(arb_instance* instance);

    /* Processes one batch of events of one match and reports signals.
     * Required. Added in 1.0.
     * Arguments: instance; batch, a verified EventBatch FlatBuffer (file identifier
     * ARB_SCHEMA_FILE_IDENTIFIER), the same bytes for every plugin, borrowed for the
     * call, at most ARB_MAX_BATCH_BYTES; sink, valid for the call only. The host has
     * also checked what the Verifier cannot: every string is UTF-8, every float is
     * finite, events are in relay-time order, and relay times (and MatchStart and
     * MatchEnd's wall clock) lie within +-2^53 us, so that no difference of two of them
     * overflows an int64. Values the client claims (client_time_us, claimed_length_us,
     * claimed_tick) are not bounded: subtract them with care.
     * Return value: ARB_OK, or an error; signals emitted before an error are kept.
     * Thread: see the rules at the top; all batches of one match reach the same
     * instance, in order. */
    arb_status (*on_batch)(arb_instance* instance, arb_bytes batch, const arb_signal_sink* sink);

    /* A match has ended (its MatchEnd event was delivered, or its stream closed):
     * report final signals and free the match's state.
     * Optional (ARB_CAP_MATCH_END). Added in 1.0.
     * Arguments: instance; relay_id and match_id of the match, borrowed; sink, valid
     * for the call only.
     * Return value: ARB_OK or an error. */
    arb_status (*on_match_end)(arb_instance* instance, arb_string relay_id, uint64_t match_id,
                               const arb_signal_sink* sink);

    /* Accepts a new config without a reload. All or nothing: on error the instance
     * keeps its old config and state.
     * Optional (ARB_CAP_RECONFIGURE). Added in 1.0.
     * Arguments: instance; args as for create (host, shard_index and shard_count are
     * those the instance was created with: a new config never moves an instance to
     * another shard), borrowed.
     * Return value: ARB_OK, ARB_ERR_CONFIG (last_error names the key), or an error. */
    arb_status (*configure)(arb_instance* instance, const arb_create_args* args);

    /* Saves everything the instance needs to carry on (windows, budgets, histories)
     * into an opaque, versioned blob, for a hot reload.
     * Optional (ARB_CAP_STATE). Added in 1.0.
     * Arguments: instance; out_state, where to store the blob.
     * Return value: ARB_OK and *out_state set, or an error (the host then starts the
     * new instance fresh and says so).
     * Ownership: the blob belongs to the plugin, valid until the next call on the
     * instance. */
    arb_status (*save_state)(arb_instance* instance, arb_bytes* out_state);

    /* Restores a blob that save_state produced, possibly in another version of the
     * plugin. The plugin verifies the blob before reading it; the host has not.
     * Optional (ARB_CAP_STATE). Added in 1.0.
     * Arguments: instance, freshly created; state, borrowed.
     * Return value: ARB_OK; ARB_ERR_STATE when the plugin refuses the blob (the host
     * then goes on with the fresh instance and says so); or an error. */
    arb_status (*restore_state)(arb_instance* instance, arb_bytes state);

    /* Switches a fresh instance to collecting a population baseline: from now on its
     * on_batch calls gather statistics and emit no signals.
     * Optional (ARB_CAP_BASELINE). Added in 1.0.
     * Arguments: instance. Return value: ARB_OK or an error. */
    arb_status (*baseline_begin)(arb_instance* instance);

    /* Finishes a baseline begun with baseline_begin and returns it; the host writes it
     * to the file the operator configured, and hands it back through
     * arb_create_args.baseline.
     * Optional (ARB_CAP_BASELINE). Added in 1.0.
     * Arguments: instance; out_baseline, where to store the blob.
     * Return value: ARB_OK and *out_baseline set, or an error.
     * Ownership: the blob belongs to the plugin, valid until the next call on the
     * instance. */
    arb_status (*baseline_end)(arb_instance* instance, arb_bytes* out_baseline);

    /* Describes the plugin's config table ([plugins.NAME.config]) as a JSON Schema, so
     * that the host can check an operator's table, and show what it accepts, before any
     * create. The host supports the keywords type, properties, additionalProperties,
     * required, enum, const, minimum, maximum, exclusiveMinimum, exclusiveMaximum,
     * items, minItems, maxItems, minLength and maxLength; title, description, default
     * and $schema are shown, not checked; it warns once about any other keyword and
     * does not check it. The plugin still checks its config in create: a schema only
     * lets the host refuse early and point at the file, line and column.
     * Optional (ARB_CAP_DESCRIBE_CONFIG). Added in 1.1.
     * Arguments: out_schema, where to store the text.
     * Return value: ARB_OK and *out_schema set to a UTF-8 JSON object; or an error, with
     * *out_schema set to a message or left empty (the host then checks no schema, says
     * so, and leaves the checking to create).
     * Ownership: the text belongs to the plugin, valid until the library is unloaded.
     * Thread: any, concurrently with any other call; needs no instance. */
    arb_status (*describe_config)(arb_string* out_schema);
} arb_plugin_api;

/* ----------------------------------------------------------------------------------
 * Negotiation: the argument of the entry function. The host fills the "in" fields,
 * the plugin the "out" fields. Added in 1.0.
 * -------------------------------------------------------------------------------- */
typedef struct arb_negotiation {
    /* sizeof(arb_negotiation) as the host compiled it. The plugin writes no field at
     * or past this size. Frozen (see "Versions" at the top): the fields up to and
     * including plugin_abi_minor never move, in any major. */
    uint64_t struct_size;

    /* in: the host's ABI version. */
    uint32_t host_abi_major;
    uint32_t host_abi_minor;
    /* in: the host's services, valid until the library is unloaded (also handed to
     * every create, so a plugin need not keep this pointer). */
    const arb_host_services* host_services;
    /* in: the library-wide host handle for host services. */
    arb_host* host;

    /* out: the ABI version the plugin was compiled against (ARB_ABI_VERSION_*).
     * Towards a host whose struct_size is below ARB_NEGOTIATION_SIZE_1_1 (a 1.0 host,
     * which reads this as the minor the plugin needs) the plugin writes its required
     * minor into plugin_abi_minor instead. */
    uint32_t plugin_abi_major;
    uint32_t plugin_abi_minor;
    /* out: the event schema version the plugin was compiled against. */
    uint32_t schema_major;
    uint32_t schema_minor;
    /* out: the plugin's table, static, valid until the library is unloaded. */
    const arb_plugin_api* plugin_api;
    /* out: static NUL-terminated strings: the plugin's name ([a-z0-9_-], at most 64
     * bytes), its own version (e.g. "1.2.0"), a contact (URL or address) and a one-line
     * description. */
    const char* name;
    const char* version;
    const char* contact;
    const char* description;
    /* out: ARB_CAP_* bits. */
    uint64_t capabilities;
    /* out: the default model class, one of ARB_CLASS_*. */
    uint32_t model_class;
    /* Padding, keeps the layout explicit; write 0. */
    uint32_t reserved0;

    /* out: the oldest ABI minor of plugin_abi_major the plugin works with; at most
     * plugin_abi_minor. Rebuilding an unchanged plugin against a newer header leaves it
     * unchanged, so the plugin keeps running on the hosts it ran on. The host fills it
     * with ARB_MINOR_ABSENT first; left so, it means "the same as plugin_abi_minor".
     * Added in 1.1. */
    uint32_t plugin_abi_minor_required;
    /* out: the oldest event schema minor of schema_major the plugin works with (it
     * needs an event kind that minor added); at most schema_minor. Same default as
     * above. Added in 1.1. */
    uint32_t schema_minor_required;
    /* in: the event schema version the host sends: every EventBatch it passes to
     * on_batch is of this major and of this minor or older. A 1.0 host sends 1.0.
     * Added in 1.1. */
    uint32_t host_schema_major;
    uint32_t host_schema_minor;
} arb_negotiation;

/* The entry function a plugin exports under the name ARB_ENTRY_SYMBOL.
 * Required. Added in 1.0.
 * What it does: reads the host's version and fills the "out" fields of negotiation,
 * none at or past negotiation->struct_size (see "Versions" at the top for a host older
 * than the plugin). It has no side effects, allocates nothing and keeps no pointer to
 * negotiation; it may be called more than once (e.g. by `arbiter check-plugin`).
 * Arguments: negotiation, borrowed for the call.
 * Return value: ARB_OK; or ARB_ERR_VERSION when the plugin cannot work with the host's
 * version (another major, or an older minor than the plugin requires). The version
 * fields are filled in either case, so that the host can name both versions; a struct
 * too small to hold even the frozen prefix is ARB_ERR_INVALID_ARGUMENT. */
typedef arb_status (*arb_entry_fn)(arb_negotiation* negotiation);

#ifdef __cplusplus
}
#endif

#endif /* ARBITER_PLUGIN_H */
