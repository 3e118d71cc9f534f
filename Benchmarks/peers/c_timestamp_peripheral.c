/* The benchmark's native peer: the same timestamp peripheral as Doppel's and
 * python_timestamp_peripheral.py, in C on libdbus alone (one thread, one
 * poll loop, no GLib) and doing nothing else, for the ceiling of
 * notifications/s through bluetoothd. Notifies CLOCK_MONOTONIC microseconds
 * as decimal text every INTERVAL_US while subscribed: on the socket
 * bluetoothd acquires (AcquireNotify), or as PropertiesChanged on Value should
 * bluetoothd fall back to StartNotify. Prints "serving on ADAPTER" once the
 * application is registered and "sent N" at the end (after SECONDS, or on
 * SIGINT or SIGTERM).
 *
 * usage: c_timestamp_peripheral ADAPTER INTERVAL_US SECONDS
 *
 * build: gcc -O2 -Wall -Wextra -Werror $(pkg-config --cflags dbus-1) \
 *          c_timestamp_peripheral.c $(pkg-config --libs dbus-1) -o c-timestamp-peripheral
 */
#define _GNU_SOURCE /* ppoll */
#include <dbus/dbus.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define SERVICE_UUID "0000b0b0-0000-1000-8000-00805f9b34fb"
#define STAMP_UUID "0000b0b1-0000-1000-8000-00805f9b34fb"
#define ROOT_PATH "/org/doppel/cbench"
#define SERVICE_PATH ROOT_PATH "/service0"
#define CHAR_PATH SERVICE_PATH "/char0"
#define ADVERTISEMENT_PATH ROOT_PATH "/advertisement"
#define PROPERTIES "org.freedesktop.DBus.Properties"
#define OBJECT_MANAGER "org.freedesktop.DBus.ObjectManager"
#define CHARACTERISTIC "org.bluez.GattCharacteristic1"
#define ADVERTISEMENT "org.bluez.LEAdvertisement1"
#define PROGRAM "c-timestamp-peripheral"
/* Signals (the StartNotify fallback) wait once this much is queued for the bus. */
#define BUS_BACKLOG_LIMIT (256 * 1024)

/* ---- properties of the exported objects ---- */

/* A property's value: a basic type, or DBUS_TYPE_ARRAY for "as" holding the
 * one string pointed to. */
struct property {
  const char *name;
  int type;
  const void *value;
};

static const char *const service_uuid = SERVICE_UUID;
static const char *const stamp_uuid = STAMP_UUID;
static const char *const service_path = SERVICE_PATH;
static const char *const notify_flag = "notify";
static const char *const advertisement_type = "peripheral";
static const char *const local_name = "CBench";
static const dbus_bool_t yes = TRUE;
static const dbus_bool_t no = FALSE;

static const struct property service_properties[] = {
  {"UUID", DBUS_TYPE_STRING, &service_uuid},
  {"Primary", DBUS_TYPE_BOOLEAN, &yes},
  {NULL, 0, NULL},
};
/* bluetoothd calls AcquireNotify when NotifyAcquired merely exists. */
static const struct property characteristic_properties[] = {
  {"UUID", DBUS_TYPE_STRING, &stamp_uuid},
  {"Service", DBUS_TYPE_OBJECT_PATH, &service_path},
  {"Flags", DBUS_TYPE_ARRAY, &notify_flag},
  {"NotifyAcquired", DBUS_TYPE_BOOLEAN, &no},
  {NULL, 0, NULL},
};
static const struct property advertisement_properties[] = {
  {"Type", DBUS_TYPE_STRING, &advertisement_type},
  {"ServiceUUIDs", DBUS_TYPE_ARRAY, &service_uuid},
  {"LocalName", DBUS_TYPE_STRING, &local_name},
  {NULL, 0, NULL},
};

struct object {
  const char *path;
  const char *interface; /* NULL for the root */
  const struct property *properties;
};

enum { ROOT, SERVICE, STAMP, ADVERTISING, OBJECT_COUNT };
static const struct object objects[OBJECT_COUNT] = {
  [ROOT] = {ROOT_PATH, NULL, NULL},
  [SERVICE] = {SERVICE_PATH, "org.bluez.GattService1", service_properties},
  [STAMP] = {CHAR_PATH, CHARACTERISTIC, characteristic_properties},
  [ADVERTISING] = {ADVERTISEMENT_PATH, ADVERTISEMENT, advertisement_properties},
};

/* ---- state ---- */

static volatile sig_atomic_t stopping;
static DBusConnection *bus;
static const char *adapter;
static uint64_t interval_us;
/* How notifications go out now: not at all, on an acquired socket, or as
 * PropertiesChanged signals (StartNotify). */
static enum { OFF, ON_SOCKET, AS_SIGNALS } mode = OFF;
static int notify_fd = -1;
static bool socket_full; /* the last write met EAGAIN: wait for POLLOUT */
static uint64_t next_due;  /* CLOCK_MONOTONIC µs of the next notification */
static unsigned long long sent;
static bool failed; /* a registration failed */

static void need(dbus_bool_t ok) {
  if (!ok) {
    fputs(PROGRAM ": out of memory\n", stderr);
    exit(1);
  }
}

static uint64_t monotonic_us(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (uint64_t)now.tv_sec * 1000000u + (uint64_t)now.tv_nsec / 1000u;
}

static void on_signal(int number) {
  (void)number;
  stopping = 1;
}

/* ---- building replies ---- */

static void append_value(DBusMessageIter *iter, const struct property *property) {
  DBusMessageIter variant, array;
  if (property->type == DBUS_TYPE_ARRAY) {
    need(dbus_message_iter_open_container(iter, DBUS_TYPE_VARIANT, "as", &variant));
    need(dbus_message_iter_open_container(&variant, DBUS_TYPE_ARRAY, "s", &array));
    need(dbus_message_iter_append_basic(&array, DBUS_TYPE_STRING, property->value));
    need(dbus_message_iter_close_container(&variant, &array));
  } else {
    char signature[2] = {(char)property->type, '\0'};
    need(dbus_message_iter_open_container(iter, DBUS_TYPE_VARIANT, signature, &variant));
    need(dbus_message_iter_append_basic(&variant, property->type, property->value));
  }
  need(dbus_message_iter_close_container(iter, &variant));
}

/* Appends the object's properties as a{sv}. */
static void append_properties(DBusMessageIter *iter, const struct object *object) {
  DBusMessageIter dict, entry;
  need(dbus_message_iter_open_container(iter, DBUS_TYPE_ARRAY, "{sv}", &dict));
  for (const struct property *p = object->properties; p->name; p++) {
    need(dbus_message_iter_open_container(&dict, DBUS_TYPE_DICT_ENTRY, NULL, &entry));
    need(dbus_message_iter_append_basic(&entry, DBUS_TYPE_STRING, &p->name));
    append_value(&entry, p);
    need(dbus_message_iter_close_container(&dict, &entry));
  }
  need(dbus_message_iter_close_container(iter, &dict));
}

static void send_reply(DBusMessage *call, DBusMessage *reply) {
  need(reply != NULL);
  if (!dbus_message_get_no_reply(call)) need(dbus_connection_send(bus, reply, NULL));
  dbus_message_unref(reply);
}

static void reply_error(DBusMessage *call, const char *name, const char *message) {
  send_reply(call, dbus_message_new_error(call, name, message));
}

/* GetManagedObjects() -> a{oa{sa{sv}}}: the service and its characteristic. */
static void get_managed_objects(DBusMessage *call) {
  DBusMessage *reply = dbus_message_new_method_return(call);
  DBusMessageIter iter, objects_dict, object_entry, interfaces, interface_entry;
  need(reply != NULL);
  dbus_message_iter_init_append(reply, &iter);
  need(dbus_message_iter_open_container(&iter, DBUS_TYPE_ARRAY, "{oa{sa{sv}}}", &objects_dict));
  for (int i = SERVICE; i <= STAMP; i++) {
    const struct object *object = &objects[i];
    need(dbus_message_iter_open_container(&objects_dict, DBUS_TYPE_DICT_ENTRY, NULL, &object_entry));
    need(dbus_message_iter_append_basic(&object_entry, DBUS_TYPE_OBJECT_PATH, &object->path));
    need(dbus_message_iter_open_container(&object_entry, DBUS_TYPE_ARRAY, "{sa{sv}}", &interfaces));
    need(dbus_message_iter_open_container(&interfaces, DBUS_TYPE_DICT_ENTRY, NULL, &interface_entry));
    need(dbus_message_iter_append_basic(&interface_entry, DBUS_TYPE_STRING, &object->interface));
    append_properties(&interface_entry, object);
    need(dbus_message_iter_close_container(&interfaces, &interface_entry));
    need(dbus_message_iter_close_container(&object_entry, &interfaces));
    need(dbus_message_iter_close_container(&objects_dict, &object_entry));
  }
  need(dbus_message_iter_close_container(&iter, &objects_dict));
  send_reply(call, reply);
}

/* Properties.GetAll(s) -> a{sv} and Properties.Get(ss) -> v. */
static void get_properties(DBusMessage *call, const struct object *object, bool all) {
  const char *interface = NULL, *name = NULL;
  /* The signature was checked: "s" for GetAll, "ss" for Get. */
  if (all)
    need(dbus_message_get_args(call, NULL, DBUS_TYPE_STRING, &interface, DBUS_TYPE_INVALID));
  else
    need(dbus_message_get_args(call, NULL, DBUS_TYPE_STRING, &interface, DBUS_TYPE_STRING, &name, DBUS_TYPE_INVALID));
  if (strcmp(interface, object->interface) != 0) {
    reply_error(call, DBUS_ERROR_UNKNOWN_INTERFACE, "no such interface on this object");
    return;
  }
  DBusMessage *reply = dbus_message_new_method_return(call);
  DBusMessageIter iter;
  need(reply != NULL);
  dbus_message_iter_init_append(reply, &iter);
  if (all) {
    append_properties(&iter, object);
  } else {
    const struct property *p = object->properties;
    while (p->name && strcmp(p->name, name) != 0) p++;
    if (!p->name) {
      dbus_message_unref(reply);
      reply_error(call, DBUS_ERROR_UNKNOWN_PROPERTY, "no such property");
      return;
    }
    append_value(&iter, p);
  }
  send_reply(call, reply);
}

/* ---- notifying ---- */

static void stop_notifying(void) {
  if (notify_fd >= 0) close(notify_fd);
  notify_fd = -1;
  socket_full = false;
  mode = OFF;
}

static void start_notifying(int how) {
  stop_notifying();
  mode = how;
  next_due = monotonic_us() + interval_us;
}

/* AcquireNotify(a{sv} options) -> (h fd, q mtu): bluetoothd gets one end of
 * a fresh socket pair and sends what is written to the other as
 * notifications. It closes its end when the central unsubscribes. */
static void acquire_notify(DBusMessage *call) {
  uint16_t mtu = 23;
  DBusMessageIter args, options, entry, value;
  dbus_message_iter_init(call, &args);
  dbus_message_iter_recurse(&args, &options);
  for (; dbus_message_iter_get_arg_type(&options) == DBUS_TYPE_DICT_ENTRY; dbus_message_iter_next(&options)) {
    const char *key;
    dbus_message_iter_recurse(&options, &entry);
    dbus_message_iter_get_basic(&entry, &key);
    dbus_message_iter_next(&entry);
    dbus_message_iter_recurse(&entry, &value);
    if (strcmp(key, "mtu") == 0 && dbus_message_iter_get_arg_type(&value) == DBUS_TYPE_UINT16)
      dbus_message_iter_get_basic(&value, &mtu);
  }
  /* Any error but org.bluez.Error.Failed makes bluetoothd try StartNotify. */
  if (!dbus_connection_can_send_type(bus, DBUS_TYPE_UNIX_FD)) {
    reply_error(call, "org.bluez.Error.NotSupported", "this bus connection cannot pass file descriptors");
    return;
  }
  int ends[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, ends) < 0) {
    reply_error(call, "org.bluez.Error.NotSupported", strerror(errno));
    return;
  }
  DBusMessage *reply = dbus_message_new_method_return(call);
  need(reply != NULL);
  need(dbus_message_append_args(reply, DBUS_TYPE_UNIX_FD, &ends[1], DBUS_TYPE_UINT16, &mtu, DBUS_TYPE_INVALID));
  send_reply(call, reply);
  close(ends[1]);
  /* The latest request wins: an earlier socket is one bluetoothd dropped. */
  start_notifying(ON_SOCKET);
  notify_fd = ends[0];
}

/* The StartNotify fallback: Value as PropertiesChanged(s, a{sv}, as). */
static void emit_value(const char *text, int length) {
  DBusMessage *signal = dbus_message_new_signal(CHAR_PATH, PROPERTIES, "PropertiesChanged");
  DBusMessageIter iter, changed, entry, variant, bytes, invalidated;
  const char *interface = CHARACTERISTIC, *name = "Value";
  need(signal != NULL);
  dbus_message_iter_init_append(signal, &iter);
  need(dbus_message_iter_append_basic(&iter, DBUS_TYPE_STRING, &interface));
  need(dbus_message_iter_open_container(&iter, DBUS_TYPE_ARRAY, "{sv}", &changed));
  need(dbus_message_iter_open_container(&changed, DBUS_TYPE_DICT_ENTRY, NULL, &entry));
  need(dbus_message_iter_append_basic(&entry, DBUS_TYPE_STRING, &name));
  need(dbus_message_iter_open_container(&entry, DBUS_TYPE_VARIANT, "ay", &variant));
  need(dbus_message_iter_open_container(&variant, DBUS_TYPE_ARRAY, "y", &bytes));
  need(dbus_message_iter_append_fixed_array(&bytes, DBUS_TYPE_BYTE, &text, length));
  need(dbus_message_iter_close_container(&variant, &bytes));
  need(dbus_message_iter_close_container(&entry, &variant));
  need(dbus_message_iter_close_container(&changed, &entry));
  need(dbus_message_iter_close_container(&iter, &changed));
  need(dbus_message_iter_open_container(&iter, DBUS_TYPE_ARRAY, "s", &invalidated));
  need(dbus_message_iter_close_container(&iter, &invalidated));
  need(dbus_connection_send(bus, signal, NULL));
  dbus_message_unref(signal);
}

static bool bus_backlogged(void) { return dbus_connection_get_outgoing_size(bus) > BUS_BACKLOG_LIMIT; }

/* Whether notifications wait for the clock (not for room to write them). */
static bool on_schedule(void) {
  return (mode == ON_SOCKET && !socket_full) || (mode == AS_SIGNALS && !bus_backlogged());
}

/* Sends every notification that is due, catching up when behind. */
static void notify_due(void) {
  uint64_t now = monotonic_us();
  while (on_schedule() && next_due <= now) {
    char text[24];
    int length = snprintf(text, sizeof text, "%" PRIu64, monotonic_us());
    if (mode == ON_SOCKET) {
      if (send(notify_fd, text, (size_t)length, MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
          socket_full = true;
        } else {
          if (errno != EPIPE && errno != ECONNRESET) fprintf(stderr, PROGRAM ": notify: %s\n", strerror(errno));
          stop_notifying();
        }
        return;
      }
    } else {
      emit_value(text, length);
    }
    sent++;
    next_due += interval_us;
  }
}

/* ---- the exported objects ---- */

static bool is_call(DBusMessage *message, const char *interface, const char *member, const char *signature) {
  const char *its_interface = dbus_message_get_interface(message);
  return (its_interface == NULL || strcmp(its_interface, interface) == 0) &&
         strcmp(dbus_message_get_member(message), member) == 0 && dbus_message_has_signature(message, signature);
}

static DBusHandlerResult on_method_call(DBusConnection *connection, DBusMessage *call, void *data) {
  const struct object *object = data;
  (void)connection;
  if (dbus_message_get_type(call) != DBUS_MESSAGE_TYPE_METHOD_CALL) return DBUS_HANDLER_RESULT_NOT_YET_HANDLED;
  if (object == &objects[ROOT] && is_call(call, OBJECT_MANAGER, "GetManagedObjects", "")) {
    get_managed_objects(call);
  } else if (object->properties && is_call(call, PROPERTIES, "GetAll", "s")) {
    get_properties(call, object, true);
  } else if (object->properties && is_call(call, PROPERTIES, "Get", "ss")) {
    get_properties(call, object, false);
  } else if (object == &objects[STAMP] && is_call(call, CHARACTERISTIC, "AcquireNotify", "a{sv}")) {
    acquire_notify(call);
  } else if (object == &objects[STAMP] && is_call(call, CHARACTERISTIC, "StartNotify", "")) {
    if (mode != AS_SIGNALS) start_notifying(AS_SIGNALS);
    send_reply(call, dbus_message_new_method_return(call));
  } else if (object == &objects[STAMP] && is_call(call, CHARACTERISTIC, "StopNotify", "")) {
    stop_notifying();
    send_reply(call, dbus_message_new_method_return(call));
  } else if (object == &objects[ADVERTISING] && is_call(call, ADVERTISEMENT, "Release", "")) {
    send_reply(call, dbus_message_new_method_return(call));
  } else {
    const char *interface = dbus_message_get_interface(call);
    send_reply(call, dbus_message_new_error_printf(call, DBUS_ERROR_UNKNOWN_METHOD, "no method %s%s%s(%s) at %s",
                                                   interface ? interface : "", interface ? "." : "",
                                                   dbus_message_get_member(call), dbus_message_get_signature(call),
                                                   object->path));
  }
  return DBUS_HANDLER_RESULT_HANDLED;
}

/* ---- registering with bluetoothd ---- */

static void on_registered(DBusPendingCall *pending, void *data) {
  const char *what = data;
  DBusMessage *reply = dbus_pending_call_steal_reply(pending);
  DBusError error;
  dbus_error_init(&error);
  if (reply == NULL || dbus_set_error_from_message(&error, reply)) {
    if (!failed) /* once: without bluetoothd both calls fail alike */
      fprintf(stderr, "registration failed: %s: %s\n", error.name ? error.name : "no reply",
              error.message ? error.message : what);
    dbus_error_free(&error);
    failed = true;
  } else if (strcmp(what, "application") == 0) {
    printf("serving on %s\n", adapter);
    fflush(stdout);
  }
  if (reply) dbus_message_unref(reply);
}

/* METHOD(OBJECT, {}) on the adapter; the reply comes to on_registered. */
static void register_object(const char *adapter_path, const char *interface, const char *method,
                            const char *object_path, const char *what) {
  DBusMessage *call = dbus_message_new_method_call("org.bluez", adapter_path, interface, method);
  DBusMessageIter iter, options;
  DBusPendingCall *pending = NULL;
  need(call != NULL);
  dbus_message_iter_init_append(call, &iter);
  need(dbus_message_iter_append_basic(&iter, DBUS_TYPE_OBJECT_PATH, &object_path));
  need(dbus_message_iter_open_container(&iter, DBUS_TYPE_ARRAY, "{sv}", &options));
  need(dbus_message_iter_close_container(&iter, &options));
  /* No timeout: this loop runs none of libdbus's timeouts; SECONDS bounds the wait. */
  need(dbus_connection_send_with_reply(bus, call, &pending, DBUS_TIMEOUT_INFINITE));
  dbus_message_unref(call);
  if (pending == NULL) {
    fprintf(stderr, "registration failed: %s: disconnected from the bus\n", what);
    exit(1);
  }
  need(dbus_pending_call_set_notify(pending, on_registered, (void *)what, NULL));
  dbus_pending_call_unref(pending);
}

/* ---- main ---- */

static void usage(const char *problem) {
  if (problem) fprintf(stderr, PROGRAM ": %s\n", problem);
  fputs("usage: c_timestamp_peripheral ADAPTER INTERVAL_US SECONDS   (e.g. hci0 250 70)\n", stderr);
  exit(2);
}

int main(int argc, char **argv) {
  if (argc != 4) usage(NULL);
  adapter = argv[1];
  char adapter_path[256];
  if (snprintf(adapter_path, sizeof adapter_path, "/org/bluez/%s", adapter) >= (int)sizeof adapter_path ||
      !*adapter || strchr(adapter, '/') || !dbus_validate_path(adapter_path, NULL))
    usage("ADAPTER must be an adapter name such as hci0");
  char *end;
  errno = 0;
  unsigned long long interval = strtoull(argv[2], &end, 10);
  if (argv[2][0] < '0' || argv[2][0] > '9' || *end || errno || interval == 0 || interval > 3600000000ull)
    usage("INTERVAL_US must be a whole number of microseconds, 1 to 3600000000");
  interval_us = interval;
  errno = 0;
  double seconds = strtod(argv[3], &end);
  if (end == argv[3] || *end || errno || !isfinite(seconds) || seconds <= 0 || seconds > 1e9)
    usage("SECONDS must be a number of seconds above 0");

  /* SIGINT and SIGTERM get through only while ppoll waits: no wake-up is lost. */
  sigset_t blocked, waiting;
  sigemptyset(&blocked);
  sigaddset(&blocked, SIGINT);
  sigaddset(&blocked, SIGTERM);
  sigprocmask(SIG_BLOCK, &blocked, &waiting);
  sigdelset(&waiting, SIGINT);
  sigdelset(&waiting, SIGTERM);
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, NULL);
  sigaction(SIGTERM, &action, NULL);

  DBusError error;
  dbus_error_init(&error);
  bus = dbus_bus_get_private(DBUS_BUS_SYSTEM, &error);
  if (bus == NULL) {
    fprintf(stderr, PROGRAM ": cannot connect to the system bus: %s: %s\n", error.name, error.message);
    dbus_error_free(&error);
    return 1;
  }
  dbus_connection_set_exit_on_disconnect(bus, FALSE);
  const DBusObjectPathVTable vtable = {.message_function = on_method_call};
  for (int i = 0; i < OBJECT_COUNT; i++)
    need(dbus_connection_register_object_path(bus, objects[i].path, &vtable, (void *)&objects[i]));
  register_object(adapter_path, "org.bluez.GattManager1", "RegisterApplication", ROOT_PATH, "application");
  register_object(adapter_path, "org.bluez.LEAdvertisingManager1", "RegisterAdvertisement", ADVERTISEMENT_PATH,
                  "advertisement");

  int bus_fd = -1;
  if (!dbus_connection_get_unix_fd(bus, &bus_fd)) {
    fputs(PROGRAM ": the bus connection has no file descriptor\n", stderr);
    return 1;
  }
  uint64_t deadline = monotonic_us() + (uint64_t)(seconds * 1e6);
  int status = 0;
  for (;;) {
    while (dbus_connection_dispatch(bus) == DBUS_DISPATCH_DATA_REMAINS) {}
    if (stopping || failed) break;
    if (!dbus_connection_get_is_connected(bus)) {
      fputs(PROGRAM ": disconnected from the bus\n", stderr);
      status = 1;
      break;
    }
    notify_due();
    uint64_t now = monotonic_us();
    if (now >= deadline) break;

    struct pollfd fds[2] = {{.fd = bus_fd, .events = POLLIN}, {.fd = -1}};
    if (dbus_connection_has_messages_to_send(bus)) fds[0].events |= POLLOUT;
    if (mode == ON_SOCKET) fds[1] = (struct pollfd){.fd = notify_fd, .events = POLLIN | (socket_full ? POLLOUT : 0)};
    uint64_t wake = deadline;
    if (on_schedule() && next_due < wake) wake = next_due;
    uint64_t wait = wake > now ? wake - now : 0;
    struct timespec timeout = {.tv_sec = (time_t)(wait / 1000000u), .tv_nsec = (long)(wait % 1000000u) * 1000};
    if (ppoll(fds, 2, &timeout, &waiting) < 0) {
      if (errno == EINTR) continue;
      fprintf(stderr, PROGRAM ": poll: %s\n", strerror(errno));
      status = 1;
      break;
    }

    if (fds[1].fd >= 0 && fds[1].revents) {
      char discard[512];
      ssize_t got = 0;
      if (fds[1].revents & POLLIN) got = recv(notify_fd, discard, sizeof discard, MSG_DONTWAIT);
      if ((fds[1].revents & (POLLHUP | POLLERR | POLLNVAL)) || (fds[1].revents & POLLIN && got == 0) ||
          (got < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
        stop_notifying(); /* bluetoothd closed it: the central unsubscribed */
      else if (fds[1].revents & POLLOUT)
        socket_full = false;
    }
    if (fds[0].revents || dbus_connection_has_messages_to_send(bus)) dbus_connection_read_write(bus, 0);
  }

  stop_notifying();
  printf("sent %llu\n", sent);
  fflush(stdout);
  dbus_connection_close(bus);
  dbus_connection_unref(bus);
  dbus_shutdown();
  return failed ? 1 : status;
}
