public import Exchange
public import MsgPipeCore
import ServiceLifecycle
import Synchronization

extension PipeServer {
    /// Serves `acceptor`'s centrals with `requests` until `connections` centrals were served (nil: no limit),
    /// serving failed, or SIGINT/SIGTERM (also one during start) shut it down gracefully: no new central, a
    /// running handler is cancelled (a command's process group killed, its request journaled as started only),
    /// connections in progress get `drainTimeout` to end, the socket file goes and advertising stops. Returns
    /// true when a signal ended it; throws why serving could not start or failed. Catches the signals only while
    /// it runs; one per process.
    ///
    /// ```swift
    /// let answers = try RequestServer(stateDirectory: "/var/lib/till") { body in receipt(for: body) }
    /// try await PipeServer.serveRequestsUntilShutdown(PipeAcceptor(at: .bluetooth("till"), options: options), with: answers)
    /// ```
    @discardableResult
    public static func serveRequestsUntilShutdown(
        _ acceptor: any LinkAcceptor, with requests: RequestServer, connections: Int? = nil,
        idleTimeout: Duration? = nil, drainTimeout: Duration = .seconds(15),
        onServing: @escaping @Sendable (PipeServer) -> Void = { _ in },
        onEvent: @escaping @Sendable (RequestServer.Event) -> Void = { _ in }
    ) async throws -> Bool {
        let signalled = Flag()
        let serving = ClosureService {
            let server = try await PipeServer.serve(acceptor, connections: connections)
            onServing(server)
            await cancelWhenGracefulShutdown {
                await server.serveRequests(with: requests, idleTimeout: idleTimeout, onEvent: onEvent)
            }
            guard Task.isShuttingDownGracefully else {
                if let failure = server.failure { throw failure }
                return
            }
            await server.close()
            await server.waitUntilNoCentrals(timeout: drainTimeout)
            signalled.raised.withLock { $0 = true }
        }
        var logger = acceptor.options.logger
        logger.logLevel = max(logger.logLevel, .notice)  // the group's own lines are debug detail
        // The run ends when the service does; a Bluetooth accept still blocked in its thread then ends with the
        // process.
        try await ServiceGroup(configuration: ServiceGroupConfiguration(
            services: [.init(service: serving, successTerminationBehavior: .gracefullyShutdownGroup)],
            gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        ).run()
        return signalled.raised.withLock { $0 }
    }

    private final class Flag: Sendable {
        let raised = Mutex(false)
    }
}
