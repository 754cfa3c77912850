/// What ``RequestServer`` did with one request (serve prints it as a JSON line with `--json`).
public struct HandledRequest: Sendable, Equatable {
    /// The request id ("-" when the envelope was malformed).
    public var id: String
    public var status: ResponseStatus
    public var exitCode: UInt8
    /// True when the command ran for this request (false for a retry answered from the journal).
    public var ranCommand: Bool
    /// True when the response came from the journal (a retried id).
    public var fromJournal: Bool
    public var requestBytes: Int
    public var responseBytes: Int
    /// Why the request was refused or failed, if it was.
    public var note: String?
}

extension HandledRequest {
    /// The request as one JSON object on one line, keys sorted, `note` left out: what `msgpipe serve --json`
    /// prints and `serve --mqtt` publishes (``RequestServer`` events carry it, so a program reports the same).
    /// The id is a ``RequestID``'s text and the status a fixed word, so no string needs escaping.
    ///
    /// ```swift
    /// await server.serveRequests(with: requests) { event in
    ///     if case let .handled(request) = event { print(request.jsonLine) }
    /// }
    /// ```
    public var jsonLine: String {
        "{\"event\":\"request\",\"exitCode\":\(exitCode),\"fromJournal\":\(fromJournal),\"id\":\"\(id)\","
            + "\"ranCommand\":\(ranCommand),\"requestBytes\":\(requestBytes),\"responseBytes\":\(responseBytes),"
            + "\"status\":\"\(status)\"}"
    }
}
