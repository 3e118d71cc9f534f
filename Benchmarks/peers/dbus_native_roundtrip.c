/* The D-Bus benchmark's native peer, in C: the workloads of `doppel-bench dbus`,
 * defined as in dbus_roundtrip.py, between two connections A and B of this
 * process on the bus at ADDRESS, with the same output lines. It is the ceiling
 * for those workloads: one thread, libdbus alone (no main loop, no GLib), each
 * side driven in turn with dbus_connection_send and
 * dbus_connection_read_write + dbus_connection_pop_message.
 *
 * - call: B calls A's org.doppel.Bench.Ping(u) -> u and waits for the reply
 *   (A answers with a method return) before the next call.
 * - signal: A emits PropertiesChanged("org.doppel.Bench", {"Value": ay}, [])
 *   with PAYLOAD bytes stamped with a sequence number (little-endian, first 4
 *   bytes); B, on receiving it, emits its own with the bytes it got; A waits
 *   for B's before the next. A round trip is the two signals.
 * - stream: A emits PropertiesChanged in batches of BATCH, the next batch once
 *   B has received all of the last (in order, by the stamp); figure: signals B
 *   received per second.
 *
 * With --raw, the stream workload only, and no D-Bus library at all: each
 * connection is a unix socket of its own, authenticated by hand (SASL
 * EXTERNAL), with Hello and AddMatch marshalled by hand; A writes a whole batch
 * of pre-marshalled PropertiesChanged signals (only serial and stamp patched)
 * in one write(), and B frames what it reads by the header's lengths and
 * checks each signal's sender and stamp. That is the dbus-daemon's own ceiling
 * for the stream. --raw takes only unix:path= addresses.
 *
 * usage: dbus_native_roundtrip --address ADDRESS [--seconds N | --count N]
 *                              [--payload BYTES] [--warmup N] [--batch N]
 *                              [--only LIST] [--raw]
 *
 * build: cc -O2 -Wall -Wextra -o dbus-native-roundtrip \
 *          Benchmarks/peers/dbus_native_roundtrip.c $(pkg-config --cflags --libs dbus-1)
 */
#define _GNU_SOURCE
#include <dbus/dbus.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define INTERFACE "org.doppel.Bench"
#define PROPERTIES "org.freedesktop.DBus.Properties"
#define PATH "/org/doppel/bench"
#define BUS_NAME "org.freedesktop.DBus"
#define BUS_PATH "/org/freedesktop/DBus"
#define TIMEOUT_MS 10000 /* the longest wait for anything before giving up */

enum { CALL = 1, SIGNAL = 2, STREAM = 4 };

static struct {
    const char *address;
    double seconds;
    long count;
    long payload, warmup, batch;
    int only;
    bool raw;
} options = {NULL, 5.0, 0, 512, 500, 64, CALL | SIGNAL | STREAM, false};

/* ---- helpers */

static void die(const char *format, ...) {
    va_list args;
    va_start(args, format);
    fputs("dbus_native_roundtrip: ", stderr);
    vfprintf(stderr, format, args);
    fputc('\n', stderr);
    va_end(args);
    exit(1);
}

static void *checked(void *pointer) {
    if (!pointer) die("out of memory");
    return pointer;
}

static uint64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Milliseconds left until deadline (ns), at least 1 while any is left, 0 once passed. */
static int remaining_ms(uint64_t deadline) {
    uint64_t now = now_ns();
    if (now >= deadline) return 0;
    return (int)((deadline - now + 999999) / 1000000);
}

static bool spent(uint64_t elapsed_ns, long done) {
    return options.count ? done >= options.count : (double)elapsed_ns >= options.seconds * 1e9;
}

static void stamp(uint8_t *payload, uint32_t sequence) {
    for (int i = 0; i < 4; i++) payload[i] = (uint8_t)(sequence >> (8 * i));
}

static uint32_t sequence_of(const uint8_t *value) {
    return (uint32_t)value[0] | (uint32_t)value[1] << 8 | (uint32_t)value[2] << 16 | (uint32_t)value[3] << 24;
}

static uint8_t *make_payload(void) {
    uint8_t *payload = checked(malloc((size_t)options.payload));
    for (long i = 0; i < options.payload; i++) payload[i] = (uint8_t)i;
    return payload;
}

/* Latencies of one workload's round trips, as RoundTripSamples in doppel-bench. */
typedef struct {
    uint64_t *latencies;
    size_t count, capacity;
    uint64_t elapsed;
} Samples;

static void add_sample(Samples *samples, uint64_t latency) {
    if (samples->count == samples->capacity) {
        samples->capacity = samples->capacity ? samples->capacity * 2 : 65536;
        samples->latencies = checked(realloc(samples->latencies, samples->capacity * sizeof(uint64_t)));
    }
    samples->latencies[samples->count++] = latency;
}

static int compare_u64(const void *x, const void *y) {
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return a < b ? -1 : a > b;
}

/* The nearest-rank percentile p of the sorted latencies, in µs. */
static double percentile(const Samples *samples, double p) {
    if (!samples->count) return NAN;
    double exact = (double)samples->count * p;
    size_t rank = (size_t)exact;
    if ((double)rank < exact) rank++; /* rounded up, without libm */
    if (rank < 1) rank = 1;
    if (rank > samples->count) rank = samples->count;
    return (double)samples->latencies[rank - 1] / 1000;
}

static void report(const char *workload, Samples *samples) {
    qsort(samples->latencies, samples->count, sizeof(uint64_t), compare_u64);
    printf("dbus.%s.roundtrips_per_s %.1f\n", workload,
           samples->elapsed ? (double)samples->count * 1e9 / (double)samples->elapsed : 0.0);
    printf("dbus.%s.p50_us %.1f\n", workload, percentile(samples, 0.50));
    printf("dbus.%s.p99_us %.1f\n", workload, percentile(samples, 0.99));
    printf("dbus.%s.roundtrips %zu\n", workload, samples->count);
    free(samples->latencies);
    fflush(stdout);
}

static void report_stream(long count, uint64_t elapsed) {
    printf("dbus.stream.signals_per_s %.1f\n", elapsed ? (double)count * 1e9 / (double)elapsed : 0.0);
    printf("dbus.stream.signals %ld\n", count);
    fflush(stdout);
}

/* Runs round_trip(sequence) --warmup times, then times each until the budget is spent. */
static void measure(const char *workload, void (*round_trip)(uint32_t sequence)) {
    uint32_t sequence = 0;
    for (long i = 0; i < options.warmup; i++) round_trip(sequence++);
    Samples samples = {0};
    uint64_t start = now_ns(), end = start;
    do {
        uint64_t before = end;
        round_trip(sequence++);
        end = now_ns();
        add_sample(&samples, end - before); /* from the last one's end, as in doppel-bench */
    } while (!spent(end - start, (long)samples.count));
    samples.elapsed = end - start;
    report(workload, &samples);
}

/* ==== libdbus */

static DBusConnection *a, *b;
static const char *a_name, *b_name;
static uint8_t *payload;

static void fail_error(const char *what, DBusError *error) {
    die("%s: %s (%s)", what, error->message ? error->message : "?", error->name ? error->name : "?");
}

static DBusConnection *connect_bus(void) {
    DBusError error;
    dbus_error_init(&error);
    DBusConnection *connection = dbus_connection_open_private(options.address, &error);
    if (!connection) fail_error("cannot connect", &error);
    dbus_connection_set_exit_on_disconnect(connection, FALSE);
    if (!dbus_bus_register(connection, &error)) fail_error("Hello failed", &error);
    return connection;
}

static void send_message(DBusConnection *connection, DBusMessage *message, dbus_uint32_t *serial) {
    if (!dbus_connection_send(connection, message, serial)) die("out of memory sending a message");
    dbus_message_unref(message);
}

/* Answers a method call that is not Ping (none is expected) with an error. */
static void refuse(DBusConnection *connection, DBusMessage *call) {
    if (dbus_message_get_no_reply(call)) return;
    DBusMessage *reply = checked(
        dbus_message_new_error(call, DBUS_ERROR_UNKNOWN_METHOD, "dbus_native_roundtrip answers only Ping"));
    send_message(connection, reply, NULL);
    dbus_connection_flush(connection);
}

/* The next message in connection's queue, reading (blocking) as needed, for at most TIMEOUT_MS. */
static DBusMessage *next_message(DBusConnection *connection, const char *waiting_for) {
    uint64_t deadline = now_ns() + (uint64_t)TIMEOUT_MS * 1000000;
    for (;;) {
        DBusMessage *message = dbus_connection_pop_message(connection);
        if (message) return message;
        int left = remaining_ms(deadline);
        if (!left) die("timed out after %d ms waiting for %s", TIMEOUT_MS, waiting_for);
        if (!dbus_connection_read_write(connection, left)) die("disconnected while waiting for %s", waiting_for);
    }
}

static DBusMessage *properties_changed(const uint8_t *bytes, int size) {
    DBusMessage *message = checked(dbus_message_new_signal(PATH, PROPERTIES, "PropertiesChanged"));
    DBusMessageIter body, changed, entry, variant, array, invalidated;
    const char *interface = INTERFACE, *key = "Value";
    dbus_message_iter_init_append(message, &body);
    if (!dbus_message_iter_append_basic(&body, DBUS_TYPE_STRING, &interface) ||
        !dbus_message_iter_open_container(&body, DBUS_TYPE_ARRAY, "{sv}", &changed) ||
        !dbus_message_iter_open_container(&changed, DBUS_TYPE_DICT_ENTRY, NULL, &entry) ||
        !dbus_message_iter_append_basic(&entry, DBUS_TYPE_STRING, &key) ||
        !dbus_message_iter_open_container(&entry, DBUS_TYPE_VARIANT, "ay", &variant) ||
        !dbus_message_iter_open_container(&variant, DBUS_TYPE_ARRAY, "y", &array) ||
        !dbus_message_iter_append_fixed_array(&array, DBUS_TYPE_BYTE, &bytes, size) ||
        !dbus_message_iter_close_container(&variant, &array) ||
        !dbus_message_iter_close_container(&entry, &variant) ||
        !dbus_message_iter_close_container(&changed, &entry) ||
        !dbus_message_iter_close_container(&body, &changed) ||
        !dbus_message_iter_open_container(&body, DBUS_TYPE_ARRAY, "s", &invalidated) ||
        !dbus_message_iter_close_container(&body, &invalidated))
        die("out of memory marshalling PropertiesChanged");
    return message;
}

/* The Value bytes of a PropertiesChanged from sender at PATH, or NULL if message is not one. */
static const uint8_t *changed_value(DBusMessage *message, const char *sender, int *size) {
    if (!dbus_message_is_signal(message, PROPERTIES, "PropertiesChanged") || !dbus_message_has_path(message, PATH))
        return NULL;
    const char *from = dbus_message_get_sender(message);
    if (!from || strcmp(from, sender) != 0 || !dbus_message_has_signature(message, "sa{sv}as")) return NULL;
    DBusMessageIter body, changed, entry, variant, array;
    dbus_message_iter_init(message, &body);
    dbus_message_iter_next(&body);
    for (dbus_message_iter_recurse(&body, &changed); dbus_message_iter_get_arg_type(&changed) == DBUS_TYPE_DICT_ENTRY;
         dbus_message_iter_next(&changed)) {
        const char *key;
        dbus_message_iter_recurse(&changed, &entry);
        dbus_message_iter_get_basic(&entry, &key);
        if (strcmp(key, "Value") != 0) continue;
        dbus_message_iter_next(&entry);
        dbus_message_iter_recurse(&entry, &variant);
        if (dbus_message_iter_get_arg_type(&variant) != DBUS_TYPE_ARRAY ||
            dbus_message_iter_get_element_type(&variant) != DBUS_TYPE_BYTE)
            return NULL;
        const uint8_t *bytes;
        dbus_message_iter_recurse(&variant, &array);
        dbus_message_iter_get_fixed_array(&array, &bytes, size);
        return bytes;
    }
    return NULL;
}

/* Handles what is not awaited: refuses method calls, drops the rest (NameAcquired and such). */
static void unexpected(DBusConnection *connection, DBusMessage *message) {
    if (dbus_message_get_type(message) == DBUS_MESSAGE_TYPE_METHOD_CALL) refuse(connection, message);
    if (dbus_message_is_signal(message, DBUS_INTERFACE_LOCAL, "Disconnected")) die("disconnected by the bus");
    dbus_message_unref(message);
}

/* The next PropertiesChanged from sender on connection; its Value in *size bytes (the message is in *hold). */
static const uint8_t *next_change(DBusConnection *connection, const char *sender, int *size, DBusMessage **hold) {
    for (;;) {
        DBusMessage *message = next_message(connection, "PropertiesChanged");
        const uint8_t *value = changed_value(message, sender, size);
        if (value) {
            *hold = message;
            return value;
        }
        unexpected(connection, message);
    }
}

static char *match_rule(const char *sender) {
    char *rule;
    if (asprintf(&rule, "type='signal',sender='%s',interface='" PROPERTIES "',member='PropertiesChanged',path='" PATH "'",
                 sender) < 0)
        die("out of memory");
    return rule;
}

static void match(DBusConnection *connection, const char *rule, bool add) {
    DBusError error;
    dbus_error_init(&error);
    if (add)
        dbus_bus_add_match(connection, rule, &error);
    else
        dbus_bus_remove_match(connection, rule, &error);
    if (dbus_error_is_set(&error)) fail_error(add ? "AddMatch failed" : "RemoveMatch failed", &error);
}

static void call_round_trip(uint32_t sequence) {
    DBusMessage *call = checked(dbus_message_new_method_call(a_name, PATH, INTERFACE, "Ping"));
    if (!dbus_message_append_args(call, DBUS_TYPE_UINT32, &sequence, DBUS_TYPE_INVALID)) die("out of memory");
    dbus_uint32_t serial;
    send_message(b, call, &serial);
    dbus_connection_flush(b);
    /* A answers the call. */
    for (bool answered = false; !answered;) {
        DBusMessage *message = next_message(a, "the Ping call");
        if (dbus_message_is_method_call(message, INTERFACE, "Ping")) {
            dbus_uint32_t number;
            DBusError error;
            dbus_error_init(&error);
            if (!dbus_message_get_args(message, &error, DBUS_TYPE_UINT32, &number, DBUS_TYPE_INVALID)) {
                DBusMessage *reply = checked(dbus_message_new_error(message, DBUS_ERROR_INVALID_ARGS, error.message));
                send_message(a, reply, NULL);
                dbus_error_free(&error);
            } else {
                DBusMessage *reply = checked(dbus_message_new_method_return(message));
                if (!dbus_message_append_args(reply, DBUS_TYPE_UINT32, &number, DBUS_TYPE_INVALID)) die("out of memory");
                send_message(a, reply, NULL);
            }
            dbus_connection_flush(a);
            dbus_message_unref(message);
            answered = true;
        } else {
            unexpected(a, message);
        }
    }
    /* B takes the reply. */
    for (;;) {
        DBusMessage *message = next_message(b, "the Ping reply");
        if (dbus_message_get_reply_serial(message) != serial) {
            unexpected(b, message);
            continue;
        }
        dbus_uint32_t number = 0;
        if (dbus_message_get_type(message) != DBUS_MESSAGE_TYPE_METHOD_RETURN ||
            !dbus_message_get_args(message, NULL, DBUS_TYPE_UINT32, &number, DBUS_TYPE_INVALID) || number != sequence)
            die("Ping(%u) returned %s %u", sequence,
                dbus_message_get_error_name(message) ? dbus_message_get_error_name(message) : "", number);
        dbus_message_unref(message);
        return;
    }
}

static void signal_round_trip(uint32_t sequence) {
    stamp(payload, sequence);
    send_message(a, properties_changed(payload, (int)options.payload), NULL);
    dbus_connection_flush(a);
    /* B echoes it. */
    int size;
    DBusMessage *held;
    const uint8_t *value = next_change(b, a_name, &size, &held);
    send_message(b, properties_changed(value, size), NULL);
    dbus_connection_flush(b);
    dbus_message_unref(held);
    /* A awaits the echo. */
    value = next_change(a, b_name, &size, &held);
    if (size != options.payload || sequence_of(value) != sequence) die("echo %u is not what was sent", sequence);
    dbus_message_unref(held);
}

static void calls(void) { measure("call", call_round_trip); }

static void signals(void) {
    char *rule_b = match_rule(a_name), *rule_a = match_rule(b_name);
    match(b, rule_b, true);
    match(a, rule_a, true);
    measure("signal", signal_round_trip);
    match(b, rule_b, false);
    match(a, rule_a, false);
    free(rule_a);
    free(rule_b);
}

static long stream_sent, stream_received;

static void stream_batch(void) {
    for (long i = 0; i < options.batch; i++) {
        stamp(payload, (uint32_t)stream_sent++);
        send_message(a, properties_changed(payload, (int)options.payload), NULL);
    }
    dbus_connection_flush(a);
    while (stream_received < stream_sent) {
        int size;
        DBusMessage *held;
        const uint8_t *value = next_change(b, a_name, &size, &held);
        if (size < 4 || sequence_of(value) != (uint32_t)stream_received)
            die("signal %ld arrived out of order", stream_received);
        stream_received++;
        dbus_message_unref(held);
    }
}

static void stream(void) {
    char *rule = match_rule(a_name);
    match(b, rule, true);
    stream_sent = stream_received = 0;
    for (long i = 0; i < (options.warmup + options.batch - 1) / options.batch; i++) stream_batch();
    long warm = stream_sent;
    uint64_t start = now_ns(), elapsed;
    do {
        stream_batch();
        elapsed = now_ns() - start;
    } while (!spent(elapsed, stream_sent - warm));
    report_stream(stream_sent - warm, elapsed);
    match(b, rule, false);
    free(rule);
}

/* Ends a run's header line: how much each workload runs (a count of `unit`, or seconds), then the warmup. */
static void print_budget(const char *unit, const char *scope) {
    if (options.count)
        printf("%ld %s", options.count, unit);
    else
        printf("%g s", options.seconds);
    printf("%s, warmup %ld\n", scope, options.warmup);
    fflush(stdout);
}

static void run_libdbus(void) {
    a = connect_bus();
    b = connect_bus();
    a_name = dbus_bus_get_unique_name(a);
    b_name = dbus_bus_get_unique_name(b);
    payload = make_payload();
    int major, minor, micro;
    dbus_get_version(&major, &minor, &micro);
    printf("# dbus_native_roundtrip (C, libdbus %d.%d.%d, one thread): payload %ld B, ", major, minor, micro,
           options.payload);
    print_budget("round trips", " per workload");
    if (options.only & CALL) calls();
    if (options.only & SIGNAL) signals();
    if (options.only & STREAM) stream();
    dbus_connection_close(a);
    dbus_connection_close(b);
    dbus_connection_unref(a);
    dbus_connection_unref(b);
    free(payload);
}

/* ==== raw: the wire protocol by hand, no D-Bus library */

typedef struct {
    uint8_t *data;
    size_t length, capacity;
} Buffer;

static void reserve(Buffer *buffer, size_t more) {
    if (buffer->length + more <= buffer->capacity) return;
    size_t capacity = buffer->capacity ? buffer->capacity : 256;
    while (capacity < buffer->length + more) capacity *= 2;
    buffer->data = checked(realloc(buffer->data, capacity));
    buffer->capacity = capacity;
}

static void put_bytes(Buffer *buffer, const void *bytes, size_t count) {
    reserve(buffer, count);
    memcpy(buffer->data + buffer->length, bytes, count);
    buffer->length += count;
}

static void put_u8(Buffer *buffer, uint8_t value) { put_bytes(buffer, &value, 1); }

/* Pads to a multiple of alignment from the buffer's start (a message's or a body's, both 8-aligned). */
static void align(Buffer *buffer, size_t alignment) {
    while (buffer->length % alignment) put_u8(buffer, 0);
}

static void set_u32(uint8_t *at, uint32_t value) {
    for (int i = 0; i < 4; i++) at[i] = (uint8_t)(value >> (8 * i)); /* little-endian: the messages say 'l' */
}

static uint32_t get_u32(const uint8_t *at) { return sequence_of(at); }

static size_t put_u32(Buffer *buffer, uint32_t value) {
    align(buffer, 4);
    size_t at = buffer->length;
    reserve(buffer, 4);
    set_u32(buffer->data + at, value);
    buffer->length += 4;
    return at;
}

static void put_string(Buffer *buffer, const char *string) { /* s, o */
    size_t length = strlen(string);
    put_u32(buffer, (uint32_t)length);
    put_bytes(buffer, string, length + 1);
}

static void put_signature(Buffer *buffer, const char *signature) { /* g */
    size_t length = strlen(signature);
    put_u8(buffer, (uint8_t)length);
    put_bytes(buffer, signature, length + 1);
}

enum { FIELD_PATH = 1, FIELD_INTERFACE, FIELD_MEMBER, FIELD_ERROR_NAME, FIELD_REPLY_SERIAL, FIELD_DESTINATION,
       FIELD_SENDER, FIELD_SIGNATURE };
enum { TYPE_METHOD_CALL = 1, TYPE_METHOD_RETURN, TYPE_ERROR, TYPE_SIGNAL };

/* One header field, a struct (yv): aligned to 8, its code, the variant's signature and value. */
static void put_field(Buffer *header, uint8_t code, const char *type, const char *value) {
    if (!value) return;
    align(header, 8);
    put_u8(header, code);
    put_signature(header, type);
    if (type[0] == 'g')
        put_signature(header, value);
    else
        put_string(header, value);
}

/* A whole message: the fixed header, the header fields, padding to 8, the body. */
static void marshal(Buffer *message, uint8_t type, uint32_t serial, const char *path, const char *interface,
                    const char *member, const char *destination, const char *signature, const Buffer *body) {
    message->length = 0;
    uint8_t fixed[4] = {'l', type, 0, 1};
    put_bytes(message, fixed, 4);
    put_u32(message, body ? (uint32_t)body->length : 0);
    put_u32(message, serial);
    size_t fields_length = put_u32(message, 0);
    put_field(message, FIELD_PATH, "o", path);
    put_field(message, FIELD_INTERFACE, "s", interface);
    put_field(message, FIELD_MEMBER, "s", member);
    put_field(message, FIELD_DESTINATION, "s", destination);
    if (body && body->length) put_field(message, FIELD_SIGNATURE, "g", signature);
    set_u32(message->data + fields_length, (uint32_t)(message->length - 16));
    align(message, 8);
    if (body) put_bytes(message, body->data, body->length);
}

/* A message read, pointing into the connection's input buffer. */
typedef struct {
    uint8_t type;
    uint32_t serial, reply_serial;
    const char *path, *interface, *member, *sender, *signature, *error_name;
    const uint8_t *body;
    uint32_t body_length;
} Message;

typedef struct {
    int fd;
    const char *role;
    Buffer in;
    size_t start; /* of the unparsed bytes in in */
    uint32_t serial;
    char *name;
} Raw;

static size_t align_up(size_t value, size_t alignment) { return (value + alignment - 1) / alignment * alignment; }

/* Parses a string-like header value (s, o, g) at *at, advancing past it; NULL if malformed. */
static const char *field_string(const uint8_t *data, size_t *at, size_t end, char type) {
    size_t length, start;
    if (type == 'g') {
        if (*at + 1 > end) return NULL;
        length = data[*at];
        start = *at + 1;
    } else {
        *at = align_up(*at, 4);
        if (*at + 4 > end) return NULL;
        length = get_u32(data + *at);
        start = *at + 4;
    }
    if (start + length + 1 > end || data[start + length] != 0) return NULL;
    *at = start + length + 1;
    return (const char *)data + start;
}

/* Parses the complete message of total bytes at data. */
static void parse(const uint8_t *data, size_t fields_end, size_t header_end, Message *message, const char *role) {
    memset(message, 0, sizeof *message);
    message->type = data[1];
    message->body_length = get_u32(data + 4);
    message->serial = get_u32(data + 8);
    message->body = data + header_end;
    for (size_t at = 16; at < fields_end;) {
        at = align_up(at, 8);
        if (at + 3 > fields_end) die("%s: malformed header field", role);
        uint8_t code = data[at], signature_length = data[at + 1];
        if (signature_length != 1 || data[at + 3] != 0) die("%s: header field %u has an unexpected type", role, code);
        char type = (char)data[at + 2];
        at += 4;
        if (type == 'u') {
            at = align_up(at, 4);
            if (at + 4 > fields_end) die("%s: malformed header field", role);
            if (code == FIELD_REPLY_SERIAL) message->reply_serial = get_u32(data + at);
            at += 4;
            continue;
        }
        if (type != 's' && type != 'o' && type != 'g') die("%s: header field %u has type %c", role, code, type);
        const char *value = field_string(data, &at, fields_end, type);
        if (!value) die("%s: malformed header field %u", role, code);
        switch (code) {
        case FIELD_PATH: message->path = value; break;
        case FIELD_INTERFACE: message->interface = value; break;
        case FIELD_MEMBER: message->member = value; break;
        case FIELD_ERROR_NAME: message->error_name = value; break;
        case FIELD_SENDER: message->sender = value; break;
        case FIELD_SIGNATURE: message->signature = value; break;
        default: break;
        }
    }
}

/* Frames the next whole message in raw's buffer, if there is one. */
static bool take_message(Raw *raw, Message *message) {
    size_t available = raw->in.length - raw->start;
    const uint8_t *data = raw->in.data + raw->start;
    if (available < 16) return false;
    if (data[0] != 'l') die("%s: a message in byte order '%c' (only 'l' is handled)", raw->role, data[0]);
    if (data[3] != 1) die("%s: a message of protocol version %u", raw->role, data[3]);
    size_t fields_end = 16 + (size_t)get_u32(data + 12), header_end = align_up(fields_end, 8);
    size_t total = header_end + get_u32(data + 4);
    if (total > (size_t)1 << 27) die("%s: a message of %zu bytes", raw->role, total);
    if (available < total) return false;
    parse(data, fields_end, header_end, message, raw->role);
    raw->start += total;
    return true;
}

/* Reads what the socket has (waiting up to deadline for something). */
static void fill(Raw *raw, uint64_t deadline, const char *waiting_for) {
    if (raw->start == raw->in.length) {
        raw->in.length = raw->start = 0;
    } else if (raw->start > raw->in.capacity / 2) {
        memmove(raw->in.data, raw->in.data + raw->start, raw->in.length - raw->start);
        raw->in.length -= raw->start;
        raw->start = 0;
    }
    reserve(&raw->in, 256 * 1024);
    for (;;) {
        ssize_t got = read(raw->fd, raw->in.data + raw->in.length, raw->in.capacity - raw->in.length);
        if (got > 0) {
            raw->in.length += (size_t)got;
            return;
        }
        if (got == 0) die("%s: the bus closed the connection while waiting for %s", raw->role, waiting_for);
        if (errno == EINTR) continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK) die("%s: read: %s", raw->role, strerror(errno));
        struct pollfd poll_fd = {raw->fd, POLLIN, 0};
        int left = remaining_ms(deadline);
        if (!left) die("%s: timed out after %d ms waiting for %s", raw->role, TIMEOUT_MS, waiting_for);
        if (poll(&poll_fd, 1, left) < 0 && errno != EINTR) die("poll: %s", strerror(errno));
    }
}

/* Writes all of bytes (the socket is nonblocking), for at most TIMEOUT_MS. */
static void write_all(Raw *raw, const uint8_t *bytes, size_t count) {
    uint64_t deadline = now_ns() + (uint64_t)TIMEOUT_MS * 1000000;
    while (count) {
        ssize_t put = write(raw->fd, bytes, count);
        if (put > 0) {
            bytes += put;
            count -= (size_t)put;
            continue;
        }
        if (put < 0 && errno == EINTR) continue;
        if (put < 0 && errno != EAGAIN && errno != EWOULDBLOCK) die("%s: write: %s", raw->role, strerror(errno));
        struct pollfd poll_fd = {raw->fd, POLLOUT, 0};
        int left = remaining_ms(deadline);
        if (!left) die("%s: timed out after %d ms writing", raw->role, TIMEOUT_MS);
        if (poll(&poll_fd, 1, left) < 0 && errno != EINTR) die("poll: %s", strerror(errno));
    }
}

/* Reads a SASL line (up to CR LF) one byte at a time: nothing may follow it yet, but be exact. */
static void read_line(Raw *raw, char *line, size_t size) {
    uint64_t deadline = now_ns() + (uint64_t)TIMEOUT_MS * 1000000;
    size_t length = 0;
    for (;;) {
        char c;
        ssize_t got = read(raw->fd, &c, 1);
        if (got == 1) {
            if (length + 1 >= size) die("%s: an overlong line from the bus during authentication", raw->role);
            line[length++] = c;
            if (length >= 2 && line[length - 2] == '\r' && c == '\n') {
                line[length - 2] = 0;
                return;
            }
            continue;
        }
        if (got == 0) die("%s: the bus closed the connection during authentication", raw->role);
        if (errno == EINTR) continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK) die("%s: read: %s", raw->role, strerror(errno));
        struct pollfd poll_fd = {raw->fd, POLLIN, 0};
        int left = remaining_ms(deadline);
        if (!left) die("%s: timed out during authentication", raw->role);
        poll(&poll_fd, 1, left);
    }
}

/* Sends a method call to the bus and returns its reply (skipping anything else). */
static Message bus_call(Raw *raw, const char *member, const char *argument) {
    Buffer body = {0}, message = {0};
    if (argument) put_string(&body, argument);
    uint32_t serial = ++raw->serial;
    marshal(&message, TYPE_METHOD_CALL, serial, BUS_PATH, BUS_NAME, member, BUS_NAME, "s", &body);
    write_all(raw, message.data, message.length);
    free(body.data);
    free(message.data);
    uint64_t deadline = now_ns() + (uint64_t)TIMEOUT_MS * 1000000;
    for (;;) {
        Message reply;
        while (!take_message(raw, &reply)) fill(raw, deadline, member);
        if (reply.reply_serial != serial) continue; /* NameAcquired and such */
        if (reply.type == TYPE_ERROR) die("%s: %s failed: %s", raw->role, member, reply.error_name);
        if (reply.type != TYPE_METHOD_RETURN) die("%s: %s answered by message type %u", raw->role, member, reply.type);
        return reply;
    }
}

static Raw *raw_connect(const char *role) {
    const char *prefix = "unix:path=";
    if (strncmp(options.address, prefix, strlen(prefix)) != 0)
        die("--raw takes only unix:path= addresses, not %s", options.address);
    const char *path = options.address + strlen(prefix);
    size_t path_length = strcspn(path, ",;"); /* stop before ,guid=… */
    struct sockaddr_un address = {.sun_family = AF_UNIX};
    if (path_length >= sizeof address.sun_path) die("the socket path is too long");
    memcpy(address.sun_path, path, path_length);

    Raw *raw = checked(calloc(1, sizeof *raw));
    raw->role = role;
    raw->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (raw->fd < 0) die("socket: %s", strerror(errno));
    if (connect(raw->fd, (struct sockaddr *)&address, sizeof address) < 0)
        die("cannot connect to %.*s: %s", (int)path_length, path, strerror(errno));
    if (fcntl(raw->fd, F_SETFL, fcntl(raw->fd, F_GETFL) | O_NONBLOCK) < 0) die("fcntl: %s", strerror(errno));

    /* SASL: a NUL byte (credentials ride along on it), AUTH EXTERNAL <our uid in hex of its decimal digits>,
     * OK <guid>, BEGIN; then the binary protocol. */
    char uid[32], auth[128], line[512];
    snprintf(uid, sizeof uid, "%u", (unsigned)getuid());
    int length = snprintf(auth, sizeof auth, "%cAUTH EXTERNAL ", 0);
    for (const char *digit = uid; *digit; digit++) length += snprintf(auth + length, sizeof auth - length, "%02x", *digit);
    length += snprintf(auth + length, sizeof auth - length, "\r\n");
    write_all(raw, (const uint8_t *)auth, (size_t)length);
    read_line(raw, line, sizeof line);
    if (strncmp(line, "OK ", 3) != 0) die("%s: authentication refused: %s", role, line);
    write_all(raw, (const uint8_t *)"BEGIN\r\n", 7);

    Message reply = bus_call(raw, "Hello", NULL);
    if (!reply.signature || strcmp(reply.signature, "s") != 0 || reply.body_length < 5)
        die("%s: Hello returned no name", role);
    uint32_t name_length = get_u32(reply.body);
    if (name_length + 5 > reply.body_length) die("%s: Hello returned a malformed name", role);
    raw->name = checked(strndup((const char *)reply.body + 4, name_length));
    return raw;
}

static void run_raw(void) {
    if (options.only != STREAM) die("--raw runs only the stream workload (--only stream)");
    Raw *ra = raw_connect("A"), *rb = raw_connect("B");
    char *rule = match_rule(ra->name);
    bus_call(rb, "AddMatch", rule);
    free(rule);
    printf("# dbus_native_roundtrip --raw (C, no D-Bus library: hand-marshalled, a batch per write()): payload %ld B, ",
           options.payload);
    print_budget("signals", "");

    /* One PropertiesChanged("org.doppel.Bench", {"Value": <ay>}, []) as a template: the body is
     * s at 0 (4 + 16 + 1 bytes), a{sv} length at 24, its first entry at 32 (aligned to 8): s "Value" at 32,
     * the variant's signature "ay" at 42, the ay's length at 48 and its bytes at 52, then an empty as. */
    uint8_t *value = make_payload();
    Buffer body = {0}, template = {0};
    put_string(&body, INTERFACE);
    size_t dictionary = put_u32(&body, 0);
    align(&body, 8);
    size_t entries = body.length;
    align(&body, 8); /* the dict entry */
    put_string(&body, "Value");
    put_signature(&body, "ay");
    put_u32(&body, (uint32_t)options.payload);
    size_t value_at = body.length;
    put_bytes(&body, value, (size_t)options.payload);
    set_u32(body.data + dictionary, (uint32_t)(body.length - entries));
    put_u32(&body, 0); /* as: empty */
    marshal(&template, TYPE_SIGNAL, 0, PATH, PROPERTIES, "PropertiesChanged", NULL, "sa{sv}as", &body);
    size_t size = template.length, stamp_at = size - body.length + value_at;

    size_t batch = (size_t)options.batch;
    uint8_t *out = checked(malloc(size * batch));
    for (size_t i = 0; i < batch; i++) memcpy(out + i * size, template.data, size);

    long sent = 0, received = 0;
    uint32_t expected_body = (uint32_t)body.length;
    long warm_batches = (options.warmup + options.batch - 1) / options.batch, warm = 0;
    uint64_t start = 0, elapsed = 0;
    for (long round = 0;; round++) {
        if (round == warm_batches) {
            warm = sent;
            start = now_ns();
        }
        for (size_t i = 0; i < batch; i++) {
            set_u32(out + i * size + 8, ++ra->serial);
            stamp(out + i * size + stamp_at, (uint32_t)sent++);
        }
        write_all(ra, out, size * batch);
        uint64_t deadline = now_ns() + (uint64_t)TIMEOUT_MS * 1000000;
        while (received < sent) {
            Message message;
            while (!take_message(rb, &message)) fill(rb, deadline, "PropertiesChanged");
            if (message.type != TYPE_SIGNAL || !message.sender || strcmp(message.sender, ra->name) != 0) continue;
            const uint8_t *b0 = message.body;
            if (!message.member || strcmp(message.member, "PropertiesChanged") != 0 || !message.path ||
                strcmp(message.path, PATH) != 0 || !message.interface || strcmp(message.interface, PROPERTIES) != 0 ||
                !message.signature || strcmp(message.signature, "sa{sv}as") != 0 ||
                message.body_length != expected_body || get_u32(b0) != 16 ||
                memcmp(b0 + 4, INTERFACE, 17) != 0 || get_u32(b0 + 32) != 5 || memcmp(b0 + 36, "Value\0\2ay", 10) != 0 ||
                get_u32(b0 + 48) != (uint32_t)options.payload)
                die("B: signal %ld from A is not the PropertiesChanged sent", received);
            if (sequence_of(b0 + 52) != (uint32_t)received) die("signal %ld arrived out of order", received);
            received++;
        }
        if (round >= warm_batches) {
            elapsed = now_ns() - start;
            if (spent(elapsed, sent - warm)) break;
        }
    }
    report_stream(sent - warm, elapsed);
    close(ra->fd);
    close(rb->fd);
    free(out);
    free(value);
    free(body.data);
    free(template.data);
}

/* ==== command line */

static void usage(FILE *to) {
    fputs("usage: dbus_native_roundtrip --address ADDRESS [--seconds N | --count N]\n"
          "                             [--payload BYTES] [--warmup N] [--batch N] [--only LIST] [--raw]\n",
          to);
}

static double number(const char *option, const char *text, bool whole) {
    char *end;
    errno = 0;
    double value = strtod(text ? text : "", &end);
    if (!text || !*text || *end || errno || (whole && value != (double)(long)value) || value < 0)
        die("%s takes a %snumber, not %s", option, whole ? "whole " : "", text ? text : "nothing");
    return value;
}

int main(int argc, char **argv) {
    bool seconds = false, count = false, only = false;
    for (int i = 1; i < argc; i++) {
        const char *option = argv[i], *value = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(option, "-h") || !strcmp(option, "--help")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(option, "--raw")) {
            options.raw = true;
            continue;
        } else if (!strcmp(option, "--address")) {
            if (!value) die("--address takes an address");
            options.address = value;
        } else if (!strcmp(option, "--seconds")) {
            options.seconds = number(option, value, false);
            seconds = true;
        } else if (!strcmp(option, "--count")) {
            options.count = (long)number(option, value, true);
            count = true;
        } else if (!strcmp(option, "--payload")) {
            options.payload = (long)number(option, value, true);
        } else if (!strcmp(option, "--warmup")) {
            options.warmup = (long)number(option, value, true);
        } else if (!strcmp(option, "--batch")) {
            options.batch = (long)number(option, value, true);
        } else if (!strcmp(option, "--only")) {
            if (!value) die("--only takes some of call, signal, stream");
            char *list = checked(strdup(value));
            options.only = 0;
            for (char *save, *word = strtok_r(list, ",", &save); word; word = strtok_r(NULL, ",", &save)) {
                if (!strcmp(word, "call")) options.only |= CALL;
                else if (!strcmp(word, "signal")) options.only |= SIGNAL;
                else if (!strcmp(word, "stream")) options.only |= STREAM;
                else die("--only takes some of call, signal, stream, not %s", word);
            }
            free(list);
            only = true;
        } else {
            usage(stderr);
            die("unknown argument %s", option);
        }
        i++;
    }
    if (!options.address) {
        usage(stderr);
        die("--address is required");
    }
    if (seconds && count) die("--seconds and --count exclude each other");
    if (options.payload < 4 || options.payload > 1 << 24 || options.batch < 1 || options.seconds <= 0 || !options.only)
        die("--payload needs at least 4, --batch and --seconds more than 0, --only a workload");
    if (options.raw && !only) options.only = STREAM;
    signal(SIGPIPE, SIG_IGN);
    if (options.raw)
        run_raw();
    else
        run_libdbus();
    return 0;
}
