#include "CMQTTShim.h"
#include <MQTTAsync.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct mp_mqtt {
    MQTTAsync handle;
    void *context;
    mp_mqtt_event_fn on_event;
    mp_mqtt_message_fn on_message;
    /* OpenSSL's first error of the current connect attempt (empty: none); written on paho's thread. */
    char tls_error[256];
};

struct mp_request {
    mp_mqtt *client;
    int64_t tag;
};

static const char *failure_text(MQTTAsync_failureData5 *response) {
    if (response == NULL) return NULL;
    if (response->message != NULL) return response->message;
    if (response->reasonCode != 0) return MQTTReasonCode_toString(response->reasonCode);
    return MQTTAsync_strerror(response->code);
}

static int failure_code(MQTTAsync_failureData5 *response) {
    if (response == NULL) return -1;
    return response->reasonCode != 0 ? (int)response->reasonCode : response->code;
}

static void connection_lost(void *context, char *cause) {
    mp_mqtt *client = context;
    client->on_event(client->context, MP_MQTT_CONNECTION_LOST, 0, 0, cause);
    if (cause != NULL) MQTTAsync_free(cause);
}

static int message_arrived(void *context, char *topic, int topic_len, MQTTAsync_message *message) {
    mp_mqtt *client = context;
    char *name = topic;
    char *copy = NULL;
    if (topic_len > 0) {
        copy = malloc((size_t)topic_len + 1);
        if (copy == NULL) return 0;
        memcpy(copy, topic, (size_t)topic_len);
        copy[topic_len] = 0;
        name = copy;
    }
    const char *id = NULL, *peer = NULL;
    char *owned[2] = {NULL, NULL};
    for (int i = 0; i < message->properties.count; i++) {
        MQTTProperty *property = &message->properties.array[i];
        if (property->identifier != MQTTPROPERTY_CODE_USER_PROPERTY) continue;
        const char *key = property->value.data.data;
        int key_len = property->value.data.len;
        int slot = (key_len == 2 && memcmp(key, "id", 2) == 0) ? 0 : (key_len == 4 && memcmp(key, "peer", 4) == 0) ? 1 : -1;
        if (slot < 0 || owned[slot] != NULL) continue;
        owned[slot] = malloc((size_t)property->value.value.len + 1);
        if (owned[slot] == NULL) continue;
        memcpy(owned[slot], property->value.value.data, (size_t)property->value.value.len);
        owned[slot][property->value.value.len] = 0;
    }
    id = owned[0];
    peer = owned[1];
    int taken = client->on_message(client->context, name, message->payload, message->payloadlen, id, peer);
    free(owned[0]);
    free(owned[1]);
    free(copy);
    if (taken) {
        MQTTAsync_freeMessage(&message);
        MQTTAsync_free(topic);
    }
    return taken;
}

mp_mqtt *mp_mqtt_create(const char *uri, const char *client_id, void *context, mp_mqtt_event_fn on_event,
                        mp_mqtt_message_fn on_message, char *err, size_t err_len) {
    mp_mqtt *client = calloc(1, sizeof *client);
    if (client == NULL) {
        snprintf(err, err_len, "out of memory");
        return NULL;
    }
    client->context = context;
    client->on_event = on_event;
    client->on_message = on_message;
    MQTTAsync_createOptions options = MQTTAsync_createOptions_initializer5;
    int rc = MQTTAsync_createWithOptions(&client->handle, uri, client_id, MQTTCLIENT_PERSISTENCE_NONE, NULL, &options);
    if (rc != MQTTASYNC_SUCCESS) {
        snprintf(err, err_len, "%s", MQTTAsync_strerror(rc));
        free(client);
        return NULL;
    }
    rc = MQTTAsync_setCallbacks(client->handle, client, connection_lost, message_arrived, NULL);
    if (rc != MQTTASYNC_SUCCESS) {
        snprintf(err, err_len, "%s", MQTTAsync_strerror(rc));
        MQTTAsync_destroy(&client->handle);
        free(client);
        return NULL;
    }
    return client;
}

static void connect_succeeded(void *context, MQTTAsync_successData5 *response) {
    mp_mqtt *client = context;
    int session_present = response != NULL ? response->alt.connect.sessionPresent : 0;
    client->on_event(client->context, MP_MQTT_CONNECTED, 0, session_present, NULL);
}

static void connect_failed(void *context, MQTTAsync_failureData5 *response) {
    mp_mqtt *client = context;
    if (client->tls_error[0] != 0) {
        client->on_event(client->context, MP_MQTT_CONNECT_FAILED, 0, MP_MQTT_TLS_FAILURE, client->tls_error);
        return;
    }
    client->on_event(client->context, MP_MQTT_CONNECT_FAILED, 0, failure_code(response), failure_text(response));
}

/* OpenSSL's error lines during a handshake: keeps the first, without its trailing newline. */
static int tls_error(const char *text, size_t length, void *context) {
    mp_mqtt *client = context;
    if (client->tls_error[0] == 0) {
        size_t n = length < sizeof client->tls_error - 1 ? length : sizeof client->tls_error - 1;
        while (n > 0 && (text[n - 1] == '\n' || text[n - 1] == '\r')) n--;
        memcpy(client->tls_error, text, n);
        client->tls_error[n] = 0;
    }
    return 0;
}

int mp_mqtt_connect(mp_mqtt *client, const char *user, const char *password, const char *will_topic,
                    const char *will_payload, int clean_start, uint32_t session_expiry, int timeout_seconds,
                    int use_tls, const char *ca_file) {
    MQTTAsync_connectOptions options = MQTTAsync_connectOptions_initializer5;
    MQTTAsync_willOptions will = MQTTAsync_willOptions_initializer;
    MQTTAsync_SSLOptions ssl = MQTTAsync_SSLOptions_initializer;
    MQTTProperties properties = MQTTProperties_initializer;
    options.keepAliveInterval = 20;
    options.cleanstart = clean_start;
    options.connectTimeout = timeout_seconds;
    options.username = user;
    options.password = password;
    options.onSuccess5 = connect_succeeded;
    options.onFailure5 = connect_failed;
    options.context = client;
    if (session_expiry > 0) {
        MQTTProperty expiry = {.identifier = MQTTPROPERTY_CODE_SESSION_EXPIRY_INTERVAL};
        expiry.value.integer4 = session_expiry;
        MQTTProperties_add(&properties, &expiry);
        options.connectProperties = &properties;
    }
    if (will_topic != NULL) {
        will.topicName = will_topic;
        will.message = will_payload;
        will.retained = 1;
        will.qos = 1;
        options.will = &will;
    }
    if (use_tls) {
        ssl.verify = 1;
        ssl.enableServerCertAuth = 1;
        if (ca_file != NULL) {
            ssl.trustStore = ca_file;
            ssl.disableDefaultTrustStore = 1;
        } else {
            ssl.CApath = "/etc/ssl/certs";
        }
        ssl.ssl_error_cb = tls_error;
        ssl.ssl_error_context = client;
        options.ssl = &ssl;
    }
    client->tls_error[0] = 0;
    int rc = MQTTAsync_connect(client->handle, &options);
    MQTTProperties_free(&properties);
    return rc;
}

static void publish_succeeded(void *context, MQTTAsync_successData5 *response) {
    struct mp_request *request = context;
    request->client->on_event(request->client->context, MP_MQTT_PUBLISHED, request->tag,
                              response != NULL ? (int)response->reasonCode : 0, NULL);
    free(request);
}

static void publish_failed(void *context, MQTTAsync_failureData5 *response) {
    struct mp_request *request = context;
    request->client->on_event(request->client->context, MP_MQTT_PUBLISH_FAILED, request->tag,
                              failure_code(response), failure_text(response));
    free(request);
}

int mp_mqtt_publish(mp_mqtt *client, const char *topic, const void *payload, int length, int qos, int retained,
                    const char *const *keys, const char *const *values, int count, const char *content_type,
                    int64_t tag) {
    struct mp_request *request = malloc(sizeof *request);
    if (request == NULL) return MQTTASYNC_FAILURE;
    request->client = client;
    request->tag = tag;
    MQTTAsync_message message = MQTTAsync_message_initializer;
    message.payload = (void *)payload;
    message.payloadlen = length;
    message.qos = qos;
    message.retained = retained;
    for (int i = 0; i < count; i++) {
        MQTTProperty property = {.identifier = MQTTPROPERTY_CODE_USER_PROPERTY};
        property.value.data.data = (char *)keys[i];
        property.value.data.len = (int)strlen(keys[i]);
        property.value.value.data = (char *)values[i];
        property.value.value.len = (int)strlen(values[i]);
        MQTTProperties_add(&message.properties, &property);
    }
    if (content_type != NULL) {
        MQTTProperty property = {.identifier = MQTTPROPERTY_CODE_CONTENT_TYPE};
        property.value.data.data = (char *)content_type;
        property.value.data.len = (int)strlen(content_type);
        MQTTProperties_add(&message.properties, &property);
    }
    MQTTAsync_responseOptions options = MQTTAsync_responseOptions_initializer;
    options.onSuccess5 = publish_succeeded;
    options.onFailure5 = publish_failed;
    options.context = request;
    int rc = MQTTAsync_sendMessage(client->handle, topic, &message, &options);
    MQTTProperties_free(&message.properties);
    if (rc != MQTTASYNC_SUCCESS) free(request);
    return rc;
}

static void subscribe_succeeded(void *context, MQTTAsync_successData5 *response) {
    mp_mqtt *client = context;
    client->on_event(client->context, MP_MQTT_SUBSCRIBED, 0, response != NULL ? (int)response->reasonCode : 0, NULL);
}

static void subscribe_failed(void *context, MQTTAsync_failureData5 *response) {
    mp_mqtt *client = context;
    client->on_event(client->context, MP_MQTT_SUBSCRIBE_FAILED, 0, failure_code(response), failure_text(response));
}

int mp_mqtt_subscribe(mp_mqtt *client, const char *topic) {
    MQTTAsync_responseOptions options = MQTTAsync_responseOptions_initializer;
    options.onSuccess5 = subscribe_succeeded;
    options.onFailure5 = subscribe_failed;
    options.context = client;
    return MQTTAsync_subscribe(client->handle, topic, 1, &options);
}

int mp_mqtt_is_connected(mp_mqtt *client) { return MQTTAsync_isConnected(client->handle); }

void mp_mqtt_destroy(mp_mqtt *client, int timeout_ms) {
    if (MQTTAsync_isConnected(client->handle)) {
        MQTTAsync_disconnectOptions options = MQTTAsync_disconnectOptions_initializer5;
        options.timeout = timeout_ms;
        MQTTAsync_disconnect(client->handle, &options);
        for (int waited = 0; waited < timeout_ms && MQTTAsync_isConnected(client->handle); waited += 10) {
            struct timespec pause = {0, 10 * 1000 * 1000};
            nanosleep(&pause, NULL);
        }
    }
    MQTTAsync_destroy(&client->handle);
    free(client);
}
