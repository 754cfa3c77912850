public import Testing

/// Records an issue unless `actual` holds exactly `expected`'s bytes, naming both lengths and the first offset where
/// they differ; returns whether they matched. For payloads, use it instead of `#expect(actual == expected)`: on two
/// byte arrays that differ, `#expect` computes an edit script for its message, which for a few MiB runs for minutes
/// and holds one of the pool's threads all that time. This is linear.
///
/// ```swift
/// expectSameBytes(result.stdout, big, "the 1 MiB message")
/// ```
@discardableResult
public func expectSameBytes(
    _ actual: some Collection<UInt8>, _ expected: some Collection<UInt8>, _ what: String = "the bytes",
    sourceLocation: SourceLocation = #_sourceLocation
) -> Bool {
    var offset = 0
    for (a, e) in zip(actual, expected) {
        if a != e { break }
        offset += 1
    }
    if offset == actual.count, offset == expected.count { return true }
    let difference = offset < min(actual.count, expected.count) ? "they first differ at byte \(offset)" : "one is the other's first \(offset) bytes"
    Issue.record("\(what): \(actual.count) bytes, expected \(expected.count); \(difference)", sourceLocation: sourceLocation)
    return false
}

/// As above, for a value that may be missing: nil records "nothing arrived".
@discardableResult
public func expectSameBytes(
    _ actual: (some Collection<UInt8>)?, _ expected: some Collection<UInt8>, _ what: String = "the bytes",
    sourceLocation: SourceLocation = #_sourceLocation
) -> Bool {
    guard let actual else {
        Issue.record("\(what): nothing arrived, expected \(expected.count) bytes", sourceLocation: sourceLocation)
        return false
    }
    return expectSameBytes(actual, expected, what, sourceLocation: sourceLocation)
}
