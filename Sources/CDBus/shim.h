// libdbus-1 for Swift. The DBUS_TYPE_* macros are casts of characters and do
// not import; Swift-side constants live in the DBus target (DBusTypeCode).
#ifndef DOPPEL_CDBUS_SHIM_H
#define DOPPEL_CDBUS_SHIM_H
#include <dbus/dbus.h>
#endif
