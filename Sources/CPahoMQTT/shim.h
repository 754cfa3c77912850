#ifndef MSGPIPE_CPAHOMQTT_SHIM_H
#define MSGPIPE_CPAHOMQTT_SHIM_H
/* paho.mqtt.c's asynchronous MQTT 5 client with TLS (EPL-2.0/EDL-1.0, Debian's libpaho-mqtt-dev).
 * Only MsgPipeMQTT links this; Debian ships no pkg-config file for it. */
#include <MQTTAsync.h>
#endif
