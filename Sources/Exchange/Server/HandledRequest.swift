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
