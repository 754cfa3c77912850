#ifndef MSGPIPE_CMQTTSHIM_H
#define MSGPIPE_CMQTTSHIM_H
/* What Swift cannot express over paho's MQTTAsync: its option structs are filled by C initializer macros.
 * One client handle, one event callback for everything the broker says; the header is opaque. */
#include <stddef.h>
#include <stdint.h>

typedef struct mp_mqtt mp_mqtt;

enum mp_mqtt_event_kind {
    MP_MQTT_CONNECTED = 1,        /* code: the CONNACK's session present flag (1: the broker kept the session) */
    MP_MQTT_CONNECT_FAILED = 2,   /* code: MQTT 5 reason code (>= 0x80), MP_MQTT_TLS_FAILURE, or a negative
                                   * paho code; text */
    MP_MQTT_CONNECTION_LOST = 3,  /* text: the cause, may be NULL */
    MP_MQTT_PUBLISHED = 4,        /* tag; code: the PUBACK's reason code (0 or 0x10 success) */
    MP_MQTT_PUBLISH_FAILED = 5,   /* tag; code: reason code (>= 0x80) or a negative paho code; text */
    MP_MQTT_SUBSCRIBED = 6,       /* code: the granted QoS or a reason code >= 0x80 */
    MP_MQTT_SUBSCRIBE_FAILED = 7, /* code, text */
};

/* MP_MQTT_CONNECT_FAILED's code when the TLS handshake failed (e.g. the server's certificate is not trusted);
 * text: OpenSSL's first error. */
#define MP_MQTT_TLS_FAILURE (-1000)

/* One event. Called on paho's threads, one at a time; strings are only valid during the call. */
typedef void (*mp_mqtt_event_fn)(void *context, int kind, int64_t tag, int code, const char *text);

/* A message arrived on a subscription (QoS 1: its PUBACK goes out after this returns).
 * Return 1 when it was taken (stored), 0 to have it delivered again later. `id` and `peer` are its user
 * properties of those names (NULL when absent). */
typedef int (*mp_mqtt_message_fn)(void *context, const char *topic, const void *payload, int length,
                                  const char *id, const char *peer);

/* A client for `uri` (tcp://HOST:PORT or ssl://HOST:PORT) speaking MQTT 5; NULL on failure (err filled). */
mp_mqtt *mp_mqtt_create(const char *uri, const char *client_id, void *context, mp_mqtt_event_fn on_event,
                        mp_mqtt_message_fn on_message, char *err, size_t err_len);

/* Starts a connect; its outcome arrives as MP_MQTT_CONNECTED or MP_MQTT_CONNECT_FAILED. The will (retained,
 * QoS 1) is set when will_topic is not NULL. clean_start 0 with session_expiry > 0 keeps a persistent session.
 * With use_tls the server's certificate and host name are verified against ca_file (PEM, the only CAs
 * trusted then) or, when it is NULL, the system's CAs in /etc/ssl/certs. Returns 0 or a negative paho code. */
int mp_mqtt_connect(mp_mqtt *client, const char *user, const char *password, const char *will_topic,
                    const char *will_payload, int clean_start, uint32_t session_expiry, int timeout_seconds,
                    int use_tls, const char *ca_file);

/* Starts a publish; its outcome arrives as MP_MQTT_PUBLISHED or MP_MQTT_PUBLISH_FAILED with `tag`.
 * `keys`/`values`: `count` user properties. content_type may be NULL. Returns 0 or a negative paho code. */
int mp_mqtt_publish(mp_mqtt *client, const char *topic, const void *payload, int length, int qos, int retained,
                    const char *const *keys, const char *const *values, int count, const char *content_type,
                    int64_t tag);

/* Subscribes to `topic` at QoS 1; outcome as MP_MQTT_SUBSCRIBED or MP_MQTT_SUBSCRIBE_FAILED. */
int mp_mqtt_subscribe(mp_mqtt *client, const char *topic);

/* True while connected. */
int mp_mqtt_is_connected(mp_mqtt *client);

/* Disconnects (waiting up to timeout_ms for in-flight work) and frees the client. No event follows. */
void mp_mqtt_destroy(mp_mqtt *client, int timeout_ms);

#endif
