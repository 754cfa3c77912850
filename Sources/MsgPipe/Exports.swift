// `import MsgPipe` is all a program that moves messages needs: the types MsgPipe's API speaks in come with it
// (formats, GATT profiles, Transport's errors and receipts, end-to-end keys and key files, request serving).
// The Bluetooth backends stay behind MsgPipe's own types.
@_exported import Exchange
@_exported import Framing
@_exported import GATT
@_exported import Secure
@_exported import Transport
