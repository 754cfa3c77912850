import MsgPipe
import ArgumentParser

/// The LE connection parameters and PHY of `send`, `listen` and `serve`: as central (`--to`) what the kernel
/// puts into its LE Create Connection to the peer; as peripheral what it asks each central for. Validated up
/// front: a value that breaks a rule is a usage error (64) naming the rule.
struct ConnectionParameterOptions: ParsableArguments {
    @Option(name: .customLong("conn-interval"), help: ArgumentHelp("""
        Connection interval in milliseconds, one value or a range (7.5 to 4000 in steps of 1.25). Central: \
        asked for in the connection; peripheral: asked of each central (the adapter's default while running). \
        Kernel backend; needs CAP_NET_ADMIN.
        """, valueName: "MIN[-MAX]"))
    var interval: String?

    @Option(name: .customLong("conn-latency"), help: ArgumentHelp(
        "Connection events the peripheral may skip (0 to 499).", valueName: "N"))
    var latency: String?

    @Option(name: .customLong("supervision-timeout"), help: ArgumentHelp("""
        Milliseconds without a packet before the link counts as lost (100 to 32000 in steps of 10, longer than \
        (1 + latency) x max interval x 2; default: the adapter's, or the shortest allowed).
        """, valueName: "MS"))
    var supervisionTimeout: String?

    @Option(name: .customLong("phy"), help: ArgumentHelp(
        "The LE PHY to prefer for connections: 1m, 2m or coded (the controller and the peer decide).",
        valueName: "PHY"))
    var phy: String?

    func validate() throws {
        _ = try request()
    }

    /// The request, nil when nothing was given; a broken rule is a `ValidationError` with the rule's text.
    func request() throws(ValidationError) -> ConnectionParameterRequest? {
        do throws(ConnectionParametersError) {
            let request = try ConnectionParameterRequest(
                interval: interval, latency: latency, supervisionTimeout: supervisionTimeout, phy: phy)
            return request.isEmpty ? nil : request
        } catch {
            throw ValidationError(error.description)
        }
    }
}
