#include "CSDBusShim.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-bus.h>

struct msgpipe_vtable {
    sd_bus_vtable *entries; /* START, members..., END */
    size_t count;           /* members added */
    size_t capacity;
    msgpipe_method_handler method;
    msgpipe_property_getter getter;
    msgpipe_release release;
    void *userdata;
};

msgpipe_vtable *msgpipe_vtable_new(size_t capacity) {
    msgpipe_vtable *vtable = calloc(1, sizeof *vtable);
    if (!vtable) return NULL;
    vtable->entries = calloc(capacity + 2, sizeof(sd_bus_vtable));
    if (!vtable->entries) {
        free(vtable);
        return NULL;
    }
    vtable->capacity = capacity;
    const sd_bus_vtable start = SD_BUS_VTABLE_START(0);
    const sd_bus_vtable end = SD_BUS_VTABLE_END;
    vtable->entries[0] = start;
    vtable->entries[1] = end;
    return vtable;
}

static int trampoline_method(sd_bus_message *message, void *userdata, sd_bus_error *error) {
    msgpipe_vtable *vtable = userdata;
    return vtable->method(message, vtable->userdata, error);
}

static int trampoline_property(sd_bus *bus, const char *path, const char *interface, const char *property,
                               sd_bus_message *reply, void *userdata, sd_bus_error *error) {
    (void)bus;
    (void)path;
    (void)interface;
    msgpipe_vtable *vtable = userdata;
    return vtable->getter(property, reply, vtable->userdata, error);
}

static int append(msgpipe_vtable *vtable, sd_bus_vtable entry) {
    if (vtable->count >= vtable->capacity) return -ENOSPC;
    vtable->entries[1 + vtable->count] = entry;
    vtable->count += 1;
    const sd_bus_vtable end = SD_BUS_VTABLE_END;
    vtable->entries[1 + vtable->count] = end;
    return 0;
}

int msgpipe_vtable_add_method(msgpipe_vtable *vtable, const char *member, const char *signature, const char *result) {
    char *m = strdup(member), *s = strdup(signature), *r = strdup(result);
    if (!m || !s || !r) {
        free(m), free(s), free(r);
        return -ENOMEM;
    }
    const sd_bus_vtable entry = SD_BUS_METHOD(m, s, r, trampoline_method, SD_BUS_VTABLE_UNPRIVILEGED);
    int status = append(vtable, entry);
    if (status < 0) free(m), free(s), free(r);
    return status;
}

int msgpipe_vtable_add_property(msgpipe_vtable *vtable, const char *member, const char *signature, int emits_change) {
    char *m = strdup(member), *s = strdup(signature);
    if (!m || !s) {
        free(m), free(s);
        return -ENOMEM;
    }
    const sd_bus_vtable entry = SD_BUS_PROPERTY(
        m, s, trampoline_property, 0, emits_change ? SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE : SD_BUS_VTABLE_PROPERTY_CONST);
    int status = append(vtable, entry);
    if (status < 0) free(m), free(s);
    return status;
}

void msgpipe_vtable_free(msgpipe_vtable *vtable) {
    if (!vtable) return;
    for (size_t index = 1; index <= vtable->count; index++) {
        sd_bus_vtable *entry = &vtable->entries[index];
        if (entry->type == _SD_BUS_VTABLE_METHOD) {
            free((char *)entry->x.method.member);
            free((char *)entry->x.method.signature);
            free((char *)entry->x.method.result);
        } else if (entry->type == _SD_BUS_VTABLE_PROPERTY) {
            free((char *)entry->x.property.member);
            free((char *)entry->x.property.signature);
        }
    }
    free(vtable->entries);
    free(vtable);
}

static void destroyed(void *userdata) {
    msgpipe_vtable *vtable = userdata;
    if (vtable->release) vtable->release(vtable->userdata);
    msgpipe_vtable_free(vtable);
}

int msgpipe_vtable_export(void *bus, void **slot, const char *path, const char *interface, msgpipe_vtable *vtable,
                          msgpipe_method_handler method, msgpipe_property_getter getter, msgpipe_release release,
                          void *userdata) {
    vtable->method = method;
    vtable->getter = getter;
    vtable->userdata = userdata;
    sd_bus_slot *created = NULL;
    int status = sd_bus_add_object_vtable(bus, &created, path, interface, vtable->entries, vtable);
    if (status < 0) return status;
    vtable->release = release;
    sd_bus_slot_set_destroy_callback(created, destroyed);
    *slot = created;
    return 0;
}
