// MsgPipeCore is the connection library without a backend: pipes, servers, the protocol a backend implements
// (`PipeStack`), connecting and reconnecting over any stack. It imports no OS module. The types its API speaks
// in come with it (formats, GATT profiles, Transport's errors and receipts, end-to-end keys, request serving,
// the pure Bluetooth values). Reading key files and the journal on disk are ExchangePosix's, which MsgPipe adds.
@_exported public import BluetoothCore
@_exported public import Exchange
@_exported public import Framing
@_exported public import GATT
@_exported public import Secure
@_exported public import Transport
