#ifndef MSGPIPE_CSDBUSSHIM_H
#define MSGPIPE_CSDBUSSHIM_H
/* What Swift cannot express over sd-bus: an sd_bus_vtable is built with C macros (SD_BUS_METHOD,
 * SD_BUS_PROPERTY, ...). This builds one at run time for any list of methods and read-only properties and
 * dispatches every call to ONE method handler and ONE property getter, which look the member up themselves.
 * The header is opaque (void pointers) so it does not compete with CSystemd for sd-bus's types. */
#include <stddef.h>

typedef struct msgpipe_vtable msgpipe_vtable;

/* message: sd_bus_message *, error: sd_bus_error *; returns what an sd_bus_message_handler_t returns. */
typedef int (*msgpipe_method_handler)(void *message, void *userdata, void *error);
/* reply: sd_bus_message * with the property's variant open; returns what an sd_bus_property_get_t returns. */
typedef int (*msgpipe_property_getter)(const char *property, void *reply, void *userdata, void *error);
/* Called once when the object is unregistered (its slot freed), to release userdata. */
typedef void (*msgpipe_release)(void *userdata);

/* An empty vtable with room for `capacity` members; NULL when out of memory. */
msgpipe_vtable *msgpipe_vtable_new(size_t capacity);
/* Appends a method or a read-only property (names and signatures are copied); -ENOMEM or -ENOSPC on failure. */
int msgpipe_vtable_add_method(msgpipe_vtable *vtable, const char *member, const char *signature, const char *result);
int msgpipe_vtable_add_property(msgpipe_vtable *vtable, const char *member, const char *signature, int emits_change);
/* Frees a vtable that was never exported. */
void msgpipe_vtable_free(msgpipe_vtable *vtable);

/* sd_bus_add_object_vtable for `vtable` at `path`: on success the slot (sd_bus_slot *) owns the vtable and calls
 * `release(userdata)` when it is freed; on failure (negative errno) the caller still owns both. */
int msgpipe_vtable_export(void *bus, void **slot, const char *path, const char *interface, msgpipe_vtable *vtable,
                          msgpipe_method_handler method, msgpipe_property_getter getter, msgpipe_release release,
                          void *userdata);
#endif
