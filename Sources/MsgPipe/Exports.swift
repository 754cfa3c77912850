// `import MsgPipe` is all a program that moves messages needs: the connection library (MsgPipeCore, with the
// types its API speaks in: formats, GATT profiles, Transport's errors and receipts, end-to-end keys, request
// serving, the Bluetooth values), Exchange's OS side (key files, the journal in a state directory, the command
// runner) and msgpipe's own backends with the entry points that pick one. The backends' OS bindings (BLELink,
// BlueZLink, SDBus) stay behind MsgPipe's own types.
@_exported public import ExchangePosix
@_exported public import MsgPipeCore
