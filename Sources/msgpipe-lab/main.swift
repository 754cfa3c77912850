// msgpipe-lab: the lab's tool, never installed with msgpipe. It runs msgpipe's own commands with fault
// injection, and the raw ATT probes the lab uses below GATT:
//
//     msgpipe-lab send --kill-after-bytes 400000 --to kitchen big.bin     # SIGKILL itself mid-transfer
//     msgpipe-lab send --stop-after-bytes 400000 --to kitchen big.bin     # SIGSTOP itself once, mid-transfer
//     msgpipe-lab listen --kill-after-bytes 300000 --name kitchen          # SIGKILL itself mid-message
//     msgpipe-lab listen --drop-after-bytes 600000 --name kitchen          # drop each connection once
//     msgpipe-lab listen --kill-after-kept 1 --out-dir inbox ...           # SIGKILL itself once a message is
//                                                                          # kept, before it is acknowledged
//     msgpipe-lab request --inject tamper|replay ...                       # a sealed request changed in flight
//     msgpipe-lab lab-probe connect|serve|gatt-serve|gatt-send ...         # raw ATT / GATT probes
import Glibc
import MsgPipeCLI
import Synchronization

var arguments = Array(CommandLine.arguments.dropFirst())
var taps = CommandTaps()

/// Removes `--NAME VALUE` (or `--NAME=VALUE`) from `arguments` and returns VALUE.
@MainActor func takeOption(_ name: String) -> String? {
    for (index, argument) in arguments.enumerated() {
        if argument == "--\(name)", index + 1 < arguments.count {
            let value = arguments[index + 1]
            arguments.removeSubrange(index ... index + 1)
            return value
        }
        if argument.hasPrefix("--\(name)=") {
            arguments.remove(at: index)
            return String(argument.dropFirst(name.count + 3))
        }
    }
    return nil
}

func usage(_ message: String) -> Never {
    BluetoothDiagnostics.print("msgpipe-lab: \(message)")
    exit(64)
}

// --kill-after-bytes N: send SIGKILLs itself once N bytes went out; listen (either role) once the packets it
// received, over all its connections, came to N bytes.
if let text = takeOption("kill-after-bytes") {
    guard let limit = Int(text), limit >= 0 else { usage("--kill-after-bytes takes a byte count") }
    if arguments.first == "listen" {
        taps.received = KillAfterBytes(limit: limit).observe
    } else {
        taps.sentBytes = { sent in if sent >= limit { kill(getpid(), SIGKILL) } }
    }
}
if let text = takeOption("stop-after-bytes") {
    guard let limit = Int(text), limit >= 0 else { usage("--stop-after-bytes takes a byte count") }
    guard taps.sentBytes == nil, taps.received == nil else {
        usage("--stop-after-bytes and --kill-after-bytes exclude each other")
    }
    // Once: after a SIGCONT the transfer goes on (and may resume) without stopping again.
    let stopped = Atomic<Bool>(false)
    taps.sentBytes = { sent in
        if sent >= limit, !stopped.exchange(true, ordering: .relaxed) { kill(getpid(), SIGSTOP) }
    }
}
if let text = takeOption("drop-after-bytes") {
    guard let limit = Int(text), limit > 0 else { usage("--drop-after-bytes takes a byte count") }
    guard taps.received == nil else { usage("--drop-after-bytes and --kill-after-bytes exclude each other") }
    taps.received = DropAfterBytes(limit: limit).observe
}
if let text = takeOption("kill-after-kept") {
    guard let limit = Int(text), limit > 0 else { usage("--kill-after-kept takes a message count") }
    taps.kept = { kept in if kept >= limit { kill(getpid(), SIGKILL) } }
}
if let text = takeOption("inject") {
    guard let fault = RequestFault(rawValue: text) else { usage("--inject takes tamper or replay") }
    taps.request = fault.request
}
CommandTaps.current = taps

if arguments.first == "lab-probe" {
    await runAsRoot(LabProbeCommand.self, Array(arguments.dropFirst()))
} else {
    await MsgPipeCommand.run(arguments)
}
