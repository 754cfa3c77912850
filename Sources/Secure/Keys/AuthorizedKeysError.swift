/// Why the text of an authorized-keys file was refused. Lines count from 1; the description is printed by
/// the CLI as is.
public enum AuthorizedKeysError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A line that is not blank, a comment, or `KEY NAME`.
    case badLine(line: Int, reason: String)
    /// The same key on two lines.
    case duplicateKey(line: Int, firstLine: Int)
    /// The same name on two lines.
    case duplicateName(String, line: Int, firstLine: Int)

    public var description: String {
        switch self {
        case let .badLine(line, reason): "line \(line): \(reason)"
        case let .duplicateKey(line, firstLine): "line \(line): the key of line \(firstLine) again"
        case let .duplicateName(name, line, firstLine): "line \(line): the name '\(name)' of line \(firstLine) again"
        }
    }
}
