/// The ASCII markers of the legacy format.
enum LegacyMarkers {
    static let start = Array("Start".utf8)
    static let end = Array("End".utf8)
}
