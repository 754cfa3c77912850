import Logging
import MsgPipe
import Simulator

/// `msgpipe bench` on a real link (`--link unix:PATH`, or Bluetooth), over the library's ``PipeBenchmark``:
/// - as the central (`--to`, default): `centrals` concurrent central connections from this process, each
///   sending `messages` messages of `size` bytes to a running `msgpipe listen` (the peripheral receives);
/// - as the peripheral (`--name`, `--role peripheral`): serves the msgpipe service, waits until `centrals`
///   centrals (`msgpipe listen --to NAME`) subscribed, then sends the messages to every one of them at once
///   by notification (the centrals receive), as `send --name` does.
struct BenchLink {
    let link: LinkOptions
    let role: LinkRole
    let size: Int
    let messages: Int
    let centrals: Int
    let seed: UInt64
    /// The connection parameters to ask for over Bluetooth (nil: the system's). No default: whoever makes a
    /// bench says which, so none are dropped unsaid.
    let connection: ConnectionParameterOptions?
    /// Several `--to`: central `i` connects to `peers[i]` (empty: every central to the one listener).
    var peers: [String] = []

    /// Runs every transfer at once; returns their results in order and the wall time of the transfers (as
    /// the peripheral: from the first transfer's start), or nil when the peripheral could not serve or not
    /// every central subscribed (said on standard error). A transfer that stopped early names why in
    /// `failures` (by index).
    func run() async -> (report: PipeBenchmark.Report, failures: [Int: String])? {
        var logger = Logger(label: "msgpipe.bench")
        logger.logLevel = .warning
        let options: MessagePipe.Options
        do {
            var made = try link.pipeOptions(format: .msgpipe, verbose: false, connection: connection)
            made.logger = logger
            options = made
        } catch {
            printError((role == .peripheral ? "cannot serve on \(link.displayName): " : "") + "\(cli: error)")
            return nil
        }
        let (size, seed, messages) = (size, seed, messages)
        // The simulator's deterministic contents for the seed (transfer `i` uses seed + i).
        let bench = PipeBenchmark(size: size, messages: messages) { transfer, message in
            TransferScenario(link: BLELinkConfiguration(), seed: seed &+ UInt64(transfer), messageSize: size,
                             messageCount: messages).message(message)
        }
        if role == .peripheral {
            do {
                let report = try await bench.sendAsPeripheral(try link.acceptor(options), centrals: centrals) { printError($0) }
                return (report, failures(report))
            } catch let error as PipeBenchmark.PeripheralError {
                printError("\(error)")
            } catch {
                printError("cannot serve on \(link.displayName): \(cli: error)")
            }
            return nil
        }
        var connectors: [PipeConnector] = []
        for index in 0 ..< centrals {
            do {
                connectors.append(peers.isEmpty ? try link.connector(options) : PipeConnector(to: PipeAddress(peers[index]), options: options))
            } catch {
                printError(link.connectFailure(error))
                return nil
            }
        }
        let report = await bench.sendAsCentrals(connectors)
        return (report, failures(report))
    }

    /// Each failed transfer's line, in the CLI's words.
    private func failures(_ report: PipeBenchmark.Report) -> [Int: String] {
        var lines: [Int: String] = [:]
        for result in report.results {
            switch result.failure {
            case nil: continue
            case let .connect(error)?:
                lines[result.index] = peers.isEmpty ? link.connectFailure(error) : "cannot connect to \(peers[result.index]): \(cli: error)"
            case let .message(index, error)?: lines[result.index] = "message \(index): \(cli: error)"
            case let .tooLarge(limit)?: lines[result.index] = "--size \(size) exceeds the listener's maximum message size of \(limit)"
            }
        }
        return lines
    }
}
